// The kernel log lines that belong to a link event: messages naming the
// same device, logged near the event's time. A driver logs its own view of
// a link change ("mlx5_core 0000:3b:00.0 eth0: Link down", "ice
// 0000:5e:00.0 ens1: NIC Link is Up 100 Gbps Full Duplex"), a bridge or bond
// the consequence ("br0: port 1(veth0) entered disabled state"); the
// netlink notification says when and what, the log line says why. Pure
// logic over typed records (model::LinkEvent, model::KernelLogEntry), so
// the recorder (trace instants) and the report (link_flap evidence) join
// them the same way.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/kernel_log.h"
#include "model/nic_health.h"

namespace gpunoise::model {

// Whether a kernel log record is about the network device `netdev`, whose
// parent bus address is `bus_info` (ethtool -i bus-info, "0000:3b:00.0";
// empty when unknown):
//  - its DEVICE= field names the parent ("+pci:0000:3b:00.0"): what
//    netdev_printk and dev_printk put there for a device with a parent;
//  - its classified device (`about`) is `netdev` or `bus_info`;
//  - or its text names `netdev` as a whole word (a netdev without a parent,
//    veth, bridge ports, bonds, logs through plain printk with the name in
//    the text and no DEVICE= at all).
// DEVICE=n<ifindex> (a netdev's own struct device) is not taken alone: an
// ifindex is only unique inside one network namespace, and the kernel log
// is the whole machine's.
// Records written from user space (facility != 0) never match.
bool KernelLogNamesDevice(const KernelLogEntry& entry, std::string_view netdev, std::string_view bus_info);

// Whether `text` contains `name` as a whole interface name: the characters
// around it are not ones an interface name is made of ("eth0" is in
// "eth0: Link down" and "port 1(eth0) entered", not in "eth0.100" or
// "veth0").
bool TextNamesInterface(std::string_view text, std::string_view name);

struct LinkLogMatch {
  size_t event = 0;  // index into the events
  size_t entry = 0;  // index into the kernel log
};

// Each kernel log record that names a device goes to the link event of that
// device nearest in time, when one is within `window_ns` either side (a
// driver may log before the kernel announces the change, or from a service
// task a second later). `bus_info` maps an interface name to its parent's
// bus address. Sorted by event, then by the record's time.
std::vector<LinkLogMatch> JoinLinkKernelLog(std::span<const LinkEvent> events, std::span<const KernelLogEntry> log,
                                            const std::map<std::string, std::string>& bus_info, uint64_t window_ns);

// How far from a link event a kernel log line may be to belong to it
// (analysis threshold "nic.link_log_window" has the same default).
inline constexpr uint64_t kDefaultLinkLogWindowNs = 2'000'000'000;

}  // namespace gpunoise::model
