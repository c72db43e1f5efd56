#include "analyze/net_metadata.h"

#include <algorithm>

#include "common/cpu_list.h"
#include "common/strings.h"

namespace gpunoise::analyze {
namespace {

std::string Str(const MetaInstant& m, std::string_view key) {
  const model::TrackArg* a = m.Find(key);
  return a ? a->ToString() : std::string();
}

int64_t Int(const MetaInstant& m, std::string_view key, int64_t fallback = 0) {
  const model::TrackArg* a = m.Find(key);
  int64_t v = 0;
  return a && a->AsInt64(&v) ? v : fallback;
}

uint64_t Count(const MetaInstant& m, std::string_view key) {
  return static_cast<uint64_t>(std::max<int64_t>(0, Int(m, key)));
}

}  // namespace

std::vector<uint32_t> ParseCpuListArg(std::string_view text) {
  // Item by item, so that a damaged item loses only itself.
  std::vector<uint32_t> out;
  for (std::string_view part : Split(text, ','))
    if (auto cpus = ParseCpuList(part); cpus.ok()) out.insert(out.end(), cpus->begin(), cpus->end());
  return out;
}

NetMetadata ReadNetMetadata(const Timeline& t) {
  NetMetadata m;
  for (const MetaInstant& e : t.net_metadata) {
    if (e.name == "irq") {
      NetIrq irq;
      irq.irq = static_cast<int32_t>(Int(e, "irq", -1));
      irq.name = Str(e, "name");
      irq.device = Str(e, "device");
      irq.queue = static_cast<int32_t>(Int(e, "queue", -1));
      irq.queue_kind = Str(e, "queue_kind");
      irq.affinity = ParseCpuListArg(Str(e, "affinity"));
      irq.effective_affinity = ParseCpuListArg(Str(e, "effective_affinity"));
      if (irq.irq >= 0 && !irq.device.empty()) m.irqs.push_back(std::move(irq));
    } else if (e.name == "napi") {
      NapiInstance n;
      n.device = Str(e, "device");
      n.queue = static_cast<int32_t>(Int(e, "queue", -1));
      n.irq = static_cast<int32_t>(Int(e, "irq", -1));
      n.cpu = static_cast<uint32_t>(Int(e, "cpu"));
      n.polls = Count(e, "polls");
      n.full_budget_polls = Count(e, "full_budget_polls");
      n.packets = Count(e, "packets");
      m.napi.push_back(std::move(n));
    } else if (e.name == "net device") {
      DeviceTotals d;
      d.device = Str(e, "device");
      d.rx_packets = Count(e, "rx_packets");
      d.rx_bytes = Count(e, "rx_bytes");
      d.tx_packets = Count(e, "tx_packets");
      d.tx_bytes = Count(e, "tx_bytes");
      d.tx_errors = Count(e, "tx_errors");
      d.tx_timeouts = Count(e, "tx_timeouts");
      d.napi_polls = Count(e, "napi_polls");
      d.napi_full_budget_polls = Count(e, "napi_full_budget_polls");
      d.napi_packets = Count(e, "napi_packets");
      d.packets_counted = Int(e, "packets_counted", 1) != 0;  // traces before 2026-12-06 counted all
      d.drops = Count(e, "drops");
      for (const auto& a : e.args)
        if (StartsWith(a.name, "drops.")) {
          int64_t v = 0;
          if (a.AsInt64(&v) && v > 0) d.drops_by_reason[a.name.substr(6)] += static_cast<uint64_t>(v);
        }
      m.devices.push_back(std::move(d));
    } else if (e.name == "net drop") {
      DropSite d;
      d.device = Str(e, "device");
      d.reason = Str(e, "reason_name");
      d.location = Str(e, "location_symbol");
      if (d.location.empty()) d.location = Str(e, "location");
      d.packets = Count(e, "packets");
      m.drops.push_back(std::move(d));
    }
  }
  for (const auto& [uuid, samples] : t.tracks.counters) {
    const model::TrackIdentity* id = t.tracks.Identity(uuid);
    if (!id || id->kind != model::TrackKind::kNetCounter) continue;
    m.counters.push_back({id->device, id->metric, id->cpu, id->detail, &samples});
  }
  return m;
}

double IntegrateRate(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to) {
  double sum = 0;
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    uint64_t a = std::max(samples[i].ts, from), b = std::min(samples[i + 1].ts, to);
    if (b > a) sum += samples[i].value * static_cast<double>(b - a) / 1e9;
  }
  return sum;
}

CounterPeak PeakRate(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to) {
  CounterPeak peak;
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    if (samples[i + 1].ts <= from || samples[i].ts >= to) continue;
    if (samples[i].value > peak.value) peak = {samples[i].value, samples[i].ts, samples[i + 1].ts};
  }
  return peak;
}

double Increase(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to) {
  double first = 0, last = 0;
  bool seen = false;
  for (const auto& s : samples) {
    if (s.ts >= to) break;
    if (s.ts < from) {
      first = last = s.value;
      seen = true;
      continue;
    }
    if (!seen) {
      // The counter track starts with its first non-zero value.
      first = 0;
      seen = true;
    }
    last = std::max(last, s.value);
  }
  return last > first ? last - first : 0;
}

double RiseOverBaseline(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to) {
  if (samples.empty()) return 0;
  double base = samples.front().value, peak = base;
  for (const auto& s : samples) {
    if (s.ts >= to) break;
    if (s.ts <= from) {
      base = peak = s.value;
      continue;
    }
    peak = std::max(peak, s.value);
  }
  return peak > base ? peak - base : 0;
}

}  // namespace gpunoise::analyze
