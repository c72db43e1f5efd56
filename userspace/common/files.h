#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise {

Result<std::string> ReadFileToString(const std::string& path);
// Directory entries except "." and "..".
Result<std::vector<std::string>> ListDirectory(const std::string& path);
bool PathExists(const std::string& path);

}  // namespace gpunoise
