// The ftrace ring as text: what `ftrace_dump_on_oops` prints to the console
// when a kernel before 6.12 (no persistent buffer) oopses or panics, kept by
// a serial console, netconsole or pstore/ramoops, and what reading a tracefs
// instance's `trace` file gives (the same formatter, print_trace_line).
// Lines look like
//   "          <idle>-0       [001] d.h1.   123.456789: irq_handler_entry: irq=24 name=virtio0-input.0"
// (comm-pid, [cpu], the irq/preempt flags, seconds.microseconds of the
// trace clock, the event and its print format), optionally behind a printk
// time prefix "[  130.1] " or a syslog "<4>"; "CPU:1 [LOST 123 EVENTS]"
// lines say what the ring overwrote. Parsed into the same model events and
// generic records the raw-page decoder gives, for the same trace writer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blackbox/markers.h"
#include "blackbox/record_convert.h"
#include "common/result.h"
#include "model/events.h"
#include "model/kernel_log.h"

namespace gpunoise::blackbox {

struct TextDump {
  std::map<uint32_t, std::vector<model::Event>> events;  // by CPU, in the order printed
  std::map<uint32_t, uint64_t> lost;                     // by CPU: the [LOST N EVENTS] lines
  std::map<uint32_t, std::vector<size_t>> loss_at;       // by CPU: event indices a loss came before
  std::map<uint32_t, uint64_t> records;                  // by CPU: event lines
  std::vector<GenericRecord> generic;                    // events the model has no type for
  std::vector<model::KernelLogEntry> log;                // printk:console lines
  std::map<int32_t, std::string> irq_names;              // from irq_handler_entry
  MarkerSet markers;                                     // gpunoise-blackbox lines written to trace_marker
  uint64_t lines = 0;                                    // event lines in all
  uint64_t other_lines = 0;  // lines inside the dump that are no event line (other printks between)
  uint64_t first_ts = 0, last_ts = 0;
  bool console_dump = false;  // "Dumping ftrace buffer:" ... (a console capture) rather than a trace file
};

// One event line (without any printk prefix); false if it is none.
struct TextEventLine {
  std::string comm;
  int32_t pid = 0;
  uint32_t cpu = 0;
  uint16_t flags = 0;  // the trace's common_flags bits from the flags column
  uint64_t ts = 0;     // ns (the text has microseconds)
  std::string_view event, body;
};
bool ParseTextEventLine(std::string_view line, TextEventLine* out);

// The whole text. Refused with one line: no event line at all, an event
// line cut short or a file whose header promises more entries than it has
// (truncated), a console dump without its closing line (the capture
// stopped mid-dump).
Result<TextDump> ParseTextDump(std::string_view text);

}  // namespace gpunoise::blackbox
