#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise {

std::string_view Trim(std::string_view s);
std::vector<std::string_view> Split(std::string_view s, char sep);
// The words between runs of spaces and tabs (none empty).
std::vector<std::string_view> SplitWhitespace(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
// ASCII letters lowered, other bytes kept: for kernel, driver and metric
// names, which are ASCII (no locale, unlike std::tolower on its own).
std::string Lower(std::string_view s);

std::optional<int64_t> ParseInt64(std::string_view s);
std::optional<uint64_t> ParseUint64(std::string_view s);

// "4M", "512k", "1G", "65536" -> bytes (binary units).
Result<uint64_t> ParseByteSize(std::string_view text);
// "10s", "250ms", "2m", "1.5" (seconds) -> nanoseconds.
Result<uint64_t> ParseDuration(std::string_view text);

std::string HumanBytes(uint64_t bytes);

// A fixed-size kernel string (comm) up to its first NUL.
std::string_view FixedCString(const char* data, size_t max_len);

}  // namespace gpunoise
