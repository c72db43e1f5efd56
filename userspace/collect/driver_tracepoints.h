// Which tracefs event systems belong to the driver of each network device.
// The driver's module comes from sysfs (/sys/class/net/DEV/device/driver/
// module); which events a module owns comes from the kernel's own symbol
// table: every tracepoint has a `__traceiter_<event>` function (Linux 5.10+),
// and /proc/kallsyms names the module a symbol lives in ("[mlx5_core]").
// The event's system is the tracefs directory that holds it. A driver built
// into the kernel has no module tag, so for it (and when kallsyms is
// unreadable) the caller falls back to the known category list.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::collect {

struct NetdevDriver {
  std::string device;  // "eth0"
  std::string driver;  // "mlx5_core": the driver directory's name
  std::string module;  // "mlx5_core"; empty when the driver is built in
};

// The driver and module of every device under <sysfs_root>/class/net that
// has a bus device (virtual devices such as veth and lo have none).
std::vector<NetdevDriver> FindNetdevDrivers(const std::string& sysfs_root);

// Module -> names of the tracepoints it defines, from /proc/kallsyms text.
std::map<std::string, std::set<std::string>> TracepointsByModule(std::string_view kallsyms);

// "system/event" for each event of `events` found in tracefs (events/<system>/<event>).
std::vector<std::string> LocateTracefsEvents(const std::string& tracefs, const std::set<std::string>& events);

struct DriverEventSystems {
  std::string module;
  std::vector<std::string> devices;  // the devices it drives
  std::set<std::string> systems;     // tracefs systems holding its events
  size_t events = 0;
};

// Puts the three together: per module of a netdev's driver, the event
// systems it registers. Modules with no events are listed with empty
// systems; built-in drivers are left out.
std::vector<DriverEventSystems> DiscoverDriverEventSystems(const std::string& sysfs_root, const std::string& tracefs,
                                                           std::string_view kallsyms);

}  // namespace gpunoise::collect
