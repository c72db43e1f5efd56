#include "blackbox/event_set.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collect/nic_collector.h"
#include "common/files.h"
#include "common/unique_fd.h"

namespace gpunoise::blackbox {

const std::vector<std::string>& BaseEventSet() {
  static const std::vector<std::string> kEvents = {
      "irq/irq_handler_entry", "irq/irq_handler_exit",
      "irq/softirq_entry", "irq/softirq_exit", "irq/softirq_raise",
      "napi/napi_poll",
      "net/netif_receive_skb", "net/net_dev_xmit", "net/net_dev_xmit_timeout",
      "skb/kfree_skb",
      "sched/sched_switch", "sched/sched_waking",
      "workqueue/workqueue_execute_start", "workqueue/workqueue_execute_end",
      "printk/console",
      "mce/mce_record",
      // The text of trace_marker writes: the id table and the anchors.
      "ftrace/print",
  };
  return kEvents;
}

std::vector<std::string> NodeEventSet(const std::string& events_dir) {
  std::vector<std::string> out = BaseEventSet();
  for (std::string_view group : collect::NicCollector::kKnownDriverCategories) {
    auto names = ListDirectory(events_dir + "/" + std::string(group));
    if (!names.ok()) continue;
    std::sort(names->begin(), names->end());
    for (const std::string& n : *names)
      if (PathExists(events_dir + "/" + std::string(group) + "/" + n + "/format"))
        out.push_back(std::string(group) + "/" + n);
  }
  return out;
}

Status Instance::Write(const std::string& file, std::string_view value) {
  std::string path = dir_ + "/" + file;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return MakeError("failed to open {}: {}", path, std::strerror(errno));
  ssize_t n = ::write(fd.get(), value.data(), value.size());
  if (n < 0) return MakeError("failed to write '{}' to {}: {}", value, path, std::strerror(errno));
  if (static_cast<size_t>(n) != value.size())
    return MakeError("short write to {}: {} of {} bytes", path, n, value.size());
  return OkStatus();
}

Result<std::vector<std::string>> Instance::EnableEvents(const std::vector<std::string>& events,
                                                        std::vector<std::string>* missing) {
  std::vector<std::string> enabled;
  for (const std::string& e : events) {
    // ftrace/print has no enable file: markers are always recorded.
    if (e == "ftrace/print") continue;
    if (!PathExists(dir_ + "/events/" + e + "/enable")) {
      if (missing) missing->push_back(e);
      continue;
    }
    GN_RETURN_IF_ERROR(Write("events/" + e + "/enable", "1"));
    enabled.push_back(e);
  }
  return enabled;
}

Status Instance::DisableAllEvents() { return Write("events/enable", "0"); }
Status Instance::SetTracingOn(bool on) { return Write("tracing_on", on ? "1" : "0"); }
Status Instance::SetClock(std::string_view clock) { return Write("trace_clock", clock); }
Status Instance::SetBufferSizeKb(uint64_t kb) { return Write("buffer_size_kb", std::to_string(kb)); }
Status Instance::WriteMarker(std::string_view text) {
  std::string line(text);
  line.push_back('\n');
  return Write("trace_marker", line);
}

}  // namespace gpunoise::blackbox
