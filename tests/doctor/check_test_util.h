// Assertions shared by the check tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "doctor/good_node.h"

namespace gpunoise::doctor::testing {

// Gathers the fixture and runs one check on it.
inline CheckResult Check(const FixtureTree& tree, const std::string& id, const FakeSources& fakes = {},
                         DoctorOptions options = {}) {
  auto run = Gather(tree, fakes, options);
  if (!run->inputs.ok()) {
    ADD_FAILURE() << run->inputs.error().message;
    return {};
  }
  return RunOne(*run->inputs, id);
}

inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace gpunoise::doctor::testing

#define EXPECT_SAW(result, part) EXPECT_TRUE(::gpunoise::doctor::testing::Contains((result).saw, part)) << (result).saw
