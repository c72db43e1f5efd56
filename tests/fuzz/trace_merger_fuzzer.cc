// `gpunoise merge` and `record --gpu-dir` on an input file: packet framing,
// sequence renumbering, machine ids, another machine's clock snapshots
// turned into RemoteClockSync packets, and compressed blocks (inflated,
// renumbered, and compressed again when the output is), written through
// the real trace writer into a private directory in /dev/shm.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "export/perfetto/trace_file_writer.h"
#include "merge/machine_alignment.h"
#include "merge/trace_merger.h"
#include "fuzz/memfd_file.h"

namespace {

std::string g_dir;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/dev/shm/gpunoise-merge-fuzz-XXXXXX";
  if (!::mkdtemp(tmpl)) ::abort();
  g_dir = tmpl;
  // The writer's temporary files are removed by its destructor (nothing is
  // committed); the directory goes when the run ends.
  std::atexit([] { ::rmdir(g_dir.c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpunoise::perfetto;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // The pieces the merger is made of, on the input as one packet.
  (void)RenumberSequence(bytes, [](uint32_t id) { return id + 7; }, 3);
  (void)RenumberSequence(bytes, [](uint32_t id) { return id; }, 0);
  (void)AsRemoteClockSync(bytes, 3, -1'000'000'000);
  if (auto block = FindCompressedPackets(bytes); block.ok() && *block) {
    (void)ForEachPacket((*block)->bytes, [](std::string_view, uint64_t) { return gpunoise::OkStatus(); });
  }
  (void)ForEachPacket(bytes, [](std::string_view p, uint64_t) {
    (void)RenumberSequence(p, [](uint32_t id) { return id ^ 1; });
    return gpunoise::OkStatus();
  });

  // The whole input as a file to merge, into a plain and a compressed output.
  gpunoise::fuzz::MemFile file(data, size);
  if (!file.valid()) return 0;
  for (TraceCompression compression : {TraceCompression::kNone, TraceCompression::kZlib}) {
    auto out = TraceFileWriter::Create(g_dir + "/merged.pftrace", 0, compression);
    if (!out.ok()) ::abort();  // the directory is ours: this is a bug
    TraceMerger merger(&*out, 2);
    uint32_t machine = compression == TraceCompression::kZlib ? 1 : 0;
    merger.set_remote_boottime_offset(-1'000'000'000);
    (void)merger.Append(file.Dup(), "input", machine);
    (void)out->Flush();
  }
  return 0;
}
