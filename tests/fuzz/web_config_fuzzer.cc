// The monitor's --web.config.file (YAML in exporter-toolkit's format, read
// as root from a path the operator names) and the Authorization header of
// every request to an authenticating endpoint, which anyone who can reach
// the port sends. The header is decoded only: checking it runs bcrypt,
// which is slow on purpose and would starve the fuzzer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "monitor/basic_auth.h"
#include "monitor/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpunoise::monitor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = ParseWebConfigText(text, "/etc/gpunoise");
  if (config.ok()) {
    for (const auto& [user, hash] : config->users) (void)LooksLikeBcrypt(hash);
    (void)config->authenticates();
  }
  std::string user, password;
  if (BasicAuth::DecodeHeader(text, &user, &password)) {
    // What was decoded came from inside the header.
    if (user.size() + password.size() + 1 > size) __builtin_trap();
  }
  (void)LooksLikeBcrypt(text);
  return 0;
}
