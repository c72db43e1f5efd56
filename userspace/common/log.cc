#include "common/log.h"

#include <atomic>

namespace gpunoise::log {
namespace {
std::atomic<Level> g_level{Level::kInfo};
}

void SetLevel(Level level) { g_level = level; }
Level GetLevel() { return g_level; }

void Write(Level level, const std::string& message) {
  if (level > g_level) return;
  const char* prefix = "";
  switch (level) {
    case Level::kError: prefix = "error: "; break;
    case Level::kWarning: prefix = "warning: "; break;
    case Level::kInfo: prefix = ""; break;
    case Level::kDebug: prefix = "debug: "; break;
  }
  std::string line = fmt::format("gpunoise: {}{}\n", prefix, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace gpunoise::log
