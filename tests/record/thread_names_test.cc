#include "record/thread_names.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace gpunoise::record {
namespace {

class FakeProc {
 public:
  FakeProc() {
    char tmpl[] = "/tmp/gpunoise-proc-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~FakeProc() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  void Thread(int tid, int tgid, const std::string& name) {
    std::filesystem::create_directories(root_ + "/" + std::to_string(tid));
    std::ofstream(root_ + "/" + std::to_string(tid) + "/status")
        << "Name:\t" << name << "\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t" << tgid << "\nPid:\t" << tid << "\n";
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

TEST(ThreadNames, ALiveThreadIsNamedFromProc) {
  FakeProc proc;
  proc.Thread(4243, 4240, "dataloader");
  ThreadNames names(proc.root());
  auto who = names.Who(4243, 9999);  // /proc wins over the record's word while the thread lives
  EXPECT_EQ(who.first, 4240);
  EXPECT_EQ(who.second, "dataloader");
}

// A short-lived IPI sender that exited before the drain: /proc has no entry,
// the kwork record's tgid still gives its process.
TEST(ThreadNames, AnExitedSenderKeepsTheProcessTheKernelReported) {
  FakeProc proc;
  ThreadNames names(proc.root());
  auto who = names.Who(5316, 5314);
  EXPECT_EQ(who.first, 5314);
  EXPECT_EQ(who.second, "");
}

TEST(ThreadNames, AnExitedThreadWithoutATgidHasNoKnownProcess) {
  FakeProc proc;
  ThreadNames names(proc.root());
  EXPECT_EQ(names.Who(777).first, 0);
  // A later record that carries the process fills it in.
  EXPECT_EQ(names.Who(777, 770).first, 770);
  EXPECT_EQ(names.Who(777).first, 770);
}

}  // namespace
}  // namespace gpunoise::record
