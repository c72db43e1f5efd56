// The node agent's per-pod fragment directories (collect/pod_fragment_dirs.h)
// on a fake kubelet log tree and a fake /proc, in a temporary ROOT; the
// hand-over checked end to end with a writer running as uid 65534.
#include "collect/pod_fragment_dirs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "collect/fake_kubelet_logs.h"
#include "cupti/fragment_writer.h"
#include "record/gpu/gpu_fragments.h"
#include "model/gpu_capture.h"

namespace gpunoise::collect {
namespace {

constexpr const char* kUid = "7b2d1e4f-6c3e-4f90-8b8c-2d3e4f5a6b7c";
const std::string kApp(64, 'b');
const std::string kPause(64, 'e');
const std::string kDirName = std::string("ml_trainer-0_") + kUid;

class PodFragmentDirsTest : public FakeKubeletLogs {
 protected:
  void SetUp() override {
    FakeKubeletLogs::SetUp();
    dirs_root_ = root_ + "/gpu";
    proc_ = root_ + "/proc";
    ASSERT_EQ(::mkdir(dirs_root_.c_str(), 0711), 0);
    ASSERT_EQ(::mkdir(proc_.c_str(), 0755), 0);
    Pod(kDirName);
    ContainerLink(std::string("trainer-0_ml_train-") + kApp + ".log", "x");
  }
  // A process of the pod's container `id` in the fake /proc.
  void Process(int pid, const std::string& id, unsigned uid, unsigned gid, unsigned start) {
    std::string d = proc_ + "/" + std::to_string(pid);
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0);
    std::ofstream(d + "/cgroup") << "0::/kubepods/burstable/pod" << kUid << "/" << id << "\n";
    std::ofstream(d + "/status") << "Name:\tpython\nUid:\t" << uid << "\t" << uid << "\t" << uid << "\t" << uid
                                 << "\nGid:\t" << gid << "\t" << gid << "\t" << gid << "\t" << gid << "\n";
    std::string stat = std::to_string(pid) + " (py thon) S";
    for (int i = 0; i < 19; ++i) stat += " 0";
    std::ofstream(d + "/stat") << stat << " " << start << " 0 0\n";
  }
  PodFragmentDirs Open() {
    auto d = PodFragmentDirs::Open(dirs_root_);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
    return std::move(d).value();
  }
  std::string dirs_root_, proc_;
};

TEST_F(PodFragmentDirsTest, APodGetsAPrivateDirectoryNamedAsTheKubeletNamesIt) {
  PodFragmentDirs dirs = Open();
  PodDirsPass pass = dirs.Update(KubeletPods::Read(root_), proc_);
  EXPECT_EQ(pass.created, 1u);
  EXPECT_TRUE(pass.problems.empty());
  struct stat st {};
  ASSERT_EQ(::lstat((dirs_root_ + "/" + kDirName).c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(dirs.Directories(), std::vector<std::string>{dirs_root_ + "/" + kDirName});
  EXPECT_FALSE(dirs.HandedTo(kDirName));  // no process of the pod yet
  EXPECT_EQ(dirs.Update(KubeletPods::Read(root_), proc_).created, 0u);  // once
}

TEST_F(PodFragmentDirsTest, TheDirectoryGoesToTheUidOfThePodsFirstContainerProcess) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  PodFragmentDirs dirs = Open();
  dirs.Update(KubeletPods::Read(root_), proc_);
  // The sandbox's pause process (no log link) started first; two processes
  // of the app container, the earlier one as 65534.
  Process(100, kPause, 65535, 65535, 10);
  Process(200, kApp, 1234, 1234, 30);
  Process(201, kApp, 65534, 65534, 20);
  PodDirsPass pass = dirs.Update(KubeletPods::Read(root_), proc_);
  EXPECT_EQ(pass.handed, 1u);
  EXPECT_TRUE(pass.problems.empty()) << pass.problems[0];
  ASSERT_TRUE(dirs.HandedTo(kDirName));
  EXPECT_EQ(*dirs.HandedTo(kDirName), 65534u);
  struct stat st {};
  ASSERT_EQ(::stat((dirs_root_ + "/" + kDirName).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(PodFragmentDirsTest, APlantedSymlinkIsRefusedAndNotFollowed) {
  std::string elsewhere = root_ + "/elsewhere";
  ASSERT_EQ(::mkdir(elsewhere.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), (dirs_root_ + "/" + kDirName).c_str()), 0);
  Process(201, kApp, 65534, 65534, 20);
  PodFragmentDirs dirs = Open();
  PodDirsPass pass = dirs.Update(KubeletPods::Read(root_), proc_);
  ASSERT_EQ(pass.problems.size(), 1u);
  EXPECT_EQ(pass.problems[0], "refusing " + dirs_root_ + "/" + kDirName + ": it is a symbolic link");
  EXPECT_TRUE(dirs.Directories().empty());
  struct stat st {};
  ASSERT_EQ(::stat(elsewhere.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());  // never handed over through the link
  EXPECT_TRUE(dirs.Update(KubeletPods::Read(root_), proc_).problems.empty());  // said once
}

TEST_F(PodFragmentDirsTest, AnEntryOwnedByAnotherUidThanThePodsIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  std::string planted = dirs_root_ + "/" + kDirName;
  ASSERT_EQ(::mkdir(planted.c_str(), 0700), 0);
  ASSERT_EQ(::chown(planted.c_str(), 1234, 1234), 0);
  Process(201, kApp, 65534, 65534, 20);
  PodFragmentDirs dirs = Open();
  PodDirsPass pass = dirs.Update(KubeletPods::Read(root_), proc_);
  ASSERT_EQ(pass.problems.size(), 1u);
  EXPECT_EQ(pass.problems[0], "refusing " + planted + ": owned by uid 1234, but the pod runs as uid 65534");
  EXPECT_TRUE(dirs.Directories().empty());
}

TEST_F(PodFragmentDirsTest, AnEntryOthersCanWriteIsRefused) {
  std::string planted = dirs_root_ + "/" + kDirName;
  ASSERT_EQ(::mkdir(planted.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 0777), 0);
  PodFragmentDirs dirs = Open();
  PodDirsPass pass = dirs.Update(KubeletPods::Read(root_), proc_);
  ASSERT_EQ(pass.problems.size(), 1u);
  EXPECT_EQ(pass.problems[0], "refusing " + planted + ": mode 0777 lets others write into it");
}

TEST_F(PodFragmentDirsTest, ARootOthersCanWriteIntoIsRefused) {
  ASSERT_EQ(::chmod(dirs_root_.c_str(), 0777), 0);
  auto d = PodFragmentDirs::Open(dirs_root_);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("mode 0777 lets others create entries in it"), std::string::npos)
      << d.error().message;
  std::string link = root_ + "/gpu-link";
  ASSERT_EQ(::symlink(dirs_root_.c_str(), link.c_str()), 0);
  EXPECT_FALSE(PodFragmentDirs::Open(link).ok());
}

TEST_F(PodFragmentDirsTest, AGonePodsEmptyDirectoryIsRemovedAndOneWithFragmentsKept) {
  PodFragmentDirs dirs = Open();
  dirs.Update(KubeletPods::Read(root_), proc_);
  std::filesystem::remove_all(root_ + "/pods/" + kDirName);
  EXPECT_EQ(dirs.Update(KubeletPods::Read(root_), proc_).removed, 1u);
  EXPECT_NE(::access((dirs_root_ + "/" + kDirName).c_str(), F_OK), 0);
  Pod(kDirName);
  dirs.Update(KubeletPods::Read(root_), proc_);
  std::ofstream(dirs_root_ + "/" + kDirName + "/" + model::FragmentFileName(7, 1000)) << "x";
  std::filesystem::remove_all(root_ + "/pods/" + kDirName);
  EXPECT_EQ(dirs.Update(KubeletPods::Read(root_), proc_).removed, 0u);
  EXPECT_EQ(::access((dirs_root_ + "/" + kDirName).c_str(), F_OK), 0);
}

// The whole way: the agent makes the directory, a process running as
// 65534 cannot write it yet and holds its chunk back, the agent hands it
// over, the next flush writes both, and the recorder's checks accept them
// (files owned by their directory's owner).
TEST_F(PodFragmentDirsTest, AProcessRunningAs65534WritesOnceHandedOverAndTheRecorderAcceptsIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a writer as uid 65534";
  ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);  // the child must reach ROOT/x
  PodFragmentDirs dirs = Open();
  dirs.Update(KubeletPods::Read(root_), proc_);
  std::string pod_dir = dirs_root_ + "/" + kDirName;
  int to_parent[2], to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
    cupti::FragmentWriter w(pod_dir, 7, 0);
    w.set_pending_limit(1 << 20);
    std::string error;
    if (!w.Write(std::string("\x0a\x00", 2), 1000, &error) || w.chunks_pending() != 1) ::_exit(11);
    char c = 'x';
    if (::write(to_parent[1], &c, 1) != 1 || ::read(to_child[0], &c, 1) != 1) ::_exit(12);
    if (!w.Write(std::string("\x0a\x00", 2), 2000, &error) || w.chunks_written() != 2) ::_exit(13);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(to_parent[0], &c, 1), 1);
  Process(child, kApp, 65534, 65534, 20);  // the agent sees the pod's process
  PodDirsPass pass = dirs.Update(KubeletPods::Read(root_), proc_);
  EXPECT_EQ(pass.handed, 1u);
  ASSERT_EQ(::write(to_child[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto window = gpu::ListFragmentWindow(pod_dir, 0, 0);
  ASSERT_TRUE(window.ok()) << window.error().message;
  EXPECT_EQ(window->files.size(), 2u);
  EXPECT_TRUE(window->refused.empty());
}

}  // namespace
}  // namespace gpunoise::collect
