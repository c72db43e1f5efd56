// A kubelet's log trees as a node has them (/var/log/pods/<ns>_<pod>_<uid>/
// and /var/log/containers/<pod>_<ns>_<container>-<id>.log links), in a
// directory of the test's own: collect/kubelet_pods.h reads them.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace gpunoise::collect {

class FakeKubeletLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gn-kubelet-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ::mkdir((root_ + "/pods").c_str(), 0755);
    ::mkdir((root_ + "/containers").c_str(), 0755);
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  void Pod(const std::string& dir) {
    ::mkdir((root_ + "/pods/" + dir).c_str(), 0755);
    ::mkdir((root_ + "/pods/" + dir + "/prep").c_str(), 0755);
    std::ofstream(root_ + "/pods/" + dir + "/prep/0.log") << "log line\n";
  }
  void ContainerLink(const std::string& name, const std::string& target) {
    ASSERT_EQ(::symlink(target.c_str(), (root_ + "/containers/" + name).c_str()), 0);
  }
  std::string root_;
};

}  // namespace gpunoise::collect
