#include "monitor/dump_store.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "integration/support/workloads.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::monitor {
namespace {

namespace fs = std::filesystem;

class DumpStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir(); }
  void TearDown() override { fs::remove_all(dir_); }
  // A dump of `bytes` whose mtime is `age` seconds in the past.
  std::string Add(const std::string& name, size_t bytes, int age) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << std::string(bytes, 'x');
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(age));
    return path;
  }
  std::string dir_;
};

TEST_F(DumpStoreTest, ListsOnlyOurDumpsOldestFirst) {
  Add("gpunoise-flight-20260101-000002-softirq_storm.pftrace", 10, 5);
  Add("gpunoise-flight-20260101-000001-nic_trouble.pftrace", 10, 50);
  Add("other.pftrace", 10, 100);
  Add("gpunoise-flight-notes.txt", 10, 100);
  auto list = DumpStore(dir_, 10, 1 << 20).List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_NE(list[0].path.find("nic_trouble"), std::string::npos);
  EXPECT_NE(list[1].path.find("softirq_storm"), std::string::npos);
}

TEST_F(DumpStoreTest, MakeRoomDeletesTheOldestBeyondMaxDumps) {
  std::string a = Add("gpunoise-flight-a.pftrace", 10, 30);
  std::string b = Add("gpunoise-flight-b.pftrace", 10, 20);
  std::string c = Add("gpunoise-flight-c.pftrace", 10, 10);
  DumpStore store(dir_, 2, 1 << 20);
  EXPECT_EQ(store.MakeRoom(), 2u);  // room for one more under 2
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  EXPECT_TRUE(fs::exists(c));
  EXPECT_EQ(store.MakeRoom(), 0u);
}

TEST_F(DumpStoreTest, EnforceBytesDeletesOldestButKeepsTheNewDump) {
  std::string a = Add("gpunoise-flight-a.pftrace", 600, 30);
  std::string b = Add("gpunoise-flight-b.pftrace", 300, 20);
  std::string n = Add("gpunoise-flight-new.pftrace", 500, 0);
  DumpStore store(dir_, 10, 1000);
  bool too_big = true;
  EXPECT_EQ(store.EnforceBytes(n, &too_big), 1u);
  EXPECT_FALSE(too_big);
  EXPECT_FALSE(fs::exists(a));
  EXPECT_TRUE(fs::exists(b));
  EXPECT_TRUE(fs::exists(n));
}

TEST_F(DumpStoreTest, ADumpLargerThanTheQuotaAloneIsDeletedItself) {
  std::string old = Add("gpunoise-flight-old.pftrace", 100, 30);
  std::string big = Add("gpunoise-flight-big.pftrace", 2000, 0);
  DumpStore store(dir_, 10, 1000);
  bool too_big = false;
  EXPECT_EQ(store.EnforceBytes(big, &too_big), 0u);
  EXPECT_TRUE(too_big);
  EXPECT_FALSE(fs::exists(big));
  EXPECT_TRUE(fs::exists(old));
}

TEST_F(DumpStoreTest, NewPathIsUniqueAndNamesTheDetector) {
  DumpStore store(dir_, 10, 1 << 20);
  // 2026-01-02 03:04:05 UTC
  int64_t t = 1767323045LL * 1'000'000'000;
  std::string p1 = store.NewPath("softirq_storm", t);
  EXPECT_EQ(p1, dir_ + "/gpunoise-flight-20260102-030405-softirq_storm.pftrace");
  std::ofstream(p1) << "x";
  std::string p2 = store.NewPath("softirq_storm", t);
  EXPECT_EQ(p2, dir_ + "/gpunoise-flight-20260102-030405-softirq_storm-2.pftrace");
}

TEST_F(DumpStoreTest, PrepareCreatesTheDirectoryAndRejectsAFile) {
  EXPECT_TRUE(DumpStore(dir_ + "/sub", 1, 1).Prepare().ok());
  EXPECT_TRUE(fs::is_directory(dir_ + "/sub"));
  std::ofstream(dir_ + "/file") << "x";
  auto st = DumpStore(dir_ + "/file", 1, 1).Prepare();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("not a directory"), std::string::npos);
}

// FlightRecorder::WriteDump writes each dump through a compressed
// perfetto::TraceSink at NewPath(): a dump is a trace, private like one.
TEST_F(DumpStoreTest, ADumpIsOwnerOnly) {
  DumpStore store(dir_, 5, 1ull << 30);
  ASSERT_TRUE(store.Prepare().ok());
  std::string path = store.NewPath("softirq", 0);
  mode_t old = ::umask(0);
  auto sink = perfetto::TraceSink::Create(path, perfetto::TraceCompression::kZlib);
  ::umask(old);
  ASSERT_TRUE(sink.ok()) << sink.error().message;
  ASSERT_TRUE((*sink)->Commit().ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

}  // namespace
}  // namespace gpunoise::monitor
