#include "common/private_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpunoise {
namespace {

// A temporary directory removed, with what is in it, when the test ends.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gpunoise-private-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(PrivateFile, TempFileIsOwnerOnlyWhateverTheUmask) {
  TempDir dir;
  mode_t old = ::umask(0);
  std::string temp, error;
  UniqueFd fd = CreatePrivateTemp(dir.path() + "/t.pftrace", "tmp", &temp, &error);
  ::umask(old);
  ASSERT_TRUE(fd.valid()) << error;
  EXPECT_EQ(ModeOf(temp), 0600u);
  EXPECT_EQ(temp.rfind(dir.path() + "/.t.pftrace.tmp-", 0), 0u) << temp;
}

TEST(PrivateFile, TwoTempFilesInOneDirectoryGetDifferentUnguessableNames) {
  TempDir dir;
  std::string a, b, error;
  UniqueFd fa = CreatePrivateTemp(dir.path() + "/t.pftrace", "tmp", &a, &error);
  UniqueFd fb = CreatePrivateTemp(dir.path() + "/t.pftrace", "tmp", &b, &error);
  ASSERT_TRUE(fa.valid() && fb.valid()) << error;
  EXPECT_NE(a, b);
  // Nothing of the pid in the name: it is what an attacker would guess.
  std::string pid = std::to_string(::getpid());
  EXPECT_EQ(a.find("-" + pid), std::string::npos) << a;
}

TEST(PrivateFile, SymlinkAtTheOutputPathIsRefused) {
  TempDir dir;
  std::string target = dir.path() + "/target";
  std::ofstream(target) << "keep";
  std::string link = dir.path() + "/t.pftrace";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_EQ(CheckOutputPath(link), "refusing to write " + link + ": " + link + " is a symbolic link");
  // A dangling one too: O_CREAT would make its target.
  std::string dangling = dir.path() + "/d.pftrace";
  ASSERT_EQ(::symlink((dir.path() + "/nowhere").c_str(), dangling.c_str()), 0);
  EXPECT_NE(CheckOutputPath(dangling), "");
}

TEST(PrivateFile, DirectoryWritableByOthersWithoutStickyBitIsRefused) {
  TempDir dir;
  std::string open_dir = dir.path() + "/open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  EXPECT_EQ(CheckOutputPath(open_dir + "/t.pftrace"),
            "refusing to write " + open_dir + "/t.pftrace: " + open_dir +
                " is writable by other users and not sticky");
  ASSERT_EQ(::chmod(open_dir.c_str(), 01777), 0);  // like /tmp
  EXPECT_EQ(CheckOutputPath(open_dir + "/t.pftrace"), "");
}

TEST(PrivateFile, ExistingRegularFileMayBeReplacedButNotADirectoryOrFifo) {
  TempDir dir;
  std::string file = dir.path() + "/old.pftrace";
  std::ofstream(file) << "old";
  EXPECT_EQ(CheckOutputPath(file), "");
  std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(CheckOutputPath(fifo).find("not a regular file"), std::string::npos);
  EXPECT_NE(CheckOutputPath(dir.path()).find("is a directory"), std::string::npos);
}

TEST(PrivateFile, RenameRefusesASymlinkPlantedAfterTheChecks) {
  TempDir dir;
  std::string final_path = dir.path() + "/t.pftrace";
  std::string temp, error;
  UniqueFd fd = CreatePrivateTemp(final_path, "tmp", &temp, &error);
  ASSERT_TRUE(fd.valid()) << error;
  std::string target = dir.path() + "/target";
  std::ofstream(target) << "keep";
  ASSERT_EQ(::symlink(target.c_str(), final_path.c_str()), 0);
  EXPECT_FALSE(RenameIntoPlace(temp, final_path, &error));
  EXPECT_NE(error.find("is a symbolic link"), std::string::npos) << error;
  struct stat st {};
  ASSERT_EQ(::lstat(final_path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST(PrivateFile, PrivateDirIsCreatedOwnerOnly) {
  TempDir dir;
  std::string gpu = dir.path() + "/gpu";
  std::string error;
  mode_t old = ::umask(0);
  bool ok = MakeOrCheckPrivateDir(gpu, ::getuid(), ::getgid(), &error);
  ::umask(old);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(ModeOf(gpu), 0700u);
  EXPECT_TRUE(MakeOrCheckPrivateDir(gpu + "/", ::getuid(), ::getgid(), &error)) << error;
}

TEST(PrivateFile, WorldWritableExistingDirIsRefused) {
  TempDir dir;
  std::string gpu = dir.path() + "/gpu";
  ASSERT_EQ(::mkdir(gpu.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(gpu.c_str(), 0777), 0);
  std::string error;
  EXPECT_FALSE(MakeOrCheckPrivateDir(gpu, ::getuid(), ::getgid(), &error));
  EXPECT_EQ(error, "refusing " + gpu + ": writable by other users (mode 0777)");
}

TEST(PrivateFile, ExistingDirOwnedBySomeoneElseIsRefused) {
  TempDir dir;
  std::string gpu = dir.path() + "/gpu";
  ASSERT_EQ(::mkdir(gpu.c_str(), 0700), 0);
  std::string error;
  // Asked for a user who is not the owner: what a squatter's directory is to
  // the user who runs `gpunoise env`.
  uid_t other = ::getuid() == 65534 ? 65533 : 65534;
  EXPECT_FALSE(MakeOrCheckPrivateDir(gpu, other, other, &error));
  EXPECT_EQ(error, "refusing " + gpu + ": owned by uid " + std::to_string(::getuid()) + ", not " +
                       std::to_string(other));
}

TEST(PrivateFile, SymlinkedDirIsRefused) {
  TempDir dir;
  std::string real = dir.path() + "/real";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  std::string link = dir.path() + "/gpu";
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  std::string error;
  EXPECT_FALSE(MakeOrCheckPrivateDir(link, ::getuid(), ::getgid(), &error));
  EXPECT_EQ(error, "refusing " + link + ": it is a symbolic link");
  EXPECT_FALSE(MakeOrCheckPrivateDir(link + "/", ::getuid(), ::getgid(), &error));
}

}  // namespace
}  // namespace gpunoise
