// Stop signals reach `gpunoise record` however it was started: a script's
// `gpunoise record ... &` runs it with SIGINT ignored. The recorder blocks
// its stop signals and reads them from a signalfd, and Linux queues a
// blocked signal even when its disposition is "ignore", so the ignored
// SIGINT still stops it (a handler-based design would have to undo the
// inherited SIG_IGN itself).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>

#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

TEST(RecordIntegration, SigintStopsARecordingStartedWithSigintIgnored) {
  GN_REQUIRE_REAL_EBPF();
  std::string out = MakeTempDir() + "/ignored-sigint.pftrace";
  // `trap "" INT` ignores SIGINT, and exec keeps it ignored, as a
  // non-interactive shell does for a background job.
  ChildProcess rec({"sh", "-c", "trap '' INT; exec \"$0\" record -o \"$1\"", GpunoiseBinary(), out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  rec.Signal(SIGINT);
  EXPECT_EQ(rec.Wait(20s), 0) << "still running 20 s after SIGINT, or failed:\n" << rec.stderr_text();
  std::string error;
  EXPECT_TRUE(ReadTrace(out, &error).has_value()) << error;
}

}  // namespace
}  // namespace gpunoise::testing
