#include "doctor/system_view.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/files.h"
#include "common/strings.h"
#include "common/unique_fd.h"

namespace gpunoise::doctor {
namespace {

// Linux follows at most 40 links per lookup (MAXSYMLINKS); so do we.
constexpr int kMaxSymlinks = 40;

std::vector<std::string> Components(std::string_view path) {
  std::vector<std::string> out;
  for (std::string_view part : Split(path, '/'))
    if (!part.empty() && part != ".") out.emplace_back(part);
  return out;
}

}  // namespace

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

std::string_view BaseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string DirName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

SystemView::SystemView(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_.empty()) root_.assign(1, '/');  // (not = "/": GCC 12 -Wrestrict false positive)
}

std::string SystemView::HostPath(std::string_view path) const {
  if (root_ == "/") return std::string(path);
  std::string out = root_;
  if (path.empty() || path.front() != '/') out += '/';
  out += path;
  return out;
}

std::string SystemView::Contained(std::string_view path) const {
  // The kernel would follow an absolute link from the root of *this*
  // machine; resolving inside the root first keeps every read in the view.
  if (IsLive()) return std::string(path);
  auto resolved = Resolve(path);
  return HostPath(resolved.ok() ? std::string_view(*resolved) : path);
}

std::string SystemView::ContainedLink(std::string_view path) const {
  // Resolves the directories but not the last component, which is the link.
  if (IsLive()) return std::string(path);
  return JoinPath(Contained(DirName(path)), BaseName(path));
}

Result<std::string> SystemView::Read(std::string_view path) const {
  return ReadFileToString(Contained(path));
}

std::optional<std::string> SystemView::ReadTrimmed(std::string_view path) const {
  auto text = Read(path);
  if (!text.ok()) return std::nullopt;
  return std::string(Trim(*text));
}

std::optional<int64_t> SystemView::ReadInt(std::string_view path) const {
  auto text = ReadTrimmed(path);
  if (!text) return std::nullopt;
  return ParseInt64(*text);
}

std::vector<std::string> SystemView::List(std::string_view path) const {
  auto names = ListDirectory(Contained(path));
  if (!names.ok()) return {};
  std::sort(names->begin(), names->end());
  return std::move(names).value();
}

bool SystemView::Exists(std::string_view path) const { return PathExists(Contained(path)); }

bool SystemView::IsSymlink(std::string_view path) const { return IsHostSymlink(ContainedLink(path)); }

Result<std::string> SystemView::ReadLink(std::string_view path) const { return ReadHostLink(ContainedLink(path)); }

bool SystemView::IsHostSymlink(const std::string& host) {
  struct stat st;
  return ::lstat(host.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

Result<std::string> SystemView::ReadHostLink(const std::string& host) {
  char buf[4096];
  ssize_t n = ::readlink(host.c_str(), buf, sizeof(buf) - 1);
  if (n < 0) return MakeError("failed to read link {}: {}", host, std::strerror(errno));
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> SystemView::Resolve(std::string_view path) const {
  std::vector<std::string> pending = Components(path);
  std::reverse(pending.begin(), pending.end());  // back() is the next component
  std::vector<std::string> done;  // resolved components: no links among them
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    std::string current = "/";
    for (const auto& d : done) current = JoinPath(current, d);
    std::string host = HostPath(current);
    if (!IsHostSymlink(host)) continue;
    if (++links > kMaxSymlinks) return MakeError("failed to resolve {}: too many links", path);
    GN_ASSIGN_OR_RETURN(std::string target, ReadHostLink(host));
    done.pop_back();
    if (!target.empty() && target.front() == '/') done.clear();
    std::vector<std::string> target_parts = Components(target);
    for (auto it = target_parts.rbegin(); it != target_parts.rend(); ++it) pending.push_back(*it);
  }
  std::string out = "/";
  for (const auto& part : done) out = JoinPath(out, part);
  return out;
}

Result<std::vector<std::string>> SystemView::ReadKernelLog() const {
  std::string host = Contained("/dev/kmsg");
  UniqueFd fd(::open(host.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return MakeError("failed to open {}: {}", host, std::strerror(errno));
  struct stat st;
  bool regular = ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode);
  std::string text;
  // /dev/kmsg returns one record per read (a record is under 8 KiB including
  // its dictionary); it fails with EAGAIN once the ring is drained and with
  // EPIPE when records we had not read yet were overwritten (then it moves on).
  char buf[16384];
  int overwritten = 0;
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
      if (!regular && text.back() != '\n') text += '\n';
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    if (errno == EPIPE && ++overwritten < 1000) continue;
    if (errno == EAGAIN) break;
    return MakeError("failed to read {}: {}", host, std::strerror(errno));
  }
  std::vector<std::string> records;
  for (std::string_view line : Split(text, '\n')) {
    // Continuation lines (" KEY=value") belong to the previous record's
    // dictionary; they never carry the message text.
    if (line.empty() || line.front() == ' ') continue;
    records.emplace_back(line);
  }
  return records;
}

}  // namespace gpunoise::doctor
