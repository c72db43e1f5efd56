#include "blackbox/arm.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "blackbox/event_formats.h"
#include "blackbox/event_set.h"
#include "blackbox/markers.h"
#include "blackbox/saved_table.h"
#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::blackbox {
namespace {

uint64_t ClockNs(clockid_t id) {
  struct timespec ts {};
  ::clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string BootId() {
  auto id = ReadFileToString("/proc/sys/kernel/random/boot_id");
  return id.ok() ? std::string(Trim(*id)) : std::string();
}

std::string Release() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string();
}

// Records written so far on each CPU (entries plus those overwritten) and
// the bytes per record the buffer holds now.
struct CpuCount {
  uint32_t cpu;
  uint64_t written;
  double bytes_per_record;
};

Result<std::vector<CpuCount>> CountWritten(const std::string& instance_dir) {
  GN_ASSIGN_OR_RETURN(auto cpus, InstanceCpus(instance_dir));
  std::vector<CpuCount> out;
  for (uint32_t cpu : cpus) {
    auto text = ReadFileToString(fmt::format("{}/per_cpu/cpu{}/stats", instance_dir, cpu));
    if (!text.ok()) return text.error();
    GN_ASSIGN_OR_RETURN(CpuBufferStats s, ParseCpuBufferStats(*text));
    double bpr = s.entries ? static_cast<double>(s.bytes) / s.entries : 0.0;
    out.push_back({cpu, s.entries + s.overrun + s.read_events, bpr});
  }
  return out;
}

}  // namespace

bool CmdlineMapsInstance(std::string_view cmdline, std::string_view instance) {
  std::vector<std::string> labels;
  for (std::string_view p : Split(Trim(cmdline), ' ')) {
    if (!StartsWith(p, "reserve_mem=")) continue;
    auto parts = Split(p.substr(12), ':');  // size:align:label
    if (parts.size() == 3 && !parts[2].empty()) labels.emplace_back(parts[2]);
  }
  for (std::string_view p : Split(Trim(cmdline), ' ')) {
    if (!StartsWith(p, "trace_instance=")) continue;
    std::string_view v = p.substr(15);
    std::string_view name = v.substr(0, v.find_first_of("^@,"));
    auto at = v.find('@');
    if (name != instance || at == v.npos) continue;
    std::string_view where = v.substr(at + 1);
    where = where.substr(0, where.find(','));
    if (std::find(labels.begin(), labels.end(), where) != labels.end()) return true;
    if (StartsWith(where, "0x")) return true;  // memmap= address form
  }
  return false;
}

BlackBoxState ReadState(const std::string& tracefs, const std::string& instance,
                        const std::string& proc_cmdline_path) {
  BlackBoxState s;
  s.instance_dir = tracefs + "/instances/" + instance;
  if (auto cmdline = ReadFileToString(proc_cmdline_path); cmdline.ok())
    s.cmdline_reserves = CmdlineMapsInstance(*cmdline, instance);
  struct stat st {};
  s.instance_exists = ::stat(s.instance_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (!s.instance_exists) return s;
  if (auto text = ReadFileToString(s.instance_dir + "/last_boot_info"); text.ok()) {
    s.persistent = true;
    if (auto info = ParseLastBootInfo(*text); info.ok()) s.last_boot = *info;
  }
  if (auto on = ReadFileToString(s.instance_dir + "/tracing_on"); on.ok()) s.tracing_on = Trim(*on) == "1";
  if (auto kb = ReadFileToString(s.instance_dir + "/buffer_size_kb"); kb.ok())
    s.buffer_kb_per_cpu = ParseUint64(Trim(*kb)).value_or(0);
  if (auto set = ReadFileToString(s.instance_dir + "/set_event"); set.ok())
    for (std::string_view line : Split(*set, '\n'))
      if (!Trim(line).empty()) ++s.enabled_events;
  if (auto cpus = InstanceCpus(s.instance_dir); cpus.ok())
    for (uint32_t cpu : *cpus)
      if (auto text = ReadFileToString(fmt::format("{}/per_cpu/cpu{}/stats", s.instance_dir, cpu)); text.ok())
        if (auto stats = ParseCpuBufferStats(*text); stats.ok()) s.entries += stats->entries;
  return s;
}

std::string FormatState(const BlackBoxState& s) {
  std::string out;
  if (!s.instance_exists) {
    out += fmt::format("black box: not present (no instance {})\n", s.instance_dir);
    out += s.cmdline_reserves ? "  the command line asks for it, but the kernel did not create it (older than 6.12?)\n"
                              : "  this boot's command line reserves no buffer: 'gpunoise blackbox arm' prints the one to add\n";
    return out;
  }
  std::string what = !s.persistent ? "a plain instance (does not survive a reboot)"
                                   : "a persistent buffer (survives a warm reboot)";
  out += fmt::format("black box: {} at {}, {} KiB per CPU\n", what, s.instance_dir, s.buffer_kb_per_cpu);
  if (s.uncollected())
    out += fmt::format("  holding uncollected data of the previous boot: {} records (run 'gpunoise blackbox collect')\n",
                       s.entries);
  else if (s.persistent && s.last_boot && !s.last_boot->current)
    out += "  the previous boot's buffer is here but empty (collected, or nothing was recorded)\n";
  if (s.armed())
    out += fmt::format("  armed: recording {} events, {} records in the buffer\n", s.enabled_events, s.entries);
  else
    out += fmt::format("  not armed: tracing {}, {} events enabled ('gpunoise blackbox arm')\n",
                       s.tracing_on ? "on" : "off", s.enabled_events);
  return out;
}

std::optional<double> SecondsHeld(uint64_t bytes_per_cpu, const std::vector<CpuRate>& rates,
                                  uint32_t* busiest_cpu) {
  const CpuRate* busiest = nullptr;
  for (const CpuRate& r : rates)
    if (!busiest || r.bytes_per_s > busiest->bytes_per_s) busiest = &r;
  if (!busiest || busiest->bytes_per_s <= 0 || bytes_per_cpu == 0) return std::nullopt;
  if (busiest_cpu) *busiest_cpu = busiest->cpu;
  return static_cast<double>(bytes_per_cpu) / busiest->bytes_per_s;
}

std::vector<std::string> MarkerLines(const std::string& events_dir, const std::vector<std::string>& events) {
  EventTable table = LoadEventTable(events_dir, events, nullptr);
  return HeaderAndIdMarkers(MarkerHeader{BootId(), Release(), "boot"}, table);
}

Result<size_t> WriteMarkers(const std::string& instance_dir, const std::string& events_dir,
                            const std::vector<std::string>& events) {
  std::vector<std::string> lines = MarkerLines(events_dir, events);
  Instance inst(instance_dir);
  // A marker lands in the buffer of the CPU the writer runs on, and each
  // CPU's ring wraps at its own pace: every CPU gets its own copy, so the
  // table survives in whichever CPU's history reaches back the furthest.
  cpu_set_t saved;
  bool have_saved = ::sched_getaffinity(0, sizeof(saved), &saved) == 0;
  GN_ASSIGN_OR_RETURN(auto cpus, InstanceCpus(instance_dir));
  size_t n = 0;
  Status status = OkStatus();
  for (uint32_t cpu : cpus) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (::sched_setaffinity(0, sizeof(one), &one) != 0) continue;  // offline, or not ours
    for (const std::string& line : lines) {
      if (status = inst.WriteMarker(line); !status.ok()) break;
      ++n;
    }
    if (status.ok())
      status = inst.WriteMarker(
          AnchorMarker(ClockNs(CLOCK_BOOTTIME), ClockNs(CLOCK_MONOTONIC), ClockNs(CLOCK_REALTIME)));
    if (!status.ok()) break;
    ++n;
  }
  if (have_saved) ::sched_setaffinity(0, sizeof(saved), &saved);
  GN_RETURN_IF_ERROR(status);
  return n;
}

Result<ArmResult> Arm(const ArmOptions& options) {
  BlackBoxState state = ReadState(options.tracefs, options.instance);
  if (!state.instance_exists) {
    if (!options.live)
      return MakeError("this boot has no black-box instance '{}': boot with the command line that "
                       "'gpunoise blackbox arm --print' shows (Linux 6.12+), or use --live-instance for a "
                       "drill without a reboot",
                       options.instance);
    if (::mkdir(state.instance_dir.c_str(), 0700) != 0 && errno != EEXIST)
      return MakeError("failed to create instance {}: {}", state.instance_dir, std::strerror(errno));
  } else if (!state.persistent && !options.live) {
    return MakeError("instance '{}' is not a persistent buffer (no last_boot_info): its data would not "
                     "survive a reboot; boot with reserve_mem= and trace_instance={}@LABEL",
                     options.instance, options.instance);
  }
  if (state.uncollected() && !options.force)
    return MakeError("instance '{}' holds {} records of the previous boot that were not collected: run "
                     "'gpunoise blackbox collect' first (--force discards them)",
                     options.instance, state.entries);

  Instance inst(state.instance_dir);
  // Setting the clock resets the buffer (tracing_set_clock): the previous
  // boot's data is gone from here on, which is why collect comes first.
  GN_RETURN_IF_ERROR(inst.SetTracingOn(false));
  GN_RETURN_IF_ERROR(inst.DisableAllEvents());
  GN_RETURN_IF_ERROR(inst.SetClock("boot"));
  if (options.live && options.buffer_kb) GN_RETURN_IF_ERROR(inst.SetBufferSizeKb(options.buffer_kb));

  std::string events_dir = options.tracefs + "/events";
  std::vector<std::string> events = NodeEventSet(events_dir);
  ArmResult r;
  GN_ASSIGN_OR_RETURN(r.enabled, inst.EnableEvents(events, &r.missing));
  GN_RETURN_IF_ERROR(inst.SetTracingOn(true));
  std::vector<std::string> table_events = r.enabled;
  table_events.push_back("ftrace/print");
  GN_ASSIGN_OR_RETURN(r.markers_written, WriteMarkers(state.instance_dir, events_dir, table_events));
  if (!options.state_dir.empty()) {
    GN_RETURN_IF_ERROR(SaveMarkerLines(options.state_dir, BootId(), MarkerLines(events_dir, table_events)));
    r.saved_table = options.state_dir + "/ids-" + BootId();
  }

  auto kb = ReadFileToString(state.instance_dir + "/buffer_size_kb");
  r.buffer_bytes_per_cpu = kb.ok() ? ParseUint64(Trim(*kb)).value_or(0) * 1024 : 0;
  if (options.measure.count() > 0) {
    GN_ASSIGN_OR_RETURN(auto before, CountWritten(state.instance_dir));
    std::this_thread::sleep_for(options.measure);
    GN_ASSIGN_OR_RETURN(auto after, CountWritten(state.instance_dir));
    double seconds = options.measure.count() / 1000.0;
    for (size_t i = 0; i < after.size() && i < before.size(); ++i) {
      CpuRate rate;
      rate.cpu = after[i].cpu;
      rate.records_per_s = static_cast<double>(after[i].written - before[i].written) / seconds;
      rate.bytes_per_s = rate.records_per_s * after[i].bytes_per_record;
      r.rates.push_back(rate);
    }
    r.seconds_held = SecondsHeld(r.buffer_bytes_per_cpu, r.rates, &r.busiest_cpu);
  }
  return r;
}

std::string FormatArmResult(const ArmResult& r) {
  std::string out = fmt::format("black box armed: {} events enabled, {} marker lines written\n",
                                r.enabled.size(), r.markers_written);
  if (!r.saved_table.empty()) out += fmt::format("  event-id table also saved to {}\n", r.saved_table);
  if (!r.missing.empty()) {
    out += "  not on this kernel:";
    for (const std::string& m : r.missing) out += " " + m;
    out += "\n";
  }
  for (const CpuRate& rate : r.rates)
    out += fmt::format("  cpu {}: {:.0f} records/s, {:.1f} KiB/s\n", rate.cpu, rate.records_per_s,
                       rate.bytes_per_s / 1024);
  if (r.seconds_held)
    out += fmt::format("  the buffer ({} KiB per CPU) holds the last {:.1f} s at this rate (cpu {} wraps first)\n",
                       r.buffer_bytes_per_cpu / 1024, *r.seconds_held, r.busiest_cpu);
  else if (!r.rates.empty())
    out += "  no events during the measurement: the buffer holds more than any rate measured here\n";
  return out;
}

}  // namespace gpunoise::blackbox
