#include "collect/driver_tracepoints.h"

#include <unistd.h>

#include <climits>
#include <map>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

// The last path component a symlink points to ("../../module/mlx5_core" ->
// "mlx5_core"), or empty.
std::string LinkBasename(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  std::string_view target(buf, static_cast<size_t>(n));
  size_t slash = target.rfind('/');
  return std::string(slash == std::string_view::npos ? target : target.substr(slash + 1));
}

}  // namespace

std::vector<NetdevDriver> FindNetdevDrivers(const std::string& sysfs_root) {
  std::vector<NetdevDriver> out;
  const std::string net = sysfs_root + "/class/net/";
  auto devices = ListDirectory(net);
  if (!devices.ok()) return out;
  for (const std::string& dev : *devices) {
    NetdevDriver d;
    d.device = dev;
    d.driver = LinkBasename(net + dev + "/device/driver");
    if (d.driver.empty()) continue;  // no bus device: veth, bridges, lo
    d.module = LinkBasename(net + dev + "/device/driver/module");
    out.push_back(std::move(d));
  }
  return out;
}

std::map<std::string, std::set<std::string>> TracepointsByModule(std::string_view kallsyms) {
  // "ffffffffc0a1b2c0 t __traceiter_mlx5_fs_add_fg\t[mlx5_core]"
  constexpr std::string_view kPrefix = "__traceiter_";
  std::map<std::string, std::set<std::string>> out;
  size_t pos = 0;
  while ((pos = kallsyms.find(kPrefix, pos)) != std::string_view::npos) {
    size_t line_end = kallsyms.find('\n', pos);
    if (line_end == std::string_view::npos) line_end = kallsyms.size();
    std::string_view rest = kallsyms.substr(pos + kPrefix.size(), line_end - pos - kPrefix.size());
    pos = line_end;
    // The symbol must start the name column (not "__pfx___traceiter_").
    size_t start = kallsyms.rfind(' ', pos - rest.size() - kPrefix.size());
    if (start == std::string_view::npos || start + 1 != pos - rest.size() - kPrefix.size()) continue;
    size_t open = rest.find('[');
    if (open == std::string_view::npos) continue;  // built into the kernel
    size_t close = rest.find(']', open);
    if (close == std::string_view::npos) continue;
    std::string event(Trim(rest.substr(0, open)));
    std::string module(rest.substr(open + 1, close - open - 1));
    if (!event.empty() && !module.empty()) out[module].insert(std::move(event));
  }
  return out;
}

std::vector<std::string> LocateTracefsEvents(const std::string& tracefs, const std::set<std::string>& events) {
  std::vector<std::string> out;
  auto systems = ListDirectory(tracefs + "/events");
  if (!systems.ok()) return out;
  for (const std::string& system : *systems) {
    auto names = ListDirectory(tracefs + "/events/" + system);
    if (!names.ok()) continue;  // files such as "enable"
    for (const std::string& e : *names)
      if (events.count(e)) out.push_back(system + "/" + e);
  }
  return out;
}

std::vector<DriverEventSystems> DiscoverDriverEventSystems(const std::string& sysfs_root, const std::string& tracefs,
                                                           std::string_view kallsyms) {
  std::map<std::string, DriverEventSystems> by_module;
  for (const NetdevDriver& d : FindNetdevDrivers(sysfs_root)) {
    if (d.module.empty()) continue;
    DriverEventSystems& m = by_module[d.module];
    m.module = d.module;
    m.devices.push_back(d.device);
  }
  if (by_module.empty()) return {};
  auto owned = TracepointsByModule(kallsyms);
  std::vector<DriverEventSystems> out;
  for (auto& [module, m] : by_module) {
    auto it = owned.find(module);
    if (it != owned.end()) {
      for (const std::string& se : LocateTracefsEvents(tracefs, it->second)) {
        m.systems.insert(se.substr(0, se.find('/')));
        ++m.events;
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace gpunoise::collect
