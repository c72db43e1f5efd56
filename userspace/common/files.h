#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise {

Result<std::string> ReadFileToString(const std::string& path);

// A kernel file read again and again (/proc/stat, sysfs attributes): opened
// once, each Read() a pread from offset 0, which makes procfs and sysfs
// generate the text afresh. Saves the path walk, open and close of every
// read. A file that could not be opened fails each Read() with the reason.
class RereadableFile {
 public:
  explicit RereadableFile(std::string path);
  Result<std::string> Read() const;

 private:
  std::string path_;
  UniqueFd fd_;
  int open_errno_ = 0;
};

// Directory entries except "." and "..".
Result<std::vector<std::string>> ListDirectory(const std::string& path);
bool PathExists(const std::string& path);

}  // namespace gpunoise
