#include "monitor/flight_recorder.h"

#include "model/redact.h"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>

#include "collect/clock_discipline.h"
#include "collect/host_info.h"
#include "collect/irq_collector.h"
#include "collect/proc_scanner.h"
#include "collect/record_decoder.h"
#include "collect/ring_transport.h"
#include "collect/sched_collector.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/strings.h"
#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/track_event_writer.h"
#include "monitor/dump_store.h"
#include "export/perfetto/trace_sink.h"

#ifndef GPUNOISE_VERSION
#define GPUNOISE_VERSION "0.1.0"
#endif

namespace gpunoise::monitor {
namespace {

// The findings track's packet sequence (the sink's own track events use 1,
// GPU fragments 2 and up from 3 in merged traces).
constexpr uint32_t kFindingSequenceId = 100;
// Events per bundle in a dump.
constexpr size_t kBatch = 8192;

int64_t UnixNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string Hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// Every possible CPU (not only the online ones): a CPU that comes online
// later must find its ring.
std::vector<int> PossibleCpus() {
  int n = libbpf_num_possible_cpus();
  std::vector<int> cpus;
  for (int i = 0; i < std::max(n, 1); ++i) cpus.push_back(i);
  return cpus;
}

}  // namespace

std::string_view DumpOutcomeName(DumpOutcome outcome) {
  switch (outcome) {
    case DumpOutcome::kStarted: return "started";
    case DumpOutcome::kRateLimited: return "rate_limited";
    case DumpOutcome::kBusy: return "busy";
    case DumpOutcome::kFailed: return "failed";
  }
  return "failed";
}

Result<std::unique_ptr<FlightRecorder>> FlightRecorder::Start(const FlightRecorderConfig& config,
                                                              const collect::TracepointCatalog& catalog,
                                                              collect::AttachMode attach_mode) {
  GN_RETURN_IF_ERROR(DumpStore(config.dump_dir, config.max_dumps, config.max_dump_bytes).Prepare());
  auto fr = std::make_unique<FlightRecorder>();
  fr->config_ = config;
  fr->ring_ = std::make_unique<RecordRing>(config.max_bytes, config.window_ns);
  fr->kernel_log_.set_window_ns(config.window_ns);
  std::vector<int> cpus = PossibleCpus();
  fr->lost_seen_.assign(cpus.size(), 0);
  // Small kernel rings: they only bridge the drain period (100 ms); at most
  // 64 MiB in all on nodes with many CPUs.
  uint64_t per_cpu = std::clamp<uint64_t>((64ull << 20) / cpus.size(), 256 << 10, 2 << 20);
  RecordRing* ring = fr->ring_.get();
  auto handler = [ring](uint32_t cpu, std::span<const uint8_t> data) { ring->Append(cpu, data); };
  GN_ASSIGN_OR_RETURN(fr->transport_, collect::RingTransport::Create(cpus, per_cpu, handler));

  collect::CollectorContext context;
  context.catalog = &catalog;
  fr->transport_->ShareWith(&context);
  context.attach_mode = attach_mode;
  fr->collectors_.push_back(std::make_unique<collect::SchedCollector>());
  // NET_RX storms sampled as `record` samples them: the flight recorder is
  // on during the storms it is there to catch.
  auto irq = std::make_unique<collect::IrqCollector>(true, true, false, collect::kDefaultNetRxSampleEvery);
  fr->irq_ = irq.get();
  fr->collectors_.push_back(std::move(irq));
  bool any = false;
  for (auto& c : fr->collectors_) c->mutable_report().name = "flight_" + std::string(c->name());
  collect::StartCollectors(fr->collectors_, context);
  for (auto& c : fr->collectors_) any = any || c->report().state != model::CollectorState::kDisabled;
  if (!any) return MakeError("failed to start the flight recorder: neither the sched nor the irq collector could start");
  return fr;
}

FlightRecorder::~FlightRecorder() {
  WaitForDump();
  collect::StopCollectors(collectors_);
}

int FlightRecorder::wait_fd() const { return transport_->wait_fd(); }

Status FlightRecorder::Drain(uint64_t now) {
  auto drained = transport_->DrainAll();
  if (!drained.ok()) return drained.error();
  std::vector<uint64_t> lost = transport_->LostPerCpu();
  if (lost_seen_.size() < lost.size()) lost_seen_.resize(lost.size(), 0);
  for (size_t cpu = 0; cpu < lost.size(); ++cpu) {
    if (lost[cpu] > lost_seen_[cpu]) {
      lost_total_ += lost[cpu] - lost_seen_[cpu];
      ring_->MarkLoss(static_cast<uint32_t>(cpu));
    }
    lost_seen_[cpu] = lost[cpu];
  }
  ring_->Trim(now);
  kernel_log_.Trim(now);
  return OkStatus();
}

void FlightRecorder::Reconfigure(const FlightRecorderConfig& config) {
  bool new_ring = config.max_bytes != config_.max_bytes || config.window_ns != config_.window_ns;
  config_ = config;
  kernel_log_.set_window_ns(config.window_ns);
  if (new_ring) {
    // The handler holds the ring's address: swap contents, not the object.
    *ring_ = RecordRing(config.max_bytes, config.window_ns);
  }
  if (Status st = DumpStore(config.dump_dir, config.max_dumps, config.max_dump_bytes).Prepare(); !st.ok())
    log::Warning("monitor: {}", st.error().message);
}

void FlightRecorder::AddKernelLog(std::vector<model::KernelLogEntry> entries, uint64_t lost_before, uint64_t now) {
  kernel_log_fed_ = true;
  kernel_log_.Add(std::move(entries), lost_before, now);
}

DumpOutcome FlightRecorder::RequestDump(DumpRequest request) {
  auto count = [this](DumpOutcome o) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++outcomes_[std::string(DumpOutcomeName(o))];
    return o;
  };
  if (dumped_once_ && request.now - last_dump_ts_ < config_.dump_interval_ns) return count(DumpOutcome::kRateLimited);
  if (writing_.load()) return count(DumpOutcome::kBusy);
  if (writer_.joinable()) writer_.join();
  DumpStore store(config_.dump_dir, config_.max_dumps, config_.max_dump_bytes);
  if (Status st = store.Prepare(); !st.ok()) {
    log::Error("monitor: {}", st.error().message);
    return count(DumpOutcome::kFailed);
  }
  uint64_t deleted = store.MakeRoom();
  if (deleted) CountOutcome("", deleted);
  std::string path = store.NewPath(request.file_tag.empty() ? request.detector : request.file_tag, UnixNowNs());
  dumped_once_ = true;
  last_dump_ts_ = request.now;
  writing_.store(true);
  // The records move to the writer (no copy) and are freed as it goes;
  // the live ring refills meanwhile, so memory stays within two rings.
  // The kernel log is copied (a few hundred KiB at most): the live ring
  // keeps its records for the next dump's window.
  std::optional<KernelLogRing> log;
  if (kernel_log_fed_) log = kernel_log_;
  writer_ = std::thread([this, snapshot = ring_->TakeAll(), log = std::move(log), request = std::move(request), path,
                         gid = config_.dump_gid]() mutable {
    WriteDump(std::move(snapshot), std::move(log), std::move(request), path, gid);
    writing_.store(false);
  });
  return DumpOutcome::kStarted;
}

void FlightRecorder::WaitForDump() {
  if (writer_.joinable()) writer_.join();
}

void FlightRecorder::CountOutcome(const std::string& result, uint64_t deleted) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  if (!result.empty()) ++outcomes_[result];
  deleted_ += deleted;
}

std::string FlightRecorder::last_dump_path() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return last_path_;
}

model::ProcessSnapshot FlightRecorder::ScanProcesses() const {
  model::ProcessSnapshot snapshot = collect::ScanProcesses();
  if (config_.redact) model::RedactCommandLines(&snapshot);
  return snapshot;
}

void FlightRecorder::WriteDump(RecordRing snapshot, std::optional<KernelLogRing> log, DumpRequest request,
                               std::string path, int gid) {
  // "written" is counted once the file is committed and within quota.
  // Compressed like a recording: more dumps fit in max-dump-bytes.
  auto sink_or = perfetto::TraceSink::Create(path, perfetto::TraceCompression::kZlib, gid);
  if (!sink_or.ok()) {
    log::Error("monitor: failed to write flight-recorder dump {}: {}", path, sink_or.error().message);
    CountOutcome("failed", 0);
    return;
  }
  std::unique_ptr<perfetto::TraceSink> sink = std::move(sink_or).value();
  sink->set_irq_table(request.irqs);
  collect::IrqCollector* irq = irq_;
  sink->set_irq_name_fallback([irq](int32_t n) { return irq->LookupIrqName(n); });

  // Every CPU's data is complete after the newest record the ring dropped;
  // older stragglers of other CPUs are left out so that all CPUs start
  // together.
  uint64_t data_start = snapshot.complete_from();
  if (!data_start) data_start = snapshot.oldest_ts();
  // An alert's window: the ring may reach further back than asked, and
  // every node it reached starts at the same instant.
  data_start = std::max(data_start, request.window_start);
  sink->set_data_start(data_start);

  model::SessionInfo session;
  session.tool_version = GPUNOISE_VERSION;
  session.hostname = Hostname();
  session.command_line = config_.command_line;
  session.start_ts = data_start;
  session.end_ts = request.now;
  session.end_reason = "flight recorder: " + request.title;
  for (const auto& c : collectors_) session.collectors.push_back(c->report());
  // Which machine and boot, so `gpunoise merge` tells this dump from other
  // machines'. The clock discipline is known only now, at the dump; the
  // window's start is in the past.
  model::HostInfo host = collect::ReadHostInfo();
  session.boot_id = host.boot_id;
  session.machine_name = host.machine_name;
  session.clock_end = collect::ReadClockDiscipline();
  Status st = sink->WriteHeader(host, ScanProcesses(), session);

  // One pass over the records, freeing them as it goes: decoded events are
  // staged per CPU and written (sorted, in bundles) whenever the stage
  // holds kStageEvents, so memory stays small whatever the ring held. A
  // CPU's records are in time order in the ring but for the rare pair that
  // one program's interrupting another swapped (bpf/common.bpf.h), which
  // sorting a stage puts right.
  constexpr size_t kStageEvents = 65536;
  std::map<uint32_t, std::vector<model::Event>> stage;
  std::map<uint32_t, bool> loss;
  std::map<uint32_t, uint64_t> written;
  size_t staged = 0;
  uint64_t parse_errors = 0;
  auto flush = [&]() {
    for (auto& [cpu, events] : stage) {
      std::stable_sort(events.begin(), events.end(),
                       [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; });
      for (size_t i = 0; st.ok() && i < events.size(); i += kBatch) {
        size_t n = std::min(kBatch, events.size() - i);
        st = sink->WriteCpuBatch(cpu, std::span<const model::Event>(events.data() + i, n), loss[cpu]);
        loss[cpu] = false;
      }
      written[cpu] += events.size();
      events.clear();
    }
    staged = 0;
  };
  snapshot.ConsumeAll([&](const RecordRing::Entry& e) {
    if (!st.ok()) return;
    if (e.record.empty()) {
      if (e.loss_before) loss[e.cpu] = true;
      return;
    }
    std::vector<model::Event>& events = stage[e.cpu];
    std::array<model::Event, 2> decoded;  // a softirq slice is two events
    collect::DecodeResult result;
    size_t n = collect::DecodeRecordEvents(e.record, e.cpu, decoded, &result);
    if (n == 0) {
      ++parse_errors;
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      if (decoded[i].ts < data_start) continue;
      events.push_back(std::move(decoded[i]));
      ++staged;
    }
    if (staged >= kStageEvents) flush();
  });
  flush();
  stage.clear();
  // The untimed count of the window is what its timed entries carried.
  session.netrx_sample_every = collect::kDefaultNetRxSampleEvery;
  session.netrx_untimed = sink->netrx_untimed();
  for (const auto& [cpu, n] : written) {
    model::CpuLoss l;
    l.cpu = cpu;
    l.events = n;
    session.cpus.push_back(l);
  }
  Status footer = sink->WriteFooter(ScanProcesses(), session);
  if (st.ok()) st = footer;

  // The kernel log of the window, as `record` writes it (Perfetto log
  // packets: the trace processor's android_logs, the report's kernel_log),
  // with what the kernel's ring and this one's bound lost of it.
  KernelLogRing::Window kernel_log;
  if (log) kernel_log = log->Since(data_start);
  if (st.ok() && log) {
    perfetto::ClockReadings clocks = perfetto::ReadClocks();
    int64_t offset = static_cast<int64_t>(clocks.realtime) - static_cast<int64_t>(clocks.boottime);
    constexpr size_t kPerPacket = 256;
    std::string packet;
    const auto& entries = kernel_log.entries;
    for (size_t from = 0; st.ok(); from += kPerPacket) {
      size_t to = std::min(entries.size(), from + kPerPacket);
      packet.clear();
      perfetto::EncodeKernelLogPacket(std::span<const model::KernelLogEntry>(entries.data() + from, to - from), offset,
                                      to == entries.size() ? kernel_log.lost : 0, perfetto::kKernelLogSequenceId,
                                      &packet);
      st = sink->writer().WriteSerializedPacket(packet);
      if (to == entries.size()) break;
    }
  }

  // The finding itself, as a slice on its own track: what fired, when.
  if (st.ok()) {
    perfetto::TrackEventWriter te(kFindingSequenceId, static_cast<uint64_t>(UnixNowNs()));
    perfetto::TracePacketBuilder packet;
    uint64_t track = te.TrackUuid("gpunoise monitor findings");
    te.FillTrackDescriptor(&packet, track, "gpunoise monitor findings", 0,
                           "the finding that made the flight recorder write this trace");
    st = sink->writer().WritePacket(packet);
    uint64_t start = std::max(request.finding_start, data_start);
    auto ev = te.FillSliceBegin(&packet, start, track, request.title, request.detector);
    perfetto::AddArg(ev, "detector", request.detector);
    for (size_t i = 0; i < request.evidence.size(); ++i)
      perfetto::AddArg(ev, fmt::format("evidence_{}", i), request.evidence[i]);
    if (st.ok()) st = sink->writer().WritePacket(packet);
    te.FillSliceEnd(&packet, std::max(request.now, start), track);
    if (st.ok()) st = sink->writer().WritePacket(packet);
  }
  if (st.ok()) st = sink->Commit();
  if (!st.ok()) {
    log::Error("monitor: failed to write flight-recorder dump {}: {}", path, st.error().message);
    CountOutcome("failed", 0);
    return;
  }
  uint64_t bytes = sink->bytes_written();
  sink.reset();
  bool too_big = false;
  DumpStore store(config_.dump_dir, config_.max_dumps, config_.max_dump_bytes);
  uint64_t deleted = store.EnforceBytes(path, &too_big);
  if (too_big) {
    log::Warning("monitor: flight-recorder dump {} ({}) is larger than max-dump-bytes alone: deleted it",
                 path, HumanBytes(bytes));
    CountOutcome("too_big", deleted);
    return;
  }
  if (parse_errors) log::Warning("monitor: {} malformed records left out of {}", parse_errors, path);
  log::Info("monitor: wrote flight-recorder dump {} ({}, {:.1f} s{})", path, HumanBytes(bytes),
            static_cast<double>(request.now - data_start) / 1e9,
            log ? fmt::format(", {} kernel log records, {} lost", kernel_log.entries.size(), kernel_log.lost)
                : std::string(", no kernel log"));
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++outcomes_["written"];
    deleted_ += deleted;
    last_path_ = path;
  }
  written_.fetch_add(1);
}

FlightRecorderStats FlightRecorder::Stats() const {
  FlightRecorderStats s;
  s.enabled = true;
  s.events = ring_->records();
  s.bytes = ring_->bytes_in_use();
  uint64_t oldest = ring_->oldest_ts(), newest = ring_->newest_ts();
  s.window_seconds = newest > oldest && oldest ? static_cast<double>(newest - oldest) / 1e9 : 0;
  s.lost = lost_total_;
  std::lock_guard<std::mutex> lock(stats_mu_);
  s.dumps = outcomes_;
  s.dumps_deleted = deleted_;
  return s;
}

std::vector<model::CollectorReport> FlightRecorder::reports() const {
  std::vector<model::CollectorReport> out;
  for (const auto& c : collectors_) out.push_back(c->report());
  return out;
}

}  // namespace gpunoise::monitor
