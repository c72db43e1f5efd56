// Diagnostics on stderr, one line each, prefixed with the program name.
#pragma once

#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace gpunoise::log {

enum class Level { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

void SetLevel(Level level);
Level GetLevel();
void Write(Level level, const std::string& message);

template <typename... Args>
void Error(fmt::format_string<Args...> f, Args&&... args) {
  Write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Warning(fmt::format_string<Args...> f, Args&&... args) {
  Write(Level::kWarning, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() >= Level::kInfo) Write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Debug(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() >= Level::kDebug) Write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace gpunoise::log
