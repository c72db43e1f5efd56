#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/files.h"

namespace gpunoise {
namespace {

// procfs makes the text afresh at offset 0: the uptime moves on between
// two reads of the one open file.
TEST(RereadableFile, EachReadOfAProcFileIsFresh) {
  RereadableFile uptime("/proc/uptime");
  Result<std::string> first = uptime.Read();
  ASSERT_TRUE(first.ok()) << first.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  Result<std::string> second = uptime.Read();
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE(*first, *second);
  EXPECT_EQ(std::strtod(second->c_str(), nullptr) >= std::strtod(first->c_str(), nullptr), true);
}

TEST(RereadableFile, ReadsAWholeFileLongerThanOneBufferEachTime) {
  char path[] = "/tmp/gpunoise-reread-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text(40000, 'x');
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  RereadableFile file(path);
  Result<std::string> a = file.Read();
  Result<std::string> b = file.Read();
  ::close(fd);
  ::unlink(path);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, text);
  EXPECT_EQ(*b, text);
}

TEST(RereadableFile, AFileThatCouldNotBeOpenedSaysWhyAtEachRead) {
  RereadableFile missing("/proc/no-such-file-here");
  Result<std::string> r = missing.Read();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("failed to open /proc/no-such-file-here"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace gpunoise
