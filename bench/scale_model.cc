// gpunoise-scale-model: how far one recorder goes on a node with many CPUs,
// modelled on a small machine (issue 18). N rings (2..256, one per CPU of the
// modelled node) are filled at a set rate each by a raw_tp program run with
// BPF_PROG_TEST_RUN (bench/scale_fill.bpf.c), and drained by gpunoise
// record's own path (ring transport, decode, staging, Perfetto encoder, zlib,
// file) on K drain threads, each with its share of the rings. For each N and
// K the offered rate per ring rises until records are lost, or until this
// machine cannot produce the rate (then the drain was not the limit).
//
// It is a model: the producers run on this machine's CPUs beside the drain,
// not on 256 CPUs of their own, so a rate the producers could not reach says
// nothing about the drain. The figures that carry over are the drain's CPU
// per event and the events/s one drain thread keeps without loss.
//
//   sudo build/bench/gpunoise-scale-model                       # the default sweep
//   sudo build/bench/gpunoise-scale-model --rings 256 --threads 1,2,4 --rates 2000,8000
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/core.h>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/strings.h"
#include "record/record_session.h"
#include "scale_lane.h"

namespace {

using namespace gpunoise;
using Clock = std::chrono::steady_clock;

std::vector<uint64_t> ParseList(const std::string& text, const char* what) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v == 0) {
      fmt::print(stderr, "gpunoise-scale-model: --{} takes positive integers separated by commas, not '{}'\n",
                 what, text);
      std::exit(2);
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

struct Trial {
  uint64_t rings = 0, threads = 0, rate_per_ring = 0, ring_bytes = 0;
  double seconds = 0;
  uint64_t lanes = 1;
  uint64_t drains = 0, offered = 0, produced = 0, lost = 0, written = 0, drain_cpu_ns = 0, deflate_cpu_ns = 0,
           busiest_cpu_ns = 0, file_bytes = 0;
  long peak_rss_kib = 0;
  bool pinned = false;  // drain threads on CPUs of their own
  std::string error;
  bool producer_limited() const { return produced + lost < offered * 97 / 100; }
  bool lossless() const { return error.empty() && lost == 0 && written == produced; }
};

// Drain threads get CPUs 0..K-1 and producers the rest, where the machine
// has enough CPUs: producers that share a CPU with the drain starve it, and
// the loss measured then is the small machine's, not the drain's.
bool Pin(std::thread& t, unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::pthread_setaffinity_np(t.native_handle(), sizeof(set), &set) == 0;
}

// One producer thread: every 10 ms, each of its rings gets its share of the
// rate, until `end`. Behind schedule it does not catch up: what it could not
// offer in time shows as produced + lost below offered.
void Produce(std::vector<std::unique_ptr<bench::ScaleLane>>& lanes, std::vector<uint32_t> rings,
             uint64_t rate_per_ring, Clock::time_point end, uint64_t* produced, uint64_t* lost,
             std::string* error) {
  constexpr auto kTick = std::chrono::milliseconds(10);
  const double per_tick = static_cast<double>(rate_per_ring) / 100.0;
  std::vector<double> due(rings.size(), 0);
  std::vector<uint64_t> sequence(rings.size(), 0);
  for (auto next = Clock::now(); Clock::now() < end; next += kTick) {
    for (size_t i = 0; i < rings.size(); ++i) {
      due[i] += per_tick;
      auto n = static_cast<uint32_t>(due[i]);
      if (n == 0) continue;
      due[i] -= n;
      bench::ScaleLane& lane = *lanes[rings[i] % lanes.size()];
      auto wrote = lane.Produce(rings[i], n, sequence[i]);
      if (!wrote.ok()) {
        *error = wrote.error().message;
        return;
      }
      sequence[i] += n;
      *produced += *wrote;
      *lost += n - *wrote;
    }
    std::this_thread::sleep_until(next + kTick);
  }
}

Trial RunTrial(uint64_t rings, uint64_t threads, uint64_t rate_per_ring, uint64_t ring_bytes, double seconds,
               unsigned producers, bool deflate_thread, uint64_t lanes_each, const std::string& dir) {
  Trial t{rings, threads, rate_per_ring, ring_bytes, seconds};
  t.lanes = lanes_each;
  std::vector<std::unique_ptr<bench::ScaleLane>> lanes;
  for (uint64_t k = 0; k < threads; ++k) {
    std::vector<int> mine;
    for (uint64_t r = k; r < rings; r += threads) mine.push_back(static_cast<int>(r));
    auto lane =
        bench::ScaleLane::Create(mine, ring_bytes, 100, fmt::format("{}/lane{}.pftrace", dir, k), deflate_thread,
                                 lanes_each);
    if (!lane.ok()) {
      t.error = lane.error().message;
      return t;
    }
    lanes.push_back(std::move(*lane));
  }
  const unsigned ncpu = std::max(1u, std::thread::hardware_concurrency());
  t.pinned = threads < ncpu;
  for (uint64_t k = 0; k < lanes.size(); ++k) {
    lanes[k]->Start();
    if (t.pinned) t.pinned = Pin(lanes[k]->thread(), static_cast<unsigned>(k));
  }
  auto start = Clock::now();
  auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> workers;
  std::vector<uint64_t> produced(producers, 0), lost(producers, 0);
  std::vector<std::string> errors(producers);
  for (unsigned p = 0; p < producers; ++p) {
    std::vector<uint32_t> mine;
    for (uint64_t r = p; r < rings; r += producers) mine.push_back(static_cast<uint32_t>(r));
    workers.emplace_back(Produce, std::ref(lanes), std::move(mine), rate_per_ring, end, &produced[p], &lost[p],
                         &errors[p]);
    if (t.pinned) Pin(workers.back(), static_cast<unsigned>(threads + p % (ncpu - threads)));
  }
  for (auto& w : workers) w.join();
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  t.offered = static_cast<uint64_t>(static_cast<double>(rings * rate_per_ring) * t.seconds);
  for (unsigned p = 0; p < producers; ++p) {
    t.produced += produced[p];
    t.lost += lost[p];
    if (!errors[p].empty()) t.error = errors[p];
  }
  for (auto& lane : lanes) {
    bench::LaneResult r = lane->Finish();
    t.written += r.events_written;
    t.drain_cpu_ns += r.drain_cpu_ns;
    t.deflate_cpu_ns += r.deflate_cpu_ns;
    t.busiest_cpu_ns = std::max(t.busiest_cpu_ns, r.busiest_cpu_ns);
    t.file_bytes += r.file_bytes;
    t.drains += r.drains;
    if (!r.error.empty()) t.error = r.error;
  }
  lanes.clear();
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  t.peak_rss_kib = ru.ru_maxrss;
  std::error_code ec;
  for (uint64_t k = 0; k < threads; ++k) std::filesystem::remove(fmt::format("{}/lane{}.pftrace", dir, k), ec);
  return t;
}

std::string Verdict(const Trial& t) {
  if (!t.error.empty()) return "error: " + t.error;
  if (t.lost && !t.pinned)
    return fmt::format("lost {} (rings full) while producers and drain shared this machine's CPUs", t.lost);
  if (t.lost) return fmt::format("**lost {}** (rings full)", t.lost);
  if (t.written != t.produced) return fmt::format("**{} produced but not written**", t.produced - t.written);
  if (t.producer_limited()) return "kept up; producers could not offer the rate here";
  return "kept up";
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string rings_text = "2,16,64,256", threads_text = "1,2", rates_text = "2000,8000,32000,128000";
  double seconds = 3;
  uint64_t ring_bytes = 0;
  unsigned producers = std::max(1u, std::thread::hardware_concurrency());
  bool deflate_thread = false;
  uint64_t lanes = 1;
  po::options_description opts("gpunoise-scale-model [options]");
  opts.add_options()("help,h", "this help")(
      "rings", po::value(&rings_text)->default_value(rings_text), "ring counts to model (CPUs of the node)")(
      "threads", po::value(&threads_text)->default_value(threads_text), "drain thread counts")(
      "rates", po::value(&rates_text)->default_value(rates_text),
      "offered events/s per ring, rising; a sweep stops at the first rate with loss")(
      "seconds", po::value(&seconds)->default_value(seconds), "length of each trial (at most 60)")(
      "ring-bytes", po::value(&ring_bytes), "bytes per ring (default: what gpunoise record picks for N CPUs)")(
      "producers", po::value(&producers)->default_value(producers), "producer threads")(
      "deflate-thread", po::bool_switch(&deflate_thread),
      "each drain thread's blocks deflated and written on a thread of their own (record --deflate-thread on)")(
      "lanes", po::value(&lanes)->default_value(lanes),
      "each drain thread reads and encodes with this many lanes, itself one of them (record --drain-threads)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    fmt::print(stderr, "gpunoise-scale-model: {}\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (seconds <= 0 || seconds > 60 || producers == 0 || lanes == 0 || lanes > 8) {
    fmt::print(stderr, "gpunoise-scale-model: --seconds is in (0, 60], --producers positive, --lanes 1 to 8\n");
    return 2;
  }
  if (::geteuid() != 0) {
    fmt::print(stderr, "gpunoise-scale-model: needs root (BPF programs and ring buffers)\n");
    return 1;
  }
  auto rings_list = ParseList(rings_text, "rings");
  auto threads_list = ParseList(threads_text, "threads");
  auto rates = ParseList(rates_text, "rates");
  char dir_template[] = "/tmp/gpunoise-scale-XXXXXX";
  if (!::mkdtemp(dir_template)) {
    fmt::print(stderr, "gpunoise-scale-model: cannot create a temporary directory: {}\n", std::strerror(errno));
    return 1;
  }
  std::string dir = dir_template;

  fmt::print("| rings | drain threads | lanes each | ring size | offered events/s | produced events/s "
             "| drain CPU ns/event | deflate thread CPU ns/event | drain CPU, % of one CPU per thread "
             "| busiest drain or lane thread, % of one CPU | drains/s per thread | file bytes/event | peak RSS "
             "| result |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::string> summary;
  for (uint64_t n : rings_list) {
    if (n > 1024) {
      fmt::print(stderr, "gpunoise-scale-model: at most 1024 rings (gpunoise's CPU limit)\n");
      return 2;
    }
    uint64_t bytes = ring_bytes ? ring_bytes : record::DefaultRingBytesPerCpu(n);
    for (uint64_t k : threads_list) {
      if (k > n) continue;
      double best = 0;
      bool producer_bound = false;
      for (uint64_t rate : rates) {
        Trial t = RunTrial(n, k, rate, bytes, seconds, producers, deflate_thread, lanes, dir);
        double produced_rate = static_cast<double>(t.produced) / t.seconds;
        auto per_event = [&t](uint64_t ns) {
          return t.written ? fmt::format("{:.0f}", static_cast<double>(ns) / static_cast<double>(t.written))
                           : std::string("n/a");
        };
        fmt::print("| {} | {} | {} | {} KiB | {:.0f} | {:.0f} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {} | {} MiB "
                   "| {} |\n",
                   n, k, lanes, bytes >> 10, static_cast<double>(n * rate), produced_rate, per_event(t.drain_cpu_ns),
                   deflate_thread ? per_event(t.deflate_cpu_ns) : std::string("n/a"),
                   100.0 * static_cast<double>(t.drain_cpu_ns) / 1e9 / t.seconds / static_cast<double>(k * lanes),
                   100.0 * static_cast<double>(t.busiest_cpu_ns) / 1e9 / t.seconds,
                   static_cast<double>(t.drains) / t.seconds / static_cast<double>(k),
                   t.written ? fmt::format("{:.2f}", static_cast<double>(t.file_bytes) / static_cast<double>(t.written))
                             : std::string("n/a"),
                   t.peak_rss_kib >> 10, Verdict(t));
        std::fflush(stdout);
        if (!t.lossless()) break;
        best = produced_rate;
        if (t.producer_limited()) {
          producer_bound = true;
          break;
        }
      }
      summary.push_back(fmt::format("- {} rings, {} drain thread{}: lossless up to {:.0f} events/s ({:.0f} per drain "
                                    "thread, {:.0f} per modelled CPU){}",
                                    n, k, k > 1 ? "s" : "", best, best / static_cast<double>(k),
                                    best / static_cast<double>(n),
                                    producer_bound ? "; the producers here reached no higher, so the drain's own "
                                                     "limit is above this"
                                                   : ""));
    }
  }
  fmt::print("\n");
  for (const std::string& line : summary) fmt::print("{}\n", line);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
