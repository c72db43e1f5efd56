#include "monitor/monitor_privileges.h"

#include <gtest/gtest.h>

namespace gpunoise::monitor {
namespace {

TEST(PrivilegeDrop, MonitorKeepsBpfAndPerfmon) {
  std::vector<std::string> reasons;
  CapMask keep = MonitorKeeps(&reasons);
  EXPECT_TRUE(keep == (CapBit(kCapBpf) | CapBit(kCapPerfmon)) || keep == CapBit(kCapSysAdmin));
  EXPECT_FALSE(reasons.empty());
}

}  // namespace
}  // namespace gpunoise::monitor
