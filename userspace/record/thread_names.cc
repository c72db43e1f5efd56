#include "record/thread_names.h"

#include <fmt/format.h>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::record {

const std::pair<int32_t, std::string>& ThreadNames::Who(int32_t tid, int32_t tgid) {
  auto it = threads_.find(tid);
  if (it != threads_.end()) {
    // Seen first in a record without a process (a stall), now in one with.
    if (!it->second.first && tgid > 0) it->second.first = tgid;
    return it->second;
  }
  std::pair<int32_t, std::string> who{0, ""};
  if (auto status = ReadFileToString(fmt::format("{}/{}/status", proc_root_, tid)); status.ok())
    for (std::string_view line : Split(*status, '\n')) {
      if (StartsWith(line, "Name:")) who.second = std::string(Trim(line.substr(5)));
      if (StartsWith(line, "Tgid:"))
        if (auto v = ParseInt64(Trim(line.substr(5)))) who.first = static_cast<int32_t>(*v);
    }
  // Gone already (a short-lived sender): the kernel's word for its process.
  if (!who.first && tgid > 0) who.first = tgid;
  return threads_.emplace(tid, std::move(who)).first->second;
}

}  // namespace gpunoise::record
