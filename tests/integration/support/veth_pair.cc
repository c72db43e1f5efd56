#include "integration/support/veth_pair.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "integration/support/privileges.h"

extern char** environ;

namespace gpunoise::testing {
namespace {

constexpr const char* kNamespacePrefix = "gnt-";
constexpr const char* kNetnsDir = "/run/netns";

std::string IpBinary() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(p, X_OK) == 0) return p;
  return "ip";
}

bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// ETHTOOL_SGRO / ETHTOOL_STSO through the legacy ioctl, so the harness does
// not depend on the ethtool binary. Must run inside the device's namespace.
bool SetFeature(const std::string& dev, uint32_t cmd, bool on, std::string* error) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  ethtool_value value{};
  value.cmd = cmd;
  value.data = on ? 1 : 0;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, dev.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(&value);
  int rc = ::ioctl(fd, SIOCETHTOOL, &ifr);
  int err = errno;
  ::close(fd);
  if (rc != 0) {
    *error = "ethtool ioctl on " + dev + ": " + std::strerror(err);
    return false;
  }
  return true;
}

// XDP_PASS, or with `drop_percent` > 0: XDP_DROP when
// bpf_get_prandom_u32() % 100 < drop_percent. Raw instructions, so the
// harness needs no BPF object file.
int LoadXdpPass(int drop_percent, std::string* error) {
  struct bpf_insn pass[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  struct bpf_insn lossy[] = {
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_prandom_u32},
      {BPF_ALU64 | BPF_MOD | BPF_K, BPF_REG_0, 0, 0, 100},
      {BPF_JMP | BPF_JGE | BPF_K, BPF_REG_0, 0, 2, drop_percent},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_DROP},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  int fd = drop_percent > 0
               ? bpf_prog_load(BPF_PROG_TYPE_XDP, "gnt_xdp_lossy", "GPL", lossy, 7, nullptr)
               : bpf_prog_load(BPF_PROG_TYPE_XDP, "gnt_xdp_pass", "GPL", pass, 2, nullptr);
  if (fd < 0) *error = std::string("failed to load the XDP program: ") + std::strerror(-fd);
  return fd;
}

pid_t FindNapiThread(const std::string& dev) {
  // "napi/<dev>-<napi id>", cut to the 15 characters of a comm.
  std::string want = ("napi/" + dev + "-").substr(0, 15);
  DIR* d = ::opendir("/proc");
  if (!d) return 0;
  pid_t found = 0;
  while (dirent* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream comm(std::string("/proc/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name.compare(0, want.size(), want) == 0) {
      found = pid;
      break;
    }
  }
  ::closedir(d);
  return found;
}

std::string HexMask(int cpu) {
  // rps_cpus takes a hex CPU mask, comma-separated in 32-bit groups.
  std::vector<uint32_t> words(static_cast<size_t>(cpu / 32 + 1), 0);
  words[static_cast<size_t>(cpu / 32)] = 1u << (cpu % 32);
  std::ostringstream out;
  for (size_t i = words.size(); i-- > 0;) {
    out << std::hex << words[i];
    if (i) out << ",";
  }
  return out.str();
}

}  // namespace

int RunCommand(const std::vector<std::string>& argv, std::string* output) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipefd[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  if (output) *output = text;
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int CleanupStaleNetworkNamespaces() {
  DIR* d = ::opendir(kNetnsDir);
  if (!d) return 0;
  std::vector<std::string> stale;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(kNamespacePrefix, 0) != 0) continue;
    pid_t pid = static_cast<pid_t>(std::atoi(name.c_str() + std::strlen(kNamespacePrefix)));
    if (pid > 0 && pid != ::getpid() && !ProcessAlive(pid)) stale.push_back(name);
  }
  ::closedir(d);
  int removed = 0;
  for (const auto& name : stale)
    if (RunCommand({IpBinary(), "netns", "del", name}) == 0) ++removed;
  return removed;
}

std::unique_ptr<VethPair> VethPair::Create(const VethPairOptions& options, std::string* error) {
  // `ip netns exec` first makes "/" a slave mount (EINVAL when it is no
  // mount point): say why in one line instead.
  if (std::string why = RootNotMountPointReason("ip netns exec"); !why.empty()) {
    if (error) *error = why;
    return nullptr;
  }
  CleanupStaleNetworkNamespaces();
  static std::atomic<int> counter{0};
  int n = counter++ % 36;
  char tag = static_cast<char>(n < 10 ? '0' + n : 'a' + (n - 10));
  pid_t pid = ::getpid();
  char hex[8];
  std::snprintf(hex, sizeof(hex), "%06x", static_cast<unsigned>(pid) & 0xffffff);
  std::unique_ptr<VethPair> pair(new VethPair());
  std::string base = std::string(kNamespacePrefix) + std::to_string(pid) + "-" + std::to_string(n);
  pair->sender_ns_ = base + "-s";
  pair->receiver_ns_ = base + "-r";
  pair->sender_dev_ = std::string("g") + hex + tag + "s";
  pair->receiver_dev_ = std::string("g") + hex + tag + "r";
  std::string local_error;
  if (!pair->Setup(options, &local_error)) {
    if (error) *error = local_error;
    return nullptr;  // the destructor removes what was made
  }
  return pair;
}

bool VethPair::Setup(const VethPairOptions& options, std::string* error) {
  const std::string ip = IpBinary();
  auto run = [&](std::vector<std::string> argv) {
    std::string out;
    if (RunCommand(argv, &out) != 0) {
      std::string cmd;
      for (const auto& a : argv) cmd += a + " ";
      *error = "failed: " + cmd + ": " + out;
      return false;
    }
    return true;
  };
  auto in_ns = [&](const std::string& ns, const std::string& shell) {
    return run({ip, "netns", "exec", ns, "sh", "-c", shell});
  };
  const std::string& s = sender_ns_;
  const std::string& r = receiver_ns_;
  if (!run({ip, "netns", "add", s}) || !run({ip, "netns", "add", r})) return false;
  // Made inside the namespaces: nothing is ever left in the host's.
  if (!run({ip, "link", "add", "name", sender_dev_, "address", "02:67:6e:00:00:01", "netns", s,
            "type", "veth", "peer", "name", receiver_dev_, "address", "02:67:6e:00:00:02", "netns",
            r}))
    return false;
  // No IPv6 (router solicitations, DAD) and static neighbours (no ARP): the
  // only packets on the link are the ones a test sends.
  for (const auto& [ns, dev] : {std::pair{s, sender_dev_}, std::pair{r, receiver_dev_}}) {
    if (!in_ns(ns, "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; "
                   "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"))
      return false;
  }
  if (!run({ip, "-n", s, "addr", "add", address(Side::kSender) + "/24", "dev", sender_dev_}) ||
      !run({ip, "-n", r, "addr", "add", address(Side::kReceiver) + "/24", "dev", receiver_dev_}) ||
      !run({ip, "-n", s, "neigh", "replace", address(Side::kReceiver), "lladdr",
            "02:67:6e:00:00:02", "dev", sender_dev_, "nud", "permanent"}) ||
      !run({ip, "-n", r, "neigh", "replace", address(Side::kSender), "lladdr", "02:67:6e:00:00:01",
            "dev", receiver_dev_, "nud", "permanent"}) ||
      !run({ip, "-n", s, "link", "set", "lo", "up"}) || !run({ip, "-n", r, "link", "set", "lo", "up"}))
    return false;

  if (options.napi == VethNapiMode::kGro) {
    bool gro = false, tso = false;
    RunIn(Side::kReceiver, [&] { gro = SetFeature(receiver_dev_, ETHTOOL_SGRO, true, error); });
    if (!gro) return false;
    RunIn(Side::kSender, [&] { tso = SetFeature(sender_dev_, ETHTOOL_STSO, false, error); });
    if (!tso) return false;
  } else if (options.napi == VethNapiMode::kXdp) {
    xdp_prog_fd_ = LoadXdpPass(options.xdp_drop_percent, error);
    if (xdp_prog_fd_ < 0) return false;
    bool ok = false;
    RunIn(Side::kReceiver, [&] {
      int ifindex = static_cast<int>(::if_nametoindex(receiver_dev_.c_str()));
      int rc = bpf_xdp_attach(ifindex, xdp_prog_fd_, XDP_FLAGS_DRV_MODE, nullptr);
      ok = rc == 0;
      if (!ok) *error = std::string("failed to attach XDP: ") + std::strerror(-rc);
    });
    if (!ok) return false;
  }
  if (!run({ip, "-n", s, "link", "set", sender_dev_, "up"}) ||
      !run({ip, "-n", r, "link", "set", receiver_dev_, "up"}))
    return false;

  if (options.rps_cpu >= 0 &&
      !in_ns(r, "echo " + HexMask(options.rps_cpu) + " > /sys/class/net/" + receiver_dev_ +
                    "/queues/rx-0/rps_cpus"))
    return false;
  if (options.napi_cpu >= 0) {
    if (options.napi == VethNapiMode::kNone) {
      *error = "threaded NAPI needs a NAPI mode (kGro or kXdp)";
      return false;
    }
    if (!in_ns(r, "echo 1 > /sys/class/net/" + receiver_dev_ + "/threaded")) return false;
    for (int i = 0; i < 100 && !napi_thread_; ++i) {
      napi_thread_ = FindNapiThread(receiver_dev_);
      if (!napi_thread_) ::usleep(10000);
    }
    if (!napi_thread_) {
      *error = "no threaded NAPI thread appeared for " + receiver_dev_;
      return false;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(options.napi_cpu, &set);
    if (::sched_setaffinity(napi_thread_, sizeof(set), &set) != 0) {
      *error = std::string("failed to pin the NAPI thread: ") + std::strerror(errno);
      return false;
    }
  }
  return true;
}

VethPair::~VethPair() {
  // Deleting a namespace deletes its devices (and the XDP attachment).
  const std::string ip = IpBinary();
  if (!sender_ns_.empty()) RunCommand({ip, "netns", "del", sender_ns_});
  if (!receiver_ns_.empty()) RunCommand({ip, "netns", "del", receiver_ns_});
  if (xdp_prog_fd_ >= 0) ::close(xdp_prog_fd_);
}

uint32_t VethPair::netns_inode(Side side) const {
  struct stat st {};
  if (::stat((std::string(kNetnsDir) + "/" + netns(side)).c_str(), &st) != 0) return 0;
  return static_cast<uint32_t>(st.st_ino);
}

uint32_t VethPair::ifindex(Side side) const {
  uint32_t index = 0;
  RunIn(side, [&] { index = ::if_nametoindex(device(side).c_str()); });
  return index;
}

bool VethPair::RunIn(Side side, const std::function<void()>& fn) const {
  bool joined = false;
  std::thread t([&] {
    int fd = ::open((std::string(kNetnsDir) + "/" + netns(side)).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    joined = ::setns(fd, CLONE_NEWNET) == 0;
    ::close(fd);
    if (joined) fn();
  });
  t.join();
  return joined;
}

std::map<std::string, uint64_t> VethPair::LinkStatistics(Side side) const {
  // sysfs shows the namespace of whoever mounted it, so read it through
  // "ip netns exec", which mounts the namespace's own.
  static constexpr const char* kNames[] = {"rx_packets", "rx_bytes",   "rx_dropped",
                                           "tx_packets", "tx_bytes",   "tx_dropped",
                                           "rx_errors",  "tx_errors"};
  std::vector<std::string> argv = {IpBinary(), "netns", "exec", netns(side), "cat"};
  for (const char* n : kNames)
    argv.push_back("/sys/class/net/" + device(side) + "/statistics/" + n);
  std::string out;
  std::map<std::string, uint64_t> stats;
  if (RunCommand(argv, &out) != 0) return stats;
  std::istringstream in(out);
  for (const char* n : kNames) {
    uint64_t v = 0;
    if (!(in >> v)) break;
    stats[n] = v;
  }
  return stats;
}

std::map<std::string, uint64_t> VethPair::SnmpCounters(Side side, const std::string& protocol) const {
  std::string out;
  std::map<std::string, uint64_t> counters;
  if (RunCommand({IpBinary(), "netns", "exec", netns(side), "cat", "/proc/net/snmp"}, &out) != 0)
    return counters;
  // Pairs of lines: "Udp: Name1 Name2 ..." then "Udp: 1 2 ...".
  std::istringstream in(out);
  std::string header, values;
  while (std::getline(in, header) && std::getline(in, values)) {
    if (header.rfind(protocol + ":", 0) != 0) continue;
    std::istringstream h(header), v(values);
    std::string name, skip;
    h >> skip;
    v >> skip;
    uint64_t value;
    while (h >> name && v >> value) counters[name] = value;
  }
  return counters;
}

}  // namespace gpunoise::testing
