#include "cli_util.h"

#include <bpf/libbpf.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdarg>
#include <cstring>
#include <ctime>

#include "common/log.h"
#include "common/strings.h"

namespace gpunoise::cli {
namespace {

bool g_libbpf_verbose = false;

int LibbpfPrint(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG && !g_libbpf_verbose) return 0;
  if (level == LIBBPF_INFO && !g_libbpf_verbose) return 0;
  // Warnings that matter are reported by gpunoise itself, with context.
  if (level == LIBBPF_WARN && !g_libbpf_verbose) return 0;
  char buf[1024];
  vsnprintf(buf, sizeof(buf), format, args);
  std::string_view line = Trim(buf);
  log::Write(log::Level::kDebug, "libbpf: " + std::string(line));
  return 0;
}

}  // namespace

void InstallLibbpfLogger(bool verbose) {
  g_libbpf_verbose = verbose;
  if (verbose) log::SetLevel(log::Level::kDebug);
  libbpf_set_print(LibbpfPrint);
}

UniqueFd BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return UniqueFd(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

std::string ReadSignalName(int signal_fd) {
  signalfd_siginfo info{};
  if (::read(signal_fd, &info, sizeof(info)) != sizeof(info)) return "signal";
  switch (info.ssi_signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(info.ssi_signo);
  }
}

std::string JoinArgs(int argc, char** argv) {
  std::string out = "gpunoise";
  for (int i = 0; i < argc; ++i) {
    out += ' ';
    out += argv[i];
  }
  return out;
}

std::string DefaultTraceName() {
  char host[128] = {};
  ::gethostname(host, sizeof(host) - 1);
  time_t now = ::time(nullptr);
  struct tm tm {};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return std::string("gpunoise-") + host + "-" + stamp + ".pftrace";
}

}  // namespace gpunoise::cli

namespace gpunoise::cli {

std::string SelfExecutable() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("gpunoise");
}

}  // namespace gpunoise::cli
