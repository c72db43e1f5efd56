// Trace data stays private end to end (DESIGN.md decision 11): what `record`
// writes is 0600, an output through a symlink or into a directory others
// can write without the sticky bit is refused, `env` refuses a squatted
// directory, and `record --gpu-dir` refuses fragments it should not read.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"
#include "model/gpu_capture.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

// `env` needs no eBPF, only root to hand directories to another uid.
#define GN_REQUIRE_ROOT()                                                    \
  do {                                                                       \
    if (::geteuid() != 0) {                                                  \
      if (RootTestsRequired()) FAIL() << "needs root (chown to uid 65534)";  \
      GTEST_SKIP() << "needs root (chown to uid 65534)";                     \
    }                                                                        \
  } while (0)

int CountLines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct stat Lstat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

struct RemoveWhenDone {
  std::string dir;
  ~RemoveWhenDone() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

TEST(PrivateFilesIntegration, ARecordingIsOwnerOnlyAndLeavesNoOtherFile) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string out = dir + "/t.pftrace";
  // A umask of 0 would have made the old writer's file 0666.
  ChildProcess rec({"sh", "-c", "umask 0 && exec \"$0\" record -d 1 -o \"$1\"", GpunoiseBinary(), out});
  ASSERT_EQ(rec.Wait(30s), 0) << rec.stderr_text();
  EXPECT_EQ(Lstat(out).st_mode & 07777, 0600u);
  EXPECT_TRUE(ReadTrace(out).has_value());
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"t.pftrace"}) << "no temporary or reserve file left";
}

TEST(PrivateFilesIntegration, ASymlinkAtTheOutputIsRefusedAndItsTargetUntouched) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string target = dir + "/precious";
  std::ofstream(target) << "precious";
  std::string out = dir + "/t.pftrace";
  ASSERT_EQ(::symlink(target.c_str(), out.c_str()), 0);
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "1", "-o", out});
  int rc = rec.Wait(30s);
  std::string err = rec.stderr_text();
  EXPECT_NE(rc, 0);
  EXPECT_EQ(CountLines(err), 1) << err;
  EXPECT_NE(err.find("refusing to write " + out + ": " + out + " is a symbolic link"), std::string::npos) << err;
  EXPECT_EQ(Contents(target), "precious");
  EXPECT_TRUE(S_ISLNK(Lstat(out).st_mode));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2u) << "nothing written";
}

TEST(PrivateFilesIntegration, AnOutputIntoANonStickyWorldWritableDirectoryIsRefused) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string open_dir = dir + "/open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "1", "-o", open_dir + "/t.pftrace"});
  int rc = rec.Wait(30s);
  std::string err = rec.stderr_text();
  EXPECT_NE(rc, 0);
  EXPECT_EQ(CountLines(err), 1) << err;
  EXPECT_NE(err.find("refusing to write " + open_dir + "/t.pftrace: " + open_dir +
                     " is writable by other users and not sticky"),
            std::string::npos)
      << err;
  EXPECT_TRUE(std::filesystem::is_empty(open_dir));
}

TEST(PrivateFilesIntegration, GpuDirRefusesASymlinkedAndAForeignFragmentAndSaysWhich) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();  // 0700, root's: the fragments' owner must be root
  RemoveWhenDone cleanup{dir};
  std::string secret = dir + "/../gpunoise-secret-" + std::to_string(::getpid());
  std::ofstream(secret) << "root only";
  std::string link = dir + "/" + model::FragmentFileName(1, 1);
  ASSERT_EQ(::symlink(secret.c_str(), link.c_str()), 0);
  // Flushed long before the recording: read only for the drop baseline, and
  // still checked.
  std::string foreign = dir + "/" + model::FragmentFileName(2, 1);
  std::ofstream(foreign) << std::string("\x0a\x00", 2);
  ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "1", "--no-gpu-counters", "--gpu-dir", dir, "-o",
                    dir + "/t.pftrace"});
  int rc = rec.Wait(60s);
  std::string err = rec.stderr_text();
  ::unlink(secret.c_str());
  ASSERT_EQ(rc, 0) << err;
  EXPECT_NE(err.find("GPU fragment refused: " + link + ": is a symbolic link"), std::string::npos) << err;
  EXPECT_NE(err.find("GPU fragment refused: " + foreign +
                     ": owned by uid 65534, not by the directory's owner (uid 0)"),
            std::string::npos)
      << err;
}

TEST(PrivateFilesIntegration, EnvCreatesTheDirectoryOwnerOnlyForTheSudoUser) {
  GN_REQUIRE_ROOT();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string gpu = dir + "/gpu";
  ChildProcess env({"env", "SUDO_UID=65534", "SUDO_GID=65534", GpunoiseBinary(), "env", gpu});
  env.Wait(10s);  // may fail later for want of the CUPTI library; the directory comes first
  struct stat st = Lstat(gpu);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
}

TEST(PrivateFilesIntegration, EnvRefusesADirectoryOwnedBySomeoneElse) {
  GN_REQUIRE_ROOT();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string gpu = dir + "/gpu";
  ASSERT_EQ(::mkdir(gpu.c_str(), 0700), 0);
  ASSERT_EQ(::chown(gpu.c_str(), 65534, 65534), 0);  // squatted before the user came
  ChildProcess env({GpunoiseBinary(), "env", gpu});
  EXPECT_EQ(env.Wait(10s), 1);
  std::string err = env.stderr_text();
  EXPECT_EQ(CountLines(err), 1) << err;
  EXPECT_NE(err.find("refusing " + gpu + ": owned by uid 65534, not 0"), std::string::npos) << err;
  EXPECT_TRUE(env.stdout_text().empty());
}

TEST(PrivateFilesIntegration, EnvRefusesAWorldWritableDirectory) {
  GN_REQUIRE_ROOT();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string gpu = dir + "/gpu";
  ASSERT_EQ(::mkdir(gpu.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(gpu.c_str(), 0777), 0);
  ChildProcess env({GpunoiseBinary(), "env", gpu});
  EXPECT_EQ(env.Wait(10s), 1);
  std::string err = env.stderr_text();
  EXPECT_EQ(CountLines(err), 1) << err;
  EXPECT_NE(err.find("refusing " + gpu + ": writable by other users (mode 0777)"), std::string::npos) << err;
}

TEST(PrivateFilesIntegration, EnvRefusesASymlinkedDirectory) {
  GN_REQUIRE_ROOT();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string real = dir + "/real";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  std::string gpu = dir + "/gpu";
  ASSERT_EQ(::symlink(real.c_str(), gpu.c_str()), 0);
  ChildProcess env({GpunoiseBinary(), "env", gpu});
  EXPECT_EQ(env.Wait(10s), 1);
  EXPECT_NE(env.stderr_text().find("refusing " + gpu + ": it is a symbolic link"), std::string::npos)
      << env.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing
