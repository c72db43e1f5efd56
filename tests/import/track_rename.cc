#include "import/track_rename.h"

#include <gtest/gtest.h>

#include "common/files.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "model/track_identity.h"

namespace gpunoise::testing {

RenameResult RenameTracks(const std::string& trace, bool rename, bool drop_identities) {
  // libprotobuf keeps the fields the subset does not declare, so what is not
  // renamed goes back byte for byte.
  perfetto::Trace in, out;
  EXPECT_TRUE(in.ParseFromString(trace));
  RenameResult r;
  for (const perfetto::TracePacket& p : in.packet()) {
    perfetto::TracePacket q = p;
    bool identity = q.has_track_event() && q.track_event().categories_size() > 0 &&
                    q.track_event().categories(0) == model::kTrackIdentityCategory;
    if (identity && drop_identities) continue;
    if (rename && q.has_track_descriptor() && q.track_descriptor().has_name())
      q.mutable_track_descriptor()->set_name("track " + std::to_string(++r.renamed));
    if (rename && identity) q.mutable_track_event()->set_name("renamed instant");
    *out.add_packet() = q;
  }
  r.bytes = out.SerializeAsString();
  return r;
}

std::string TraceFileBytes(const std::string& path) {
  auto bytes = ReadFileToString(path);
  EXPECT_TRUE(bytes.ok()) << path << ": " << (bytes.ok() ? "" : bytes.error().message);
  return bytes.ok() ? *bytes : std::string();
}

}  // namespace gpunoise::testing
