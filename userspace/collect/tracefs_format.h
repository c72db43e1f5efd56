// Parses a tracefs event "format" file: the layout of the raw entry the
// kernel writes for one tracepoint. Used where a program must read fields of
// events it was not compiled for (the nic collector).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise::collect {

struct TraceField {
  std::string type;  // "__data_loc char[]", "char[16]", "unsigned int", ...
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool is_signed = false;
  bool is_common = false;  // common_type, common_pid, ...
};

struct TraceFormat {
  std::string name;
  uint32_t id = 0;
  std::vector<TraceField> fields;
};

Result<TraceFormat> ParseTraceFormat(std::string_view text);

// A string field that names a network device, by the names NIC drivers use
// ("devname", "dev_name", "ifname", "name", "netdev", "dev"): either a
// __data_loc string or an inline char array. nullopt when there is none.
struct DeviceNameField {
  bool data_loc = false;
  uint32_t offset = 0;
  uint32_t size = 0;
  std::string name;
};
std::optional<DeviceNameField> FindDeviceNameField(const TraceFormat& format);

}  // namespace gpunoise::collect
