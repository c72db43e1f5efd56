// `gpunoise blackbox` as a command: --install writes only its own GRUB
// drop-in; usage errors exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpunoise::blackbox {
namespace {

std::string Binary() {
  const char* env = std::getenv("GPUNOISE_BIN");
  return env ? env : GPUNOISE_BIN_DEFAULT;
}

int RunGpunoise(const std::string& args, std::string* out = nullptr) {
  std::string cmd = Binary() + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  std::string text;
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) text.append(buf, n);
  int status = ::pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BlackboxCli, InstallWritesOnlyAGrubDropIn) {
  char tmpl[] = "/tmp/gn-bbcli-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string root = tmpl;
  std::string out;
  // Without the drop-in directory nothing is written and it says so.
  EXPECT_EQ(RunGpunoise("blackbox arm --install --install-root " + root, &out), 1);
  EXPECT_NE(out.find("grub.d"), std::string::npos) << out;
  std::system(("mkdir -p " + root + "/etc/default/grub.d").c_str());
  std::ofstream(root + "/etc/default/grub") << "GRUB_CMDLINE_LINUX=\"quiet\"\n";
  ASSERT_EQ(RunGpunoise("blackbox arm --install --install-root " + root + " --size 64M", &out), 0) << out;
  std::ifstream in(root + "/etc/default/grub.d/60-gpunoise-blackbox.cfg");
  std::stringstream dropin;
  dropin << in.rdbuf();
  EXPECT_NE(dropin.str().find("GRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX} reserve_mem=64M:32M:gpunoise "
                              "trace_instance=gpunoise_blackbox^traceoff@gpunoise\""),
            std::string::npos)
      << dropin.str();
  std::ifstream main(root + "/etc/default/grub");
  std::stringstream main_text;
  main_text << main.rdbuf();
  EXPECT_EQ(main_text.str(), "GRUB_CMDLINE_LINUX=\"quiet\"\n");  // never edited
  std::system(("rm -rf " + root).c_str());
}

TEST(BlackboxCli, UsageErrorsExitTwoWithOneLine) {
  std::string out;
  EXPECT_EQ(RunGpunoise("blackbox", &out), 2);
  EXPECT_EQ(RunGpunoise("blackbox frobnicate", &out), 2);
  EXPECT_NE(out.find("usage: gpunoise blackbox: unknown verb"), std::string::npos) << out;
  EXPECT_EQ(RunGpunoise("blackbox arm --size lots", &out), 2);
  EXPECT_NE(out.find("usage: gpunoise blackbox arm: --size"), std::string::npos) << out;
  EXPECT_EQ(RunGpunoise("blackbox arm --print", &out), 0);
  EXPECT_NE(out.find("kernel command line to add:"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpunoise::blackbox
