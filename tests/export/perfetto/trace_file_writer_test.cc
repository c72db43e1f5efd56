#include "export/perfetto/trace_file_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/files.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/gpunoise-writer-XXXXXX";
  return ::mkdtemp(tmpl);
}

TracePacket Packet(uint64_t ts) {
  TracePacket p;
  p.set_timestamp(ts);
  p.mutable_ftrace_events()->set_cpu(static_cast<uint32_t>(ts % 4));
  return p;
}

TEST(TraceFileWriter, FramesPacketsAsAPerfettoTrace) {
  std::string dir = TempDir();
  std::string path = dir + "/t.pftrace";
  auto w = TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(w.ok()) << w.error().message;
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(w->WritePacket(Packet(i)).ok());
  ASSERT_TRUE(w->Commit().ok());
  auto bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  Trace trace;
  ASSERT_TRUE(trace.ParseFromString(*bytes));
  ASSERT_EQ(trace.packet_size(), 1000);
  EXPECT_EQ(trace.packet(999).timestamp(), 999u);
  EXPECT_EQ(w->bytes_written(), bytes->size());
}

TEST(TraceFileWriter, FileAppearsUnderItsNameOnlyOnCommit) {
  std::string dir = TempDir();
  std::string path = dir + "/t.pftrace";
  auto w = TraceFileWriter::Create(path);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->WritePacket(Packet(1)).ok());
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_FALSE(PathExists(path));
  EXPECT_TRUE(PathExists(w->temp_path()));
  std::string temp = w->temp_path();
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_TRUE(PathExists(path));
  EXPECT_FALSE(PathExists(temp));
  auto names = ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 1u) << "reserve and temporary files are gone";
}

TEST(TraceFileWriter, AbandonedWriterLeavesNoFiles) {
  std::string dir = TempDir();
  {
    auto w = TraceFileWriter::Create(dir + "/t.pftrace");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->WritePacket(Packet(1)).ok());
  }
  auto names = ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
}

TEST(TraceFileWriter, RejectsUnwritableOrDirectoryPaths) {
  EXPECT_FALSE(TraceFileWriter::Create("/nonexistent-dir/t.pftrace").ok());
  std::string dir = TempDir();
  auto w = TraceFileWriter::Create(dir);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("directory"), std::string::npos);
}

TEST(TraceFileWriter, FramingMatchesProtobufForLargePackets) {
  TracePacket p;
  p.mutable_process_tree();
  for (int i = 0; i < 5000; ++i) p.mutable_process_tree()->add_threads()->set_name("thread");
  std::string serialized = p.SerializeAsString();
  std::string framed;
  AppendFramedPacket(serialized, &framed);
  Trace t;
  *t.add_packet() = p;
  EXPECT_EQ(framed, t.SerializeAsString());
}

}  // namespace
}  // namespace gpunoise::perfetto
