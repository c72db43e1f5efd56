#include "blackbox/markers.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "blackbox/saved_table.h"

namespace gpunoise::blackbox {
namespace {

constexpr const char* kSoftirqEntry = R"(name: softirq_entry
ID: 223
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned int vec;	offset:8;	size:4;	signed:0;
)";

EventTable Current(uint32_t id = 223) {
  auto f = collect::ParseTraceFormat(kSoftirqEntry);
  EXPECT_TRUE(f.ok());
  f->id = id;
  EventTable t;
  t.Add(EventFormat{"irq", "softirq_entry", *f});
  return t;
}

MarkerSet FromLines(const std::vector<std::string>& lines) {
  MarkerSet set;
  uint64_t ts = 100;
  for (const auto& l : lines) AddMarker(l, ts++, &set);
  return set;
}

TEST(Markers, TheTableWrittenAtArmDecodesTheSameIds) {
  EventTable current = Current();
  std::vector<std::string> lines = HeaderAndIdMarkers({"b-1", "6.18.44", "boot"}, current);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "gpunoise-blackbox v1 boot_id=b-1 release=6.18.44 clock=boot");
  lines.push_back(AnchorMarker(5, 6, 7));
  lines.push_back("some other program's marker");
  MarkerSet set = FromLines(lines);
  ASSERT_EQ(set.headers.size(), 1u);
  EXPECT_EQ(set.headers[0].release, "6.18.44");
  ASSERT_EQ(set.anchors.size(), 1u);
  EXPECT_EQ(set.anchors[0].realtime_ns, 7u);
  EXPECT_EQ(set.anchors[0].record_ts, 102u);
  auto table = TableFromMarkers(set, current);
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_NE(table->Find(223), nullptr);
  EXPECT_EQ(table->Find(223)->name, "softirq_entry");
}

TEST(Markers, AnIdThatMovedSinceThatBootIsDecodedByTheBuffersId) {
  // A module's events get other ids in the next boot: the records carry the
  // old one, this boot's format file has the new one.
  MarkerSet set = FromLines(HeaderAndIdMarkers({"b-1", "r", "boot"}, Current(1500)));
  auto table = TableFromMarkers(set, Current(1712));
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_NE(table->Find(1500), nullptr);
  EXPECT_EQ(table->Find(1712), nullptr);
}

TEST(Markers, ATableThatDisagreesWithTheFormatFilesIsRefused) {
  MarkerSet set = FromLines({"gpunoise-blackbox id=223 event=irq/softirq_entry layout=00000000deadbeef"});
  auto table = TableFromMarkers(set, Current());
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.error().message.find("different kernel"), std::string::npos) << table.error().message;

  MarkerSet missing = FromLines({"gpunoise-blackbox id=9 event=mlx5/mlx5_fw layout=0123456789abcdef"});
  auto t2 = TableFromMarkers(missing, Current());
  ASSERT_FALSE(t2.ok());
  EXPECT_NE(t2.error().message.find("no format file"), std::string::npos) << t2.error().message;

  EXPECT_FALSE(TableFromMarkers(MarkerSet{}, Current()).ok());

  std::string layout = LayoutFingerprint(Current().all().begin()->second.format);
  MarkerSet mixed = FromLines({"gpunoise-blackbox id=223 event=irq/softirq_entry layout=" + layout,
                               "gpunoise-blackbox id=223 event=irq/softirq_exit layout=" + layout});
  auto t3 = TableFromMarkers(mixed, Current());
  ASSERT_FALSE(t3.ok());
  EXPECT_NE(t3.error().message.find("two different ways"), std::string::npos);
}

TEST(SavedTable, RoundTripsPrivatelyAndPicksTheNewestEarlierBoot) {
  char tmpl[] = "/tmp/gn-bbstate-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = std::string(tmpl) + "/state";
  std::vector<std::string> lines = HeaderAndIdMarkers({"boot-a", "r", "boot"}, Current());
  ASSERT_TRUE(SaveMarkerLines(dir, "boot-a", lines).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/ids-boot-a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string path;
  auto set = LoadSavedMarkers(dir, "", "boot-now", &path);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(path, dir + "/ids-boot-a");
  EXPECT_EQ(set->ids.size(), 1u);
  // The current boot's own table is not "the previous boot's".
  EXPECT_FALSE(LoadSavedMarkers(dir, "", "boot-a").ok());
  EXPECT_TRUE(LoadSavedMarkers(dir, "boot-a", "").ok());
  EXPECT_FALSE(SaveMarkerLines(dir, "../x", lines).ok());
  std::system(("rm -rf " + std::string(tmpl)).c_str());
}

}  // namespace
}  // namespace gpunoise::blackbox
