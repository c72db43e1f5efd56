#include "common/capabilities.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace gpunoise {
namespace {

TEST(Capabilities, NamesAsCapshWritesThem) {
  EXPECT_EQ(CapabilityNames(0), "none");
  EXPECT_EQ(CapabilityNames(CapBit(kCapBpf) | CapBit(kCapPerfmon)), "cap_perfmon,cap_bpf");
  EXPECT_EQ(CapabilityNames(CapBit(kCapDacOverride)), "cap_dac_override");
  EXPECT_EQ(CapabilityNames(CapBit(kCapSysAdmin)), "cap_sys_admin");
}

// In a child (a drop cannot be undone): afterwards the kernel reports only
// what was kept, also in the bounding set, and no_new_privs.
TEST(Capabilities, DropKeepsOnlyWhatWasAskedAndSetsNoNewPrivs) {
  auto before = CurrentCapabilities();
  ASSERT_TRUE(before.ok()) << before.error().message;
  const CapMask keep = CapBit(kCapBpf) | CapBit(kCapDacOverride);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    auto now = DropCapabilitiesExcept(keep);
    std::ifstream in("/proc/self/status");
    std::stringstream ss;
    ss << (now.ok() ? "ok\n" : now.error().message + "\n") << in.rdbuf();
    std::string s = ss.str();
    (void)!::write(pipe_fds[1], s.data(), s.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string status;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof(buf))) > 0;) status.append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  ASSERT_EQ(status.substr(0, 3), "ok\n") << status;
  auto field = [&](const std::string& key) {
    size_t at = status.find("\n" + key + ":\t");
    return at == std::string::npos ? ~0ull : std::stoull(status.substr(at + key.size() + 3, 16), nullptr, 16);
  };
  const CapMask expected = before->permitted & keep;
  EXPECT_EQ(field("CapEff"), expected);
  EXPECT_EQ(field("CapPrm"), expected);
  EXPECT_EQ(field("CapInh"), 0u);
  EXPECT_EQ(field("CapAmb"), 0u);
  if (before->effective & CapBit(kCapSetpcap)) {
    EXPECT_EQ(field("CapBnd") & ~keep, 0u) << "the bounding set too";
  }
  EXPECT_EQ(field("NoNewPrivs"), 1u);
}

}  // namespace
}  // namespace gpunoise
