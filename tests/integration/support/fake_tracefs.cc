#include "integration/support/fake_tracefs.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "integration/support/workloads.h"

namespace gpunoise::testing {

std::string FakeTracefs(const std::vector<std::string>& events) {
  std::string root = MakeTempDir();
  for (const auto& ev : events) {
    std::string dir = root + "/events/" + ev;
    std::string cmd = "mkdir -p " + dir + " && cp /sys/kernel/tracing/events/" + ev + "/id " + dir + "/id";
    if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << cmd;
  }
  return root;
}

}  // namespace gpunoise::testing
