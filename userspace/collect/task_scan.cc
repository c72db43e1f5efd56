#include "collect/task_scan.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "common/files.h"

namespace gpunoise::collect {
namespace {

bool ParseTid(std::string_view s, int* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out > 0;
}

}  // namespace

std::vector<int> ThreadsOfProcess(int pid) {
  std::vector<int> tids;
  auto entries = ListDirectory("/proc/" + std::to_string(pid) + "/task");
  if (!entries.ok()) return tids;
  for (const std::string& name : *entries) {
    int tid = 0;
    if (ParseTid(name, &tid)) tids.push_back(tid);
  }
  return tids;
}

std::vector<int> ThreadsOfCgroupTree(const std::string& path) {
  std::vector<int> tids;
  std::error_code ec;
  auto read_dir = [&tids](const std::filesystem::path& dir) {
    std::ifstream in(dir / "cgroup.threads");
    int tid = 0;
    while (in >> tid)
      if (tid > 0) tids.push_back(tid);
  };
  read_dir(path);
  // Cgroups come and go while we walk: skip what vanished.
  std::filesystem::recursive_directory_iterator it(
      path, std::filesystem::directory_options::skip_permission_denied, ec);
  for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_symlink(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec)) read_dir(it->path());
  }
  return tids;
}

}  // namespace gpunoise::collect
