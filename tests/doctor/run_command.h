// Runs a command with a time limit and returns its exit status and output.
#pragma once

#include <string>
#include <vector>

namespace gpunoise::doctor::testing {

struct CommandResult {
  int exit_code = -1;  // 128+signal when killed
  std::string out;
  std::string err;
};

CommandResult RunCommand(const std::vector<std::string>& argv, int timeout_s = 60);
// The gpunoise binary under test (GPUNOISE_BIN overrides the build's).
std::string GpunoiseBinary();

}  // namespace gpunoise::doctor::testing
