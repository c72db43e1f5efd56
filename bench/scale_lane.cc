#include "scale_lane.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "collect/collector.h"
#include "record/drain.h"
#include "scale_fill.skel.h"

namespace gpunoise::bench {
namespace {

uint64_t ThreadCpuNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A thread's CPU time so far from the scheduler's own account (ns), for a
// thread other than the caller.
uint64_t TaskCpuNs(pid_t tid) {
  std::ifstream in(fmt::format("/proc/self/task/{}/schedstat", tid));
  uint64_t ns = 0;
  in >> ns;
  return ns;
}

// gpunoise record's bound on records per CPU per drain (--drain-batch).
constexpr uint64_t kRecordsPerDrain = 1 << 14;

}  // namespace

Result<std::unique_ptr<ScaleLane>> ScaleLane::Create(std::vector<int> rings, uint64_t ring_bytes,
                                                     uint64_t drain_interval_ms, const std::string& path,
                                                     bool deflate_thread, size_t lanes) {
  if (rings.empty()) return MakeError("a lane needs at least one ring");
  std::unique_ptr<ScaleLane> lane(new ScaleLane());
  lane->rings_ = std::move(rings);
  lane->drain_interval_ms_ = drain_interval_ms;
  int max_ring = 0;
  for (int r : lane->rings_) max_ring = std::max(max_ring, r);
  lane->intake_ = std::make_unique<record::RecordIntake>(static_cast<size_t>(max_ring));
  record::RecordIntake* intake = lane->intake_.get();
  GN_ASSIGN_OR_RETURN(lane->transport_,
                      collect::RingTransport::Create(lane->rings_, ring_bytes,
                                                     [intake](uint32_t cpu, std::span<const uint8_t> data) {
                                                       intake->OnRecord(cpu, data);
                                                     }));
  GN_ASSIGN_OR_RETURN(lane->sink_, perfetto::TraceSink::Create(path, perfetto::TraceCompression::kZlib));
  if (deflate_thread) GN_RETURN_IF_ERROR(lane->sink_->writer().DeflateInBackground());
  if (lanes >= 2) {
    GN_ASSIGN_OR_RETURN(lane->lanes_,
                        record::DrainLanes::Start(lanes, *lane->sink_, static_cast<size_t>(max_ring)));
  }

  lane->skel_ = scale_fill_bpf__open();
  if (!lane->skel_) return MakeError("failed to open the scale_fill program: {}", std::strerror(errno));
  collect::CollectorContext shared;
  lane->transport_->ShareWith(&shared);
  if (!collect::ShareTransportMaps({lane->skel_->maps.gn_rings, lane->skel_->maps.gn_gate,
                                    lane->skel_->maps.gn_lost_kinds, lane->skel_->maps.gn_cpu_ctx},
                                   shared))
    return MakeError("failed to share the transport maps with scale_fill: {}", std::strerror(errno));
  lane->skel_->rodata->gn_wakeup_bytes = lane->transport_->wakeup_bytes();
  if (int err = scale_fill_bpf__load(lane->skel_); err != 0)
    return MakeError("failed to load the scale_fill program: {}", std::strerror(-err));
  return lane;
}

ScaleLane::~ScaleLane() {
  if (thread_.joinable()) {
    stop_ = true;
    thread_.join();
  }
  if (skel_) scale_fill_bpf__destroy(skel_);
}

Result<uint32_t> ScaleLane::Produce(uint32_t ring, uint32_t n, uint64_t first) {
  __u64 args[3] = {ring, n, first};
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));
  if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.gn_scale_fill), &opts) != 0)
    return MakeError("failed to run the scale_fill program: {}", std::strerror(errno));
  return opts.retval;
}

void ScaleLane::Start() { thread_ = std::thread([this] { Run(); }); }

Status ScaleLane::DrainOnce(bool final) {
  auto& batches = intake_->batches();
  for (record::CpuBatch& b : batches) b.drained = 0;
  auto drained = transport_->DrainAll(final ? 0 : kRecordsPerDrain, lanes_ ? &lanes_->fork_join() : nullptr);
  if (!drained.ok()) return drained.error();
  ++result_.drains;
  auto staged = [&batches] {
    uint64_t n = 0;
    for (const record::CpuBatch& b : batches) n += b.staging.staged();
    return n;
  };
  // The recorder's own write path: with lanes, they take and encode.
  const uint64_t before = staged();
  Status st = record::WriteStaged(batches, {}, final, final ? 0 : kRecordsPerDrain, nullptr, *sink_, lanes_.get());
  result_.events_written += before - staged();
  return st;
}

void ScaleLane::Run() {
  uint64_t cpu0 = ThreadCpuNs();
  const pid_t deflate_tid = sink_->writer().background_tid();
  const uint64_t deflate0 = deflate_tid ? TaskCpuNs(deflate_tid) : 0;
  std::vector<pid_t> lane_tids = lanes_ ? lanes_->tids() : std::vector<pid_t>{};
  std::vector<uint64_t> lane0;
  for (pid_t t : lane_tids) lane0.push_back(TaskCpuNs(t));
  Status st = OkStatus();
  while (!stop_ && st.ok()) {
    epoll_event ev;
    int timeout = transport_->backlog() ? 0 : static_cast<int>(drain_interval_ms_);
    ::epoll_wait(transport_->wait_fd(), &ev, 1, timeout);
    st = DrainOnce(false);
  }
  if (st.ok()) st = DrainOnce(true);
  if (st.ok()) st = sink_->FlushEvents();  // waits for the deflate thread
  if (deflate_tid) result_.deflate_cpu_ns = TaskCpuNs(deflate_tid) - deflate0;
  result_.busiest_cpu_ns = ThreadCpuNs() - cpu0;
  result_.drain_cpu_ns = result_.busiest_cpu_ns;
  for (size_t i = 0; i < lane_tids.size(); ++i) {
    const uint64_t ns = TaskCpuNs(lane_tids[i]) - lane0[i];
    result_.drain_cpu_ns += ns;
    result_.busiest_cpu_ns = std::max(result_.busiest_cpu_ns, ns);
  }
  if (st.ok()) st = sink_->Commit();
  result_.file_bytes = sink_->bytes_written();
  for (const record::CpuBatch& b : intake_->batches()) result_.decode_errors += b.decode_errors;
  if (!st.ok()) result_.error = st.error().message;
}

LaneResult ScaleLane::Finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return result_;
}

uint64_t ScaleLane::lost() const {
  uint64_t n = 0;
  for (uint64_t v : transport_->LostPerCpu()) n += v;
  return n;
}

}  // namespace gpunoise::bench
