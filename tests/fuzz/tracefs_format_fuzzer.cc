// tracefs event "format" files, which the nic collector reads for events it
// was not compiled for: the field table and the device-name field it picks.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collect/tracefs_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto format = gpunoise::collect::ParseTraceFormat(text);
  if (format.ok()) (void)gpunoise::collect::FindDeviceNameField(*format);
  return 0;
}
