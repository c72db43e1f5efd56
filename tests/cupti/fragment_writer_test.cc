#include "cupti/fragment_writer.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "model/gpu_capture.h"

namespace gpunoise::cupti {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/gpunoise-fragment-test-XXXXXX";
  return mkdtemp(tmpl);
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.' || (std::string(e->d_name) != "." && std::string(e->d_name) != ".."))
      out.push_back(e->d_name);
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

void RemoveAll(const std::string& dir) {
  for (const auto& f : List(dir)) unlink((dir + "/" + f).c_str());
  rmdir(dir.c_str());
}

struct RemoveWhenDone {
  std::string dir;
  ~RemoveWhenDone() { RemoveAll(dir); }
};

TEST(FragmentWriter, EachChunkIsACompleteFileUnderItsFinalName) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  FragmentWriter w(dir, 77, 0);
  std::string error;
  ASSERT_TRUE(w.Write("abc", 1000, &error)) << error;
  ASSERT_TRUE(w.Write("defg", 2000, &error)) << error;
  auto files = List(dir);
  ASSERT_EQ(files.size(), 2u);  // no temp files left behind
  EXPECT_EQ(files[0], model::FragmentFileName(77, 1000));
  EXPECT_EQ(files[1], model::FragmentFileName(77, 2000));
  std::ifstream in(dir + "/" + files[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "defg");
  EXPECT_EQ(w.chunks_written(), 2u);
  EXPECT_EQ(w.bytes_written(), 7u);
}

TEST(FragmentWriter, FragmentsAreOwnerOnlyWhateverTheUmask) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  FragmentWriter w(dir, 77, 0);
  std::string error;
  mode_t old = umask(0);
  bool ok = w.Write("abc", 1000, &error);
  umask(old);
  ASSERT_TRUE(ok) << error;
  struct stat st {};
  ASSERT_EQ(stat((dir + "/" + model::FragmentFileName(77, 1000)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(FragmentWriter, ASymlinkAtTheOldTempNameIsNotFollowed) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  std::string target = dir + "/precious";
  std::ofstream(target) << "precious";
  std::string name = model::FragmentFileName(77, 1000);
  ASSERT_EQ(symlink(target.c_str(), (dir + "/." + name + ".tmp").c_str()), 0);
  FragmentWriter w(dir, 77, 0);
  std::string error;
  ASSERT_TRUE(w.Write("abc", 1000, &error)) << error;
  std::ifstream in(target);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "precious");
}

TEST(FragmentWriter, SameFlushTimeStillGetsANewName) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  FragmentWriter w(dir, 77, 0);
  std::string error;
  ASSERT_TRUE(w.Write("a", 1000, &error));
  ASSERT_TRUE(w.Write("b", 1000, &error));
  EXPECT_EQ(List(dir).size(), 2u);
}

TEST(FragmentWriter, OldChunksAreDeletedPastTheKeepWindow) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  FragmentWriter w(dir, 77, 1500);
  std::string error;
  for (uint64_t ts : {1000, 2000, 3000, 4000}) ASSERT_TRUE(w.Write("x", ts, &error));
  auto files = List(dir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], model::FragmentFileName(77, 3000));
}

TEST(FragmentWriter, UnwritableDirectoryIsAnErrorNotACrash) {
  FragmentWriter w("/nonexistent-gpunoise-dir", 77, 0);
  std::string error;
  EXPECT_FALSE(w.Write("x", 1, &error));
  EXPECT_NE(error.find("failed to create /nonexistent-gpunoise-dir/"), std::string::npos) << error;
}

// What a pod's process sees when the node agent has made its directory but
// not yet handed it over (collect/pod_fragment_dirs.h): chunks are held
// back, bounded (oldest dropped and counted), and written in order once the
// directory is the process's. Run as uid 65534 in a child, since root
// writes anywhere; the parent plays the agent.
TEST(FragmentWriter, ChunksAreHeldBackUntilTheDirectoryIsHandedOver) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the writer as uid 65534";
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);  // root's, as the agent makes it
  int to_parent[2], to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
    FragmentWriter w(dir, 77, 0);
    w.set_pending_limit(12);
    std::string error;
    if (!w.Write("aaaaaa", 1000, &error) || w.chunks_pending() != 1) ::_exit(11);
    if (w.TakeNote().find("cannot write to " + dir + " yet") != 0) ::_exit(12);
    if (!w.Write("bbbbbb", 2000, &error) || !w.Write("cccccc", 3000, &error)) ::_exit(13);
    // 18 bytes over a bound of 12: the oldest went.
    if (w.chunks_pending() != 2 || w.chunks_lost() != 1) ::_exit(14);
    if (w.TakeNote().find("GPU trace data lost") != 0) ::_exit(15);
    char c = 'x';
    if (::write(to_parent[1], &c, 1) != 1 || ::read(to_child[0], &c, 1) != 1) ::_exit(16);
    if (!w.Write("dddddd", 4000, &error)) ::_exit(17);
    if (w.chunks_pending() != 0 || w.chunks_written() != 3 || w.chunks_lost() != 1) ::_exit(18);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(to_parent[0], &c, 1), 1);
  EXPECT_TRUE(List(dir).empty());
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);  // the agent hands it over
  ASSERT_EQ(::write(to_child[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto files = List(dir);
  ASSERT_EQ(files, (std::vector<std::string>{model::FragmentFileName(77, 2000), model::FragmentFileName(77, 3000),
                                             model::FragmentFileName(77, 4000)}));
  std::ifstream in(dir + "/" + files[0]);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "bbbbbb");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/" + files[2]).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
}

TEST(FragmentWriter, WithoutAHoldLimitAnUnwritableDirectoryLosesTheChunk) {
  FragmentWriter w("/nonexistent-gpunoise-dir", 77, 0);
  w.set_pending_limit(0);
  std::string error;
  EXPECT_FALSE(w.Write("x", 1, &error));
  EXPECT_EQ(w.chunks_pending(), 0u);
}

}  // namespace
}  // namespace gpunoise::cupti
