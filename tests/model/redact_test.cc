#include "model/redact.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

TEST(Redact, ACommandLineKeepsOnlyItsProgramsName) {
  ProcessSnapshot s;
  s.processes.push_back({.pid = 10, .comm = "python3",
                         .cmdline = {"/usr/bin/python3", "train.py", "--api-key=s3cr3t"}});
  s.processes.push_back({.pid = 11, .comm = "torchrun", .cmdline = {"torchrun", "--token", "abc"}});
  RedactCommandLines(&s);
  EXPECT_EQ(s.processes[0].cmdline, (std::vector<std::string>{"python3"}));
  EXPECT_EQ(s.processes[1].cmdline, (std::vector<std::string>{"torchrun"}));
  EXPECT_EQ(s.processes[0].comm, "python3");
}

TEST(Redact, KernelThreadsAndOddArgvZeroStayNamed) {
  ProcessSnapshot s;
  s.processes.push_back({.pid = 2, .is_kthread = true, .comm = "kthreadd"});
  s.processes.push_back({.pid = 12, .comm = "x", .cmdline = {"/opt/bin/", "secret"}});
  RedactCommandLines(&s);
  EXPECT_TRUE(s.processes[0].cmdline.empty());
  EXPECT_EQ(s.processes[1].cmdline, (std::vector<std::string>{"/opt/bin/"}));
}

}  // namespace
}  // namespace gpunoise::model
