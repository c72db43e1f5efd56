#include "record/gpu/gpu_fragments.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/files.h"
#include "merge/trace_merger.h"
#include "record/gpu/cupti_drops.h"
#include "record/gpu/fragment_pid_translator.h"
#include "model/gpu_capture.h"

namespace gpunoise::gpu {
namespace {

std::optional<model::FragmentName> NameOf(const std::string& path) {
  auto slash = path.rfind('/');
  return model::ParseFragmentFileName(slash == std::string::npos ? path : path.substr(slash + 1));
}

// A process by its pid namespace and its pid there: two containers' pid 1
// are two processes. Names without a namespace are the host's.
using ProcessKey = std::pair<uint64_t, int>;
ProcessKey KeyOf(const model::FragmentName& n) {
  return {n.has_pid_ns ? n.pid_ns : model::kInitPidNsInode, n.pid};
}
std::optional<ProcessKey> KeyOf(const std::string& path) {
  auto name = NameOf(path);
  if (!name) return std::nullopt;
  return KeyOf(*name);
}

std::string DirOf(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The owner of each fragment's directory, looked up once per directory.
class DirOwners {
 public:
  Result<uid_t> Of(const std::string& path) {
    std::string dir = DirOf(path);
    auto it = owners_.find(dir);
    if (it != owners_.end()) return it->second;
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return MakeError("{}: {}", dir, std::strerror(errno));
    owners_[dir] = st.st_uid;
    return st.st_uid;
  }

 private:
  std::map<std::string, uid_t> owners_;
};

Result<UniqueFd> OpenChecked(const std::string& path, DirOwners& owners) {
  GN_ASSIGN_OR_RETURN(uid_t owner, owners.Of(path));
  return OpenFragment(path, owner);
}

// Each process's CUPTI dropped-record count as of its last fragment in
// `files` that states one. The count only grows, and a fragment states it
// only when it changed, so the latest fragment that states it has it.
std::map<ProcessKey, CuptiLossCounts> LatestDropCounts(const std::vector<std::string>& files, DirOwners& owners) {
  std::map<ProcessKey, CuptiLossCounts> out;
  // `files` is in flush order (each process's own fragments in time order):
  // walk it backwards.
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    auto key = KeyOf(*it);
    if (!key) continue;
    ProcessKey pid = *key;
    if (out.count(pid)) continue;
    // The reader takes a path: /proc/self/fd/N is the file already opened
    // and checked, not whatever the name leads to now.
    auto fd = OpenChecked(*it, owners);
    if (!fd.ok()) continue;
    CuptiLossCounts n = CuptiLossIn("/proc/self/fd/" + std::to_string(fd->get()));
    if (n.dropped_records) out[pid] = n;
  }
  return out;
}

}  // namespace

Result<UniqueFd> OpenFragment(const std::string& path, uid_t dir_owner) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP) return MakeError("{}: is a symbolic link", path);
    return MakeError("{}: {}", path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return MakeError("{}: {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return MakeError("{}: not a regular file", path);
  if (st.st_uid != dir_owner)
    return MakeError("{}: owned by uid {}, not by the directory's owner (uid {})", path, st.st_uid,
                     dir_owner);
  return fd;
}

Result<FragmentWindow> ListFragmentWindow(const std::string& dir, uint64_t from_ts, uint64_t to_ts) {
  GN_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0) return MakeError("{}: {}", dir, std::strerror(errno));
  // Sorted by flush time first: each fragment opens with a ClockSnapshot
  // taken at its flush (cupti/injection.cc names the file by that BOOTTIME
  // reading), and the trace processor reads snapshots in file order,
  // counting one whose BOOTTIME is below the last one of the same clock set
  // as invalid_clock_snapshots and dropping it. Process after process, the
  // second process's snapshots went back in time.
  std::vector<std::tuple<uint64_t, ProcessKey, std::string>> in, before;
  FragmentWindow out;
  for (const auto& name : names) {
    auto parsed = model::ParseFragmentFileName(name);
    if (!parsed) continue;
    // Late ones are never read; the others are checked before they are
    // listed, and again on the fd that is read (AppendGpuFragments).
    if (to_ts && parsed->flush_ts > to_ts) {
      ++out.late;
      continue;
    }
    if (auto fd = OpenFragment(dir + "/" + name, dst.st_uid); !fd.ok()) {
      out.refused.push_back(fd.error().message);
      continue;
    }
    if (parsed->flush_ts < from_ts) before.emplace_back(parsed->flush_ts, KeyOf(*parsed), dir + "/" + name);
    else in.emplace_back(parsed->flush_ts, KeyOf(*parsed), dir + "/" + name);
  }
  std::sort(in.begin(), in.end());
  std::sort(before.begin(), before.end());
  for (auto& [ts, pid, path] : in) out.files.push_back(std::move(path));
  for (auto& [ts, pid, path] : before) out.before.push_back(std::move(path));
  return out;
}

FragmentWindow ListFragmentWindows(const std::vector<std::string>& dirs, uint64_t from_ts, uint64_t to_ts) {
  FragmentWindow out;
  for (const std::string& dir : dirs) {
    auto one = ListFragmentWindow(dir, from_ts, to_ts);
    if (!one.ok()) {
      out.refused.push_back(one.error().message);
      continue;
    }
    out.files.insert(out.files.end(), one->files.begin(), one->files.end());
    out.before.insert(out.before.end(), one->before.begin(), one->before.end());
    out.refused.insert(out.refused.end(), one->refused.begin(), one->refused.end());
    out.late += one->late;
  }
  // One flush order across directories, as within one (clock snapshots).
  auto by_flush = [](const std::string& a, const std::string& b) {
    auto na = NameOf(a), nb = NameOf(b);
    return std::make_tuple(na->flush_ts, KeyOf(*na), a) < std::make_tuple(nb->flush_ts, KeyOf(*nb), b);
  };
  std::sort(out.files.begin(), out.files.end(), by_flush);
  std::sort(out.before.begin(), out.before.end(), by_flush);
  return out;
}

Result<std::vector<std::string>> ListGpuFragments(const std::string& dir, uint64_t from_ts,
                                                  uint64_t to_ts) {
  GN_ASSIGN_OR_RETURN(FragmentWindow window, ListFragmentWindow(dir, from_ts, to_ts));
  return std::move(window.files);
}

FragmentsAppended AppendGpuFragments(const std::vector<std::string>& files,
                                     perfetto::TraceMerger& merger,
                                     const std::vector<std::string>& before,
                                     FragmentPidTranslator* translator) {
  FragmentsAppended result;
  std::set<ProcessKey> pids;
  DirOwners owners;
  // Each process's last flush so far: a fragment holds what its process did
  // since then, the window its ids are looked up in.
  std::map<ProcessKey, uint64_t> last_flush;
  for (const auto& path : before)
    if (auto name = NameOf(path)) last_flush[KeyOf(*name)] = std::max(last_flush[KeyOf(*name)], name->flush_ts);
  for (const auto& path : files) {
    uint64_t before_packets = merger.packets();
    auto name = NameOf(path);
    bool rewrite = false;
    if (name && translator) {
      uint64_t& from = last_flush[KeyOf(*name)];
      rewrite = translator->Select(*name, from);
      from = name->flush_ts;
    }
    if (rewrite) merger.set_rewrite([translator](std::string_view p) { return translator->Rewrite(p); });
    else merger.set_rewrite({});
    auto fd = OpenChecked(path, owners);
    if (!fd.ok()) {
      ++result.files;
      ++result.unreadable;
      result.problems.push_back("refused " + fd.error().message);
      continue;
    }
    auto appended = merger.Append(std::move(fd).value(), path);
    uint64_t added = merger.packets() - before_packets;
    result.packets += added;
    ++result.files;
    // A process's first fragment in the window may be the library's note
    // that it stayed out (then it is its only one).
    if (name && !pids.count(KeyOf(*name))) {
      auto again = OpenChecked(path, owners);
      if (again.ok()) {
        if (auto off = CaptureOffIn("/proc/self/fd/" + std::to_string(again->get()))) {
          std::string where = name->has_pid_ns && name->pid_ns != model::kInitPidNsInode
                                  ? fmt::format(" in pid namespace {}", name->pid_ns)
                                  : std::string();
          auto colon = off->find(':');
          result.not_captured.push_back(off->substr(0, colon) + where + off->substr(colon));
        }
      }
    }
    if (name) pids.insert(KeyOf(*name));
    if (!appended.ok()) {
      // Nothing of it in the trace, or the part before the damage.
      if (added == 0) ++result.unreadable;
      else ++result.truncated;
      result.problems.push_back(appended.error().message);
    }
  }
  merger.set_rewrite({});
  result.processes = pids.size();
  std::map<ProcessKey, CuptiLossCounts> at_end = LatestDropCounts(files, owners);
  std::map<ProcessKey, CuptiLossCounts> at_start = LatestDropCounts(before, owners);
  for (const auto& [pid, n] : at_end) {
    CuptiLossCounts start = at_start.count(pid) ? at_start[pid] : CuptiLossCounts{};
    uint64_t dropped = n.dropped_records.value_or(0), dropped_before = start.dropped_records.value_or(0);
    if (dropped > dropped_before) result.cupti_dropped_records += dropped - dropped_before;
    if (n.chunks_not_written > start.chunks_not_written)
      result.chunks_not_written += n.chunks_not_written - start.chunks_not_written;
  }
  return result;
}

}  // namespace gpunoise::gpu
