#include "model/redact.h"

namespace gpunoise::model {

std::string ProgramName(std::string_view argv0) {
  size_t slash = argv0.rfind('/');
  std::string_view name = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
  return std::string(name.empty() ? argv0 : name);
}

void RedactCommandLines(ProcessSnapshot* snapshot) {
  for (ProcessInfo& p : snapshot->processes) {
    if (p.cmdline.empty()) continue;
    std::string program = ProgramName(p.cmdline.front());
    p.cmdline.assign(1, program);
  }
}

}  // namespace gpunoise::model
