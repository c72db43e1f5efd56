// `gpunoise blackbox import-text FILE`: the ring of a kernel before 6.12 as
// the console kept it (ftrace_dump_on_oops to a serial console, netconsole
// or pstore/ramoops; or a tracefs `trace` file read by hand), parsed by
// text_dump.h and written as the same .pftrace `blackbox collect` writes:
// native ftrace messages for the events the model knows, generic ones for
// the rest, printk:console lines in the log, the loss the dump printed.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/result.h"

namespace gpunoise::blackbox {

struct TextImportOptions {
  std::string input;   // the text file
  std::string output;  // the .pftrace
  std::string tool_version, command_line;
};

struct TextImportResult {
  std::string output;
  bool console_dump = false;
  uint64_t lines = 0, events = 0, generic = 0, log_records = 0, other_lines = 0, lost = 0;
  std::map<uint32_t, uint64_t> records_per_cpu, lost_per_cpu;
  uint64_t first_ts = 0, last_ts = 0;
  bool anchored = false;  // a gpunoise-blackbox anchor marker placed it on REALTIME
};

Result<TextImportResult> ImportTextDump(const TextImportOptions& options);
std::string FormatTextImportSummary(const TextImportResult& result);

}  // namespace gpunoise::blackbox
