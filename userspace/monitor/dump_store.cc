#include "monitor/dump_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/files.h"
#include "common/log.h"
#include "common/strings.h"

namespace gpunoise::monitor {
namespace {

constexpr std::string_view kPrefix = "gpunoise-flight-";
constexpr std::string_view kSuffix = ".pftrace";

}  // namespace

DumpStore::DumpStore(std::string dir, uint32_t max_dumps, uint64_t max_bytes)
    : dir_(std::move(dir)), max_dumps_(std::max<uint32_t>(1, max_dumps)), max_bytes_(max_bytes) {}

Status DumpStore::Prepare() const {
  struct stat st {};
  if (::stat(dir_.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return MakeError("failed to use dump directory {}: not a directory", dir_);
  } else if (::mkdir(dir_.c_str(), 0750) != 0 && errno != EEXIST) {
    return MakeError("failed to create dump directory {}: {}", dir_, std::strerror(errno));
  }
  if (::access(dir_.c_str(), W_OK) != 0)
    return MakeError("failed to use dump directory {}: {}", dir_, std::strerror(errno));
  return OkStatus();
}

std::vector<DumpFile> DumpStore::List() const {
  std::vector<DumpFile> out;
  auto entries = ListDirectory(dir_);
  if (!entries.ok()) return out;
  for (const std::string& name : *entries) {
    if (!StartsWith(name, kPrefix) || !EndsWith(name, kSuffix)) continue;
    DumpFile f;
    f.path = dir_ + "/" + name;
    struct stat st {};
    if (::stat(f.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    f.bytes = static_cast<uint64_t>(st.st_size);
    f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    out.push_back(std::move(f));
  }
  // Names start with the UTC time, so name order is age order; mtime
  // breaks nothing when names tie (same second, -2 suffix).
  std::sort(out.begin(), out.end(), [](const DumpFile& a, const DumpFile& b) {
    return a.mtime_ns != b.mtime_ns ? a.mtime_ns < b.mtime_ns : a.path < b.path;
  });
  return out;
}

std::string DumpStore::NewPath(const std::string& detector, int64_t unix_time_ns) const {
  time_t secs = static_cast<time_t>(unix_time_ns / 1'000'000'000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  std::string base = dir_ + "/" + std::string(kPrefix) + stamp + "-" + detector;
  std::string path = base + std::string(kSuffix);
  for (int n = 2; PathExists(path) && n < 1000; ++n) path = base + "-" + std::to_string(n) + std::string(kSuffix);
  return path;
}

size_t DumpStore::MakeRoom() const {
  std::vector<DumpFile> dumps = List();
  size_t deleted = 0;
  for (size_t i = 0; dumps.size() - i >= max_dumps_ && i < dumps.size(); ++i) {
    if (::unlink(dumps[i].path.c_str()) == 0) {
      ++deleted;
      log::Info("monitor: deleted old dump {} (max-dumps {})", dumps[i].path, max_dumps_);
    }
  }
  return deleted;
}

size_t DumpStore::EnforceBytes(const std::string& written, bool* too_big) const {
  *too_big = false;
  std::vector<DumpFile> dumps = List();
  uint64_t total = 0;
  for (const DumpFile& f : dumps) total += f.bytes;
  auto it = std::find_if(dumps.begin(), dumps.end(), [&](const DumpFile& f) { return f.path == written; });
  if (it != dumps.end() && it->bytes > max_bytes_) {
    *too_big = true;
    ::unlink(written.c_str());
    return 0;
  }
  size_t deleted = 0;
  for (const DumpFile& f : dumps) {
    if (total <= max_bytes_) break;
    if (f.path == written) continue;
    if (::unlink(f.path.c_str()) == 0) {
      total -= f.bytes;
      ++deleted;
      log::Info("monitor: deleted old dump {} (max-dump-bytes {})", f.path, HumanBytes(max_bytes_));
    }
  }
  return deleted;
}

}  // namespace gpunoise::monitor
