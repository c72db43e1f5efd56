#include "cupti/fragment_writer.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
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

}  // namespace
}  // namespace gpunoise::cupti
