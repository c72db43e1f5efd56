// GPUs by identity, not ordinal: the converter keys each GPU's group by the
// UUID of CUPTI's device record, whatever ordinal the process sees it
// under; the ordinal is a label. The NVML side keys by the same UUID
// (tests/gpu/nvml_sampler_test.cc).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cupti/activity_converter.h"
#include "cupti/converter_test_records.h"
#include "export/perfetto/trace_view.h"
#include "model/gpu_tracks.h"
#include "model/track_identity.h"

namespace gpunoise::cupti {
namespace {

// The args of the identity instant the chunk gives track `uuid`, as text.
std::map<std::string, std::string> IdentityArgs(const TraceView& v, uint64_t uuid) {
  for (const auto& p : v.trace().packet()) {
    if (!p.has_track_event() || p.track_event().categories_size() == 0 ||
        p.track_event().categories(0) != model::kTrackIdentityCategory)
      continue;
    std::map<std::string, std::string> args;
    for (const auto& a : p.track_event().debug_annotations())
      args[a.name()] = a.has_string_value() ? a.string_value()
                       : a.has_uint_value() ? std::to_string(a.uint_value())
                                            : std::to_string(a.int_value());
    if (args["track_uuid"] == std::to_string(uuid)) return args;
  }
  return {};
}

TEST(ActivityConverter, DeviceRecordArrivingLateRenamesTheTracks) {
  ActivityConverter c(Options());
  auto k = Kernel(100, 300, 7, 1);
  c.Convert(AsRecord(&k));
  TraceView before(c.TakeChunk(Now(1000), false));
  const auto* first = before.TrackNamed("GPU 0 stream 7");
  ASSERT_NE(first, nullptr);
  uint64_t first_uuid = first->uuid(), first_parent = first->parent_uuid();
  auto dev = Device(0, "NVIDIA H200");
  c.Convert(AsRecord(&dev));
  auto k2 = Kernel(1100, 1300, 7, 2);
  c.Convert(AsRecord(&k2));
  TraceView after(c.TakeChunk(Now(2000), false));
  // The early track keeps its parent (a track never moves) and gets the model.
  const auto* early = after.Track(first_uuid);
  ASSERT_NE(early, nullptr);
  EXPECT_EQ(early->name(), "GPU 0 (H200) stream 7");
  EXPECT_EQ(early->parent_uuid(), first_parent);
  EXPECT_NE(after.TrackNamed("GPU 0 (H200)"), nullptr);
  // Later work goes to the UUID's group.
  const auto* later = after.TrackNamed("GPU-10111213 (H200) stream 7");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->uuid(), c.StreamTrackUuid(0, 1, 7, 0));
  EXPECT_EQ(after.SlicesOn(later->uuid()).size(), 1u);
  const auto* group = after.Track(after.Track(later->parent_uuid())->parent_uuid());
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->uuid(), model::GpuGroupTrackUuidByUuid(kNode, kDeviceUuid));
}

TEST(ActivityConverter, VisibleDevicesMapTheOrdinalToThePhysicalGpuWithoutAUuid) {
  ConverterOptions o = Options();
  o.visible_devices = {3, 5};
  ActivityConverter c(o);
  auto dev = Device(0, "NVIDIA H200", -1);
  c.Convert(AsRecord(&dev));
  auto k = Kernel(100, 300, 7, 1);
  c.Convert(AsRecord(&k));
  TraceView v(c.TakeChunk(Now(1000), false));
  const auto* gpu = v.TrackNamed("GPU 3 (H200)");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->uuid(), model::GpuGroupTrackUuid(kNode, 3));
  EXPECT_NE(gpu->description().find("no UUID"), std::string::npos) << gpu->description();
  EXPECT_NE(v.TrackNamed("GPU 3 (H200) stream 7"), nullptr);
}

// Two processes see one physical GPU under different ordinals (one in a
// container with NVIDIA_VISIBLE_DEVICES, the other with a CUDA_VISIBLE_DEVICES
// whose index counts in CUDA's order, not NVML's): the UUID puts both under
// one group, whatever their ordinals and physical-index guesses say.
TEST(ActivityConverter, GpuIsNamedByUuidWhenOrdinalsDisagree) {
  ConverterOptions oa = Options();
  oa.visible_devices = {3, 5};
  ActivityConverter a(oa);
  ConverterOptions ob = Options();
  ob.pid = kPid + 1;
  ob.visible_devices = {2};
  ActivityConverter b(ob);
  auto other = Device(0, "NVIDIA H200", 0x40);
  auto shared_a = Device(1, "NVIDIA H200");
  auto shared_b = Device(0, "NVIDIA H200");
  a.Convert(AsRecord(&other));
  a.Convert(AsRecord(&shared_a));
  b.Convert(AsRecord(&shared_b));
  auto ka = Kernel(100, 300, 7, 1);
  ka.deviceId = 1;
  a.Convert(AsRecord(&ka));
  auto kb = Kernel(150, 250, 7, 1);
  b.Convert(AsRecord(&kb));
  TraceView va(a.TakeChunk(Now(1000), false));
  TraceView vb(b.TakeChunk(Now(1000), false));
  uint64_t shared = model::GpuGroupTrackUuidByUuid(kNode, kDeviceUuid);
  for (TraceView* v : {&va, &vb}) {
    const auto* stream = v->TrackNamed("GPU-10111213 (H200) stream 7");
    ASSERT_NE(stream, nullptr);
    const auto* group = v->Track(v->Track(stream->parent_uuid())->parent_uuid());
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->uuid(), shared);
    EXPECT_EQ(group->name(), "GPU-10111213 (H200)");
    EXPECT_EQ(group->description(), va.Track(shared)->description());
    EXPECT_EQ(v->TrackNamed("GPU 5 (H200)"), nullptr);
    EXPECT_EQ(v->TrackNamed("GPU 2 (H200)"), nullptr);
  }
  // Each process's ordinal is kept as a label on its own stream track.
  EXPECT_NE(va.TrackNamed("GPU-10111213 (H200) stream 7")->description().find("CUDA device 1"),
            std::string::npos);
  EXPECT_NE(vb.TrackNamed("GPU-10111213 (H200) stream 7")->description().find("CUDA device 0"),
            std::string::npos);
  // The other GPU of process a is a group of its own, unused so far.
  EXPECT_NE(model::GpuGroupTrackUuidByUuid(kNode, "GPU-40414243-4445-4647-4849-4a4b4c4d4e4f"), shared);
}

// The report names a GPU and finds its NUMA node by the group's identity,
// not its name: the UUID for the UUID's group, the physical index for the
// index's group (work before the device record), the model for both.
TEST(ActivityConverter, GpuGroupIdentityCarriesItsUuidIndexAndModel) {
  ConverterOptions o = Options();
  o.visible_devices = {3};
  ActivityConverter c(o);
  auto k = Kernel(100, 300, 7, 1);
  c.Convert(AsRecord(&k));
  auto dev = Device(0, "NVIDIA H200");
  c.Convert(AsRecord(&dev));
  auto k2 = Kernel(1100, 1300, 7, 2);
  c.Convert(AsRecord(&k2));
  TraceView v(c.TakeChunk(Now(2000), false));
  auto by_index = IdentityArgs(v, model::GpuGroupTrackUuid(kNode, 3));
  EXPECT_EQ(by_index["kind"], model::kTrackKindGpuDevice);
  EXPECT_EQ(by_index["gpu_index"], "3");
  EXPECT_EQ(by_index["gpu_model"], "H200");
  EXPECT_EQ(by_index.count("gpu_uuid"), 0u);
  auto by_uuid = IdentityArgs(v, model::GpuGroupTrackUuidByUuid(kNode, kDeviceUuid));
  EXPECT_EQ(by_uuid["kind"], model::kTrackKindGpuDevice);
  EXPECT_EQ(by_uuid["gpu_uuid"], kDeviceUuid);
  EXPECT_EQ(by_uuid["gpu_model"], "H200");
  EXPECT_EQ(by_uuid.count("gpu_index"), 0u);
  // What findings call them: the names the writer gave the groups.
  model::TrackIdentity id;
  id.gpu_uuid = kDeviceUuid;
  id.gpu_model = "H200";
  EXPECT_EQ(model::GpuDisplayName(id), v.Track(model::GpuGroupTrackUuidByUuid(kNode, kDeviceUuid))->name());
}

}  // namespace
}  // namespace gpunoise::cupti
