#include "collect/rdma_counters.h"

#include <algorithm>
#include <cstdlib>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

void ReadDir(const std::string& dir, std::string_view prefix, model::RdmaPort* port) {
  auto names = ListDirectory(dir);
  if (!names.ok()) return;
  for (const auto& name : *names) {
    auto text = ReadFileToString(dir + "/" + name);
    if (!text.ok()) continue;  // some counters are write-only or absent on a port
    if (auto v = ParseInt64(Trim(*text)); v && *v >= 0) port->counters[std::string(prefix) + name] = static_cast<uint64_t>(*v);
  }
}

}  // namespace

std::vector<model::RdmaPort> ReadRdmaCounters(const std::string& sysfs_root) {
  std::string root = sysfs_root;
  if (root.empty()) {
    const char* env = std::getenv("GPUNOISE_SYSFS_ROOT");
    root = env && *env ? env : "/sys";
  }
  std::vector<model::RdmaPort> out;
  const std::string base = root + "/class/infiniband";
  auto devices = ListDirectory(base);
  if (!devices.ok()) return out;
  std::sort(devices->begin(), devices->end());
  for (const auto& dev : *devices) {
    auto ports = ListDirectory(base + "/" + dev + "/ports");
    if (!ports.ok()) continue;
    std::sort(ports->begin(), ports->end());
    for (const auto& p : *ports) {
      auto n = ParseInt64(p);
      if (!n || *n < 0) continue;
      model::RdmaPort port{dev, static_cast<uint32_t>(*n), {}};
      std::string dir = base + "/" + dev + "/ports/" + p;
      ReadDir(dir + "/counters", "", &port);
      ReadDir(dir + "/hw_counters", "hw.", &port);
      if (!port.counters.empty()) out.push_back(std::move(port));
    }
  }
  return out;
}

}  // namespace gpunoise::collect
