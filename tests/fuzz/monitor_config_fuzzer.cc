// The monitor's config file (--config, re-read on SIGHUP): its lines, then
// every value checked as the monitor would apply it; and listen addresses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "monitor/monitor_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpunoise::monitor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto layer = ParseConfigText(text);
  if (layer.ok()) {
    (void)ResolveOptions(*layer, OptionLayer{});
    // The same values from the command line over an empty file.
    (void)ResolveOptions(OptionLayer{}, *layer);
  }
  (void)ParseListenAddress(text);
  return 0;
}
