#include "record/gpu/fragment_pid_translator.h"

#include <gtest/gtest.h>

#include <fstream>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"
#include "merge/trace_merger.h"
#include "record/gpu/gpu_fragments.h"
#include "model/gpu_capture.h"

namespace gpunoise::gpu {
namespace {

constexpr uint64_t kNs = 4026532777;

// A fragment's packets as the library writes them: a process track, thread
// tracks with namespace-local ids, and a launch slice on the first thread.
std::string FragmentPackets(int32_t pid, std::initializer_list<int32_t> tids) {
  perfetto::Trace t;
  auto* p = t.add_packet();
  p->set_trusted_packet_sequence_id(1);
  auto* proc = p->mutable_track_descriptor();
  proc->set_uuid(100);
  proc->mutable_process()->set_pid(pid);
  proc->mutable_process()->set_process_name("trainer");
  uint64_t uuid = 200;
  for (int32_t tid : tids) {
    auto* tp = t.add_packet();
    tp->set_trusted_packet_sequence_id(1);
    auto* td = tp->mutable_track_descriptor();
    td->set_uuid(uuid++);
    td->mutable_thread()->set_pid(pid);
    td->mutable_thread()->set_tid(tid);
  }
  auto* e = t.add_packet();
  e->set_trusted_packet_sequence_id(1);
  e->set_timestamp(150);
  e->mutable_track_event()->set_track_uuid(200);
  e->mutable_track_event()->set_name("cudaLaunchKernel");
  return t.SerializeAsString();
}

perfetto::TrackDescriptor Descriptor(const std::string& bytes) {
  perfetto::TracePacket p;
  EXPECT_TRUE(p.ParseFromString(bytes));
  return p.track_descriptor();
}

model::PidNsChain Chain(int32_t tid, int32_t tgid) {
  model::PidNsChain c;
  c.level = 1;
  c.count = 1;
  c.at[0] = {kNs, 1, tid, tgid};
  return c;
}

TEST(FragmentPidTranslator, ProcessAndThreadDescriptorsGetHostIds) {
  model::PidNsMap map;
  map.AddTask(5000, 5000, Chain(1, 1), 0);
  map.AddTask(5007, 5000, Chain(7, 1), 50);
  FragmentPidTranslator tr(&map);
  model::FragmentName name{1, 300, true, kNs};
  ASSERT_TRUE(tr.Select(name, 0));

  perfetto::Trace in;
  ASSERT_TRUE(in.ParseFromString(FragmentPackets(1, {1, 7})));
  auto proc = tr.Rewrite(in.packet(0).SerializeAsString());
  ASSERT_TRUE(proc.ok());
  EXPECT_EQ(Descriptor(*proc).process().pid(), 5000);
  EXPECT_EQ(Descriptor(*proc).process().process_name(), "trainer");  // the rest as it was
  auto main_thread = tr.Rewrite(in.packet(1).SerializeAsString());
  ASSERT_TRUE(main_thread.ok());
  EXPECT_EQ(Descriptor(*main_thread).thread().pid(), 5000);
  EXPECT_EQ(Descriptor(*main_thread).thread().tid(), 5000);
  auto worker = tr.Rewrite(in.packet(2).SerializeAsString());
  ASSERT_TRUE(worker.ok());
  EXPECT_EQ(Descriptor(*worker).thread().tid(), 5007);
  EXPECT_EQ(Descriptor(*worker).uuid(), 201u);
  // Packets without a track descriptor pass unchanged.
  std::string event = in.packet(3).SerializeAsString();
  auto same = tr.Rewrite(event);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, event);
  EXPECT_EQ(tr.stats().processes_translated, 1u);
  EXPECT_EQ(tr.stats().threads_translated, 2u);
  EXPECT_EQ(tr.stats().threads_unmapped, 0u);
}

TEST(FragmentPidTranslator, TheStreamGroupOfAProcessIsRenamedWithItsHostPid) {
  model::PidNsMap map;
  map.AddTask(5000, 5000, Chain(1, 1), 0);
  FragmentPidTranslator tr(&map);
  ASSERT_TRUE(tr.Select(model::FragmentName{1, 300, true, kNs}, 0));
  perfetto::TracePacket p;
  p.mutable_track_descriptor()->set_uuid(9);
  p.mutable_track_descriptor()->set_name("trainer 1");
  p.mutable_track_descriptor()->set_description("GPU work of process 1");
  auto out = tr.Rewrite(p.SerializeAsString());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Descriptor(*out).name(), "trainer 5000");
  EXPECT_EQ(Descriptor(*out).description(), "GPU work of process 5000");
  // Other named tracks keep their names, digits or not.
  p.mutable_track_descriptor()->set_name("GPU 1 (H200) stream 1");
  p.mutable_track_descriptor()->set_description("stream 1 of context 1 in process 1");
  out = tr.Rewrite(p.SerializeAsString());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Descriptor(*out).name(), "GPU 1 (H200) stream 1");
}

TEST(FragmentPidTranslator, HostNamespaceAndOldNamesNeedNoRewrite) {
  FragmentPidTranslator tr(nullptr);
  EXPECT_FALSE(tr.Select(model::FragmentName{42, 10, true, model::kInitPidNsInode}, 0));
  EXPECT_FALSE(tr.Select(model::FragmentName{42, 10, false, 0}, 0));
}

TEST(FragmentPidTranslator, UnseenNamespaceIsCountedAndAttachedToNoThread) {
  model::PidNsMap map;
  FragmentPidTranslator tr(&map);
  ASSERT_TRUE(tr.Select(model::FragmentName{1, 300, true, kNs + 5}, 0));
  perfetto::Trace in;
  ASSERT_TRUE(in.ParseFromString(FragmentPackets(1, {1, 9})));
  auto proc = tr.Rewrite(in.packet(0).SerializeAsString());
  ASSERT_TRUE(proc.ok());
  EXPECT_FALSE(Descriptor(*proc).has_process());
  EXPECT_NE(Descriptor(*proc).name().find("no host process known"), std::string::npos);
  auto thread = tr.Rewrite(in.packet(2).SerializeAsString());
  ASSERT_TRUE(thread.ok());
  EXPECT_FALSE(Descriptor(*thread).has_thread());
  EXPECT_NE(Descriptor(*thread).name().find("thread 9 of pid 1 in pid namespace"), std::string::npos);
  EXPECT_EQ(tr.stats().processes_unmapped, 1u);
  EXPECT_EQ(tr.stats().threads_unmapped, 1u);
  ASSERT_EQ(tr.stats().problems.size(), 1u);
  EXPECT_NE(tr.stats().problems[0].find("no task of that namespace was seen"), std::string::npos);
}

TEST(FragmentPidTranslator, ThreadUnknownInItsWindowIsNotGuessed) {
  model::PidNsMap map;
  map.AddTask(5000, 5000, Chain(1, 1), 0);
  map.AddTask(5007, 5000, Chain(7, 1), 500);  // born after the fragment's window
  FragmentPidTranslator tr(&map);
  ASSERT_TRUE(tr.Select(model::FragmentName{1, 300, true, kNs}, 100));
  perfetto::Trace in;
  ASSERT_TRUE(in.ParseFromString(FragmentPackets(1, {7})));
  auto thread = tr.Rewrite(in.packet(1).SerializeAsString());
  ASSERT_TRUE(thread.ok());
  EXPECT_FALSE(Descriptor(*thread).has_thread());
  EXPECT_EQ(tr.stats().threads_unmapped, 1u);
  EXPECT_EQ(tr.stats().processes_translated, 1u);
}

TEST(FragmentPidTranslator, AppendGpuFragmentsTranslatesEachFragmentInItsWindow) {
  char tmpl[] = "/tmp/gpunoise-pidns-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  // Two containers, both pid 1, one flush each; and a host process.
  std::ofstream(dir + "/" + model::FragmentFileName(1, 1000, kNs), std::ios::binary) << FragmentPackets(1, {1});
  std::ofstream(dir + "/" + model::FragmentFileName(1, 1000, kNs + 1), std::ios::binary)
      << FragmentPackets(1, {1});
  std::ofstream(dir + "/" + model::FragmentFileName(77, 1000), std::ios::binary) << FragmentPackets(77, {77});
  model::PidNsMap map;
  map.AddTask(5000, 5000, Chain(1, 1), 0);
  auto window = ListFragmentWindow(dir, 0, 0);
  ASSERT_TRUE(window.ok());
  ASSERT_EQ(window->files.size(), 3u);
  std::string out_path = dir + "/out.pftrace";
  auto writer = perfetto::TraceFileWriter::Create(out_path);
  ASSERT_TRUE(writer.ok());
  perfetto::TraceMerger merger(&*writer, 3);
  FragmentPidTranslator tr(&map);
  FragmentsAppended r = AppendGpuFragments(window->files, merger, window->before, &tr);
  EXPECT_EQ(r.processes, 3u);  // two pid 1s are two processes
  ASSERT_TRUE(writer->Commit().ok());
  perfetto::Trace t;
  std::ifstream f(out_path, std::ios::binary);
  ASSERT_TRUE(t.ParseFromIstream(&f));
  std::multiset<int32_t> pids;
  int unbound = 0;
  for (const auto& p : t.packet()) {
    if (!p.has_track_descriptor() || p.track_descriptor().has_thread()) continue;
    if (p.track_descriptor().has_process()) pids.insert(p.track_descriptor().process().pid());
    else ++unbound;
  }
  EXPECT_EQ(pids, (std::multiset<int32_t>{77, 5000}));
  // The second container's process and thread tracks: no host task known.
  EXPECT_EQ(unbound, 2);
  EXPECT_EQ(tr.stats().processes_unmapped, 1u);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace gpunoise::gpu
