#include "record/nic_recording.h"

#include <map>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/log.h"
#include "model/link_kernel_log.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::record {
namespace {

constexpr uint64_t kPcieIntervalNs = 1'000'000'000;

}  // namespace

NicRecording::NicRecording() {
  auto links = collect::LinkMonitor::Open();
  if (links.ok()) links_.emplace(std::move(links).value());
  else log::Info("nic counters: {} (link changes still come from the periodic reads)", links.error().message);
}

Status NicRecording::Begin(perfetto::TraceSink& sink) {
  std::vector<collect::LinkStats> dump;
  auto readings = sampler_.Read(&dump);
  if (!readings.ok()) {
    log::Warning("nic counters: {}; not recorded", readings.error().message);
    return OkStatus();
  }
  active_ = true;
  if (links_) links_->Seed(dump);
  tracker_.Observe(BoottimeNs(), *readings);
  std::map<std::string, std::string> nics;
  for (const auto& [device, info] : sampler_.drivers()) nics[info.bus_info] = device;
  pcie_.FindDevices(nics);
  GN_RETURN_IF_ERROR(ReadPcie(sink, BoottimeNs(), true));
  pcie_first_ = pcie_last_;
  return OkStatus();
}

Status NicRecording::ReadPcie(perfetto::TraceSink& sink, uint64_t now, bool force) {
  if (pcie_.devices().empty() || (!force && now < next_pcie_)) return OkStatus();
  next_pcie_ = now + kPcieIntervalNs;
  pcie_last_ = pcie_.Read();
  return sink.nic_tracks().WritePcie(now, pcie_last_);
}

Status NicRecording::Poll(perfetto::TraceSink& sink, uint64_t now) {
  if (!active_ || !links_) return OkStatus();
  bool came_up = false;
  for (const model::LinkEvent& e : links_->Poll(now))
    if (tracker_.Notice(e)) {
      GN_RETURN_IF_ERROR(sink.nic_tracks().WriteLinkEvent(e));
      events_.push_back(e);
      came_up = came_up || e.kind == model::LinkEventKind::kCarrierUp;
    }
  // A link that came back may have renegotiated (a driver sets the new speed
  // before it turns the carrier on): read the settings now, so a speed or
  // duplex change is placed at the carrier's return, not at the next sample.
  if (came_up && !frozen_) {
    if (auto readings = sampler_.Read(); readings.ok())
      GN_RETURN_IF_ERROR(WriteUpdate(sink, tracker_.Observe(now, *readings)));
  }
  return OkStatus();
}

Status NicRecording::WriteUpdate(perfetto::TraceSink& sink, const model::NicTrackerUpdate& update) {
  GN_RETURN_IF_ERROR(sink.nic_tracks().WriteUpdate(update));
  events_.insert(events_.end(), update.events.begin(), update.events.end());
  return OkStatus();
}

Result<size_t> NicRecording::AttachKernelLog(perfetto::TraceSink& sink, std::span<const model::KernelLogEntry> log) {
  if (!active_ || events_.empty() || log.empty()) return size_t{0};
  std::map<std::string, std::string> bus;
  for (const auto& [device, info] : sampler_.drivers())
    if (!info.bus_info.empty()) bus[device] = info.bus_info;
  auto matches = model::JoinLinkKernelLog(events_, log, bus, model::kDefaultLinkLogWindowNs);
  for (const auto& m : matches)
    GN_RETURN_IF_ERROR(sink.nic_tracks().WriteLinkKernelLog(events_[m.event], log[m.entry]));
  return matches.size();
}

Status NicRecording::Sample(perfetto::TraceSink& sink, uint64_t now) {
  if (!active_) return OkStatus();
  GN_RETURN_IF_ERROR(Poll(sink, now));  // notifications first: they carry the exact time
  auto readings = sampler_.Read();
  if (!readings.ok()) return OkStatus();  // named once by the sampler's log; the next read may work
  GN_RETURN_IF_ERROR(WriteUpdate(sink, tracker_.Observe(now, *readings)));
  return ReadPcie(sink, now, false);
}

void NicRecording::Freeze(uint64_t ts) {
  if (!active_ || frozen_) return;
  if (auto readings = sampler_.Read(); readings.ok()) {
    frozen_ = std::move(readings).value();
    frozen_ts_ = ts;
  }
}

Status NicRecording::Finish(perfetto::TraceSink& sink, uint64_t ts) {
  if (!active_) return OkStatus();
  GN_RETURN_IF_ERROR(Poll(sink, ts));
  if (!frozen_) Freeze(ts);
  if (frozen_) GN_RETURN_IF_ERROR(WriteUpdate(sink, tracker_.Observe(frozen_ts_, *frozen_)));
  GN_RETURN_IF_ERROR(ReadPcie(sink, ts, true));
  GN_RETURN_IF_ERROR(sink.nic_tracks().CloseRates(ts));
  std::map<std::string, perfetto::NicTrackWriter::DeviceInfo> devices;
  for (const auto& d : tracker_.Devices()) {
    auto& info = devices[d.device];
    info.driver = d.driver;
    info.resets = d.resets;
    info.carrier_changes = d.carrier_changes;
    info.link_down_events = d.link_down_events;
    if (auto it = sampler_.drivers().find(d.device); it != sampler_.drivers().end()) info.bus_info = it->second.bus_info;
  }
  return sink.nic_tracks().WriteTotals(ts, tracker_.Totals(), devices, pcie_first_, pcie_last_);
}

std::string NicRecording::Summary() const {
  if (!active_) return "nic counters: not recorded";
  auto totals = tracker_.Totals();
  std::string out;
  for (const auto& d : tracker_.Devices()) {
    std::vector<model::NicCounterTotal> mine;
    for (const auto& t : totals)
      if (t.device == d.device) mine.push_back(t);
    auto sums = model::SumByKind(mine);
    uint64_t drops = 0, pause = 0;
    for (const auto& [kind, n] : sums) {
      if (model::IsNicDropKind(kind)) drops += n;
      if (kind == model::NicCounterKind::kPauseRx || kind == model::NicCounterKind::kPauseTx ||
          kind == model::NicCounterKind::kPfcRx || kind == model::NicCounterKind::kPfcTx)
        pause += n;
    }
    out += fmt::format("{}{} ({}) {} drops, {} pause frames, {} carrier changes{}", out.empty() ? "" : "; ",
                       d.device, d.driver.empty() ? "no ethtool driver" : d.driver, drops, pause, d.carrier_changes,
                       d.resets ? fmt::format(", {} counter resets", d.resets) : std::string());
  }
  std::string pcie;
  for (const auto& s : pcie_last_)
    pcie += fmt::format("{}{} {} x{} {:g} GT/s (max x{} {:g} GT/s)", pcie.empty() ? "" : ", ", s.role, s.address,
                        s.width, s.speed_gts, s.max_width, s.max_speed_gts);
  return "nic counters: " + (out.empty() ? std::string("no devices") : out) +
         (pcie.empty() ? std::string() : "; pcie: " + pcie);
}

}  // namespace gpunoise::record
