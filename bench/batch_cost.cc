// gpunoise-batch-cost: what per-CPU batching in the kernel would save per
// record, before it is built into the collectors (issue 18). Runs the two
// producers of bench/batch_cost.bpf.c (the collectors' reserve/submit path,
// and a nesting-safe per-CPU batch flushed with one bpf_ringbuf_output) with
// BPF_PROG_TEST_RUN on one CPU, in interleaved rounds, and drains each
// through RingTransport, the record path's reader. Prints, per variant, the
// producer's ns per record (wall time of the test run: the program loops in
// the kernel, so the syscall's own cost is spread over every record) and
// the drain's ns per record (libbpf's ring reading plus the walk over each
// batch's records), median and range, and the per-round ratios. With
// --attach it also attaches each producer (and the direct path without
// bpf_ringbuf_query) to sched_switch in turn and reads the kernel's own
// ns per run (BPF_ENABLE_STATS).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>

#include "batch_cost.skel.h"
#include "collect/collector.h"
#include "collect/ring_transport.h"
#include "common/result.h"

extern "C" {
#include "bpf/sched.h"
}

namespace po = boost::program_options;
using namespace gpunoise;

namespace {

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Sample {
  double produce_ns = 0;  // per record
  double drain_ns = 0;    // per record
};

struct Counts {
  uint64_t records = 0;  // records decoded from the ring
  uint64_t bad = 0;      // blobs that were not whole sched_switch records
};

// Walks one ring blob: a record, or a batch of records back to back.
void CountRecords(std::span<const uint8_t> blob, Counts* counts) {
  constexpr size_t kSize = sizeof(gn_sched_switch);
  if (blob.size() % kSize != 0) {
    ++counts->bad;
    return;
  }
  for (size_t off = 0; off < blob.size(); off += kSize) {
    gn_header hdr;
    std::memcpy(&hdr, blob.data() + off, sizeof(hdr));
    if (hdr.kind == GN_REC_SCHED_SWITCH) {
      ++counts->records;
    } else {
      ++counts->bad;
    }
  }
}

Result<uint64_t> RunProgram(int prog_fd, int cpu, uint64_t ring, uint64_t n) {
  uint64_t args[2] = {ring, n};
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
              .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = static_cast<__u32>(cpu));
  if (bpf_prog_test_run_opts(prog_fd, &opts) != 0)
    return MakeError("failed to run a batch_cost program: {}", std::strerror(errno));
  return static_cast<uint64_t>(opts.retval);
}

std::string Span(std::vector<double> v, const char* fmt) {
  std::sort(v.begin(), v.end());
  char buf[128];
  double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  // The tenth percentile as well: on a loaded machine a round that an
  // interrupt or the hypervisor stole from lands far above the rest.
  double p10 = v[v.size() / 10];
  std::snprintf(buf, sizeof(buf), fmt, median, p10, v.front(), v.back());
  return buf;
}

struct ProgStats {
  uint64_t run_time_ns = 0;
  uint64_t run_cnt = 0;
};

ProgStats ReadStats(int prog_fd) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) return {};
  return {info.run_time_ns, info.run_cnt};
}

// Two threads passing a byte back and forth over pipes until `stop`: a
// steady supply of context switches while a program is attached.
class PingPong {
 public:
  PingPong() {
    if (::pipe(a_) != 0 || ::pipe(b_) != 0) return;
    ping_ = std::jthread([this](std::stop_token st) { Loop(st, a_[1], b_[0], true); });
    pong_ = std::jthread([this](std::stop_token st) { Loop(st, b_[1], a_[0], false); });
  }
  ~PingPong() {
    ping_.request_stop();
    pong_.request_stop();
    // Unblocks both readers.
    for (int fd : {a_[1], b_[1]}) {
      char c = 0;
      if (fd >= 0) (void)!::write(fd, &c, 1);
    }
    ping_ = {};
    pong_ = {};
    for (int fd : {a_[0], a_[1], b_[0], b_[1]})
      if (fd >= 0) ::close(fd);
  }

 private:
  static void Loop(std::stop_token st, int out, int in, bool first) {
    char c = 0;
    if (first && ::write(out, &c, 1) != 1) return;
    while (!st.stop_requested()) {
      if (::read(in, &c, 1) != 1) return;
      if (st.stop_requested() || ::write(out, &c, 1) != 1) return;
    }
  }
  int a_[2] = {-1, -1};
  int b_[2] = {-1, -1};
  std::jthread ping_, pong_;
};

// The two programs on sched_switch, one at a time for `seconds`, in
// interleaved rounds: the kernel's own ns per run (BPF_ENABLE_STATS, held
// only for this), and every record drained and counted.
int RunAttached(batch_cost_bpf* skel, collect::RingTransport& transport, Counts* counts, double seconds,
                int rounds) {
  int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (stats_fd < 0) {
    std::fprintf(stderr, "gpunoise-batch-cost: failed to enable bpf_stats: %s\n", std::strerror(errno));
    return 1;
  }
  struct Attached {
    const char* name;
    bpf_program* prog;
    bool batched;
    std::vector<double> ns_per_run;
    uint64_t runs = 0, drained = 0;
  };
  std::vector<Attached> variants = {{"direct", skel->progs.gn_switch_direct, false, {}},
                                    {"batched", skel->progs.gn_switch_batched, true, {}},
                                    {"no-query", skel->progs.gn_switch_no_query, false, {}}};
  const size_t n = variants.size();
  int flush_fd = bpf_program__fd(skel->progs.gn_cost_flush);
  uint64_t refused_before = skel->bss->gn_batch_lost;
  uint64_t failed_before = skel->bss->gn_batch_failed;
  uint64_t ring_lost_before = 0;
  for (uint64_t l : transport.LostPerCpu()) ring_lost_before += l;
  int status = 0;
  {
    PingPong load;
    for (int round = 0; round < rounds && status == 0; ++round) {
      for (size_t k = 0; k < n; ++k) {
        Attached& v = variants[(round % 2) ? n - 1 - k : k];
        ProgStats before = ReadStats(bpf_program__fd(v.prog));
        bpf_link* link = bpf_program__attach(v.prog);
        if (!link) {
          std::fprintf(stderr, "gpunoise-batch-cost: failed to attach %s to sched_switch: %s\n", v.name,
                       std::strerror(errno));
          status = 1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        bpf_link__destroy(link);
        ProgStats after = ReadStats(bpf_program__fd(v.prog));
        // The gate's-close flush, on every CPU (one IPI each).
        if (v.batched)
          for (int c = 0; c < libbpf_num_possible_cpus(); ++c) (void)RunProgram(flush_fd, c, static_cast<uint64_t>(c), 0);
        *counts = {};
        if (!transport.DrainAll().ok()) status = 1;
        uint64_t runs = after.run_cnt - before.run_cnt;
        v.runs += runs;
        v.drained += counts->records;
        if (runs) v.ns_per_run.push_back(static_cast<double>(after.run_time_ns - before.run_time_ns) / runs);
      }
    }
  }
  ::close(stats_fd);
  if (status != 0) return status;
  uint64_t refused = skel->bss->gn_batch_lost - refused_before;
  uint64_t ring_lost = 0;
  for (uint64_t l : transport.LostPerCpu()) ring_lost += l;
  ring_lost -= ring_lost_before;
  std::printf("attached to sched_switch, %d rounds of %.1f s each (bpf_stats):\n", rounds, seconds);
  for (const Attached& v : variants) {
    if (v.ns_per_run.empty()) {
      std::printf("%-8s no runs\n", v.name);
      continue;
    }
    std::printf("%-8s %s ns/run, %llu runs, %llu records drained\n", v.name,
                Span(v.ns_per_run, "%.1f (p10 %.1f) [%.1f-%.1f]").c_str(),
                static_cast<unsigned long long>(v.runs), static_cast<unsigned long long>(v.drained));
  }
  for (size_t j = 1; j < n; ++j) {
    std::vector<double> ratios;
    for (size_t i = 0; i < std::min(variants[0].ns_per_run.size(), variants[j].ns_per_run.size()); ++i)
      ratios.push_back(variants[j].ns_per_run[i] / variants[0].ns_per_run[i]);
    if (!ratios.empty())
      std::printf("%s/direct %s\n", variants[j].name, Span(ratios, "%.3f (p10 %.3f) [%.3f-%.3f]").c_str());
  }
  uint64_t failed = skel->bss->gn_batch_failed - failed_before;
  std::printf("attached: refused records %llu, ring loss %llu, batches the ring refused %llu\n",
              static_cast<unsigned long long>(refused), static_cast<unsigned long long>(ring_lost),
              static_cast<unsigned long long>(failed));
  if (ring_lost || failed) {
    std::fprintf(stderr, "gpunoise-batch-cost: a ring filled up, so the attached figures time the failure path; "
                         "use a shorter --attach\n");
    return 1;
  }
  // Every run wrote one record, or counted it (refused, or lost to a full ring).
  for (const Attached& v : variants)
    if (v.drained + (v.batched ? refused : 0) + ring_lost < v.runs) {
      std::fprintf(stderr, "gpunoise-batch-cost: %s: %llu runs but %llu records drained\n", v.name,
                   static_cast<unsigned long long>(v.runs), static_cast<unsigned long long>(v.drained));
      return 1;
    }
  return 0;
}

int Run(int cpu, uint32_t records, int rounds, double attach_seconds, int attach_rounds) {
  Counts counts;
  auto handler = [&counts](uint32_t, std::span<const uint8_t> data) { CountRecords(data, &counts); };
  // Room for one round of either variant (direct: 8 bytes of ring header per record).
  uint64_t ring_bytes = 4ull * records * (sizeof(gn_sched_switch) + 8) + (1 << 20);
  // Attached, a ring must hold a whole round of switches (a ping-pong makes
  // about 400k/s here): a full ring would time the failure path instead.
  if (attach_seconds > 0)
    ring_bytes = std::max<uint64_t>(ring_bytes, static_cast<uint64_t>(attach_seconds * 64 * 1024 * 1024));
  // A ring on every CPU: the attached programs (--attach) write where the
  // switch happens.
  std::vector<int> cpus;
  for (int c = 0; c < libbpf_num_possible_cpus(); ++c) cpus.push_back(c);
  auto transport = collect::RingTransport::Create(cpus, ring_bytes, handler);
  if (!transport.ok()) {
    std::fprintf(stderr, "gpunoise-batch-cost: %s\n", transport.error().message.c_str());
    return 1;
  }
  batch_cost_bpf* skel = batch_cost_bpf__open();
  if (!skel) {
    std::fprintf(stderr, "gpunoise-batch-cost: failed to open the eBPF object: %s\n", std::strerror(errno));
    return 1;
  }
  collect::CollectorContext shared;
  (*transport)->ShareWith(&shared);
  skel->rodata->gn_wakeup_bytes = (*transport)->wakeup_bytes();
  if (!collect::ShareTransport(skel, shared) || batch_cost_bpf__load(skel) != 0) {
    std::fprintf(stderr, "gpunoise-batch-cost: failed to load the eBPF object: %s\n", std::strerror(errno));
    batch_cost_bpf__destroy(skel);
    return 1;
  }
  struct Variant {
    const char* name;
    int prog_fd;
    bool batched;
    std::vector<Sample> samples;
  };
  std::vector<Variant> variants = {
      {"direct", bpf_program__fd(skel->progs.gn_cost_direct), false, {}},
      {"batched", bpf_program__fd(skel->progs.gn_cost_batched), true, {}},
  };
  int flush_fd = bpf_program__fd(skel->progs.gn_cost_flush);
  int status = 0;
  for (int round = 0; round < rounds && status == 0; ++round) {
    for (int k = 0; k < 2 && status == 0; ++k) {
      Variant& v = variants[(round % 2) ? 1 - k : k];
      counts = {};
      uint64_t t0 = NowNs();
      auto written = RunProgram(v.prog_fd, cpu, static_cast<uint64_t>(cpu), records);
      uint64_t t1 = NowNs();
      // The gate's-close flush: outside the timed producer run, once per CPU.
      if (written.ok() && v.batched) {
        auto flushed = RunProgram(flush_fd, cpu, static_cast<uint64_t>(cpu), 0);
        if (!flushed.ok()) written = flushed;
      }
      if (!written.ok()) {
        std::fprintf(stderr, "gpunoise-batch-cost: %s\n", written.error().message.c_str());
        status = 1;
        break;
      }
      uint64_t t2 = NowNs();
      auto drained = (*transport)->DrainAll();
      uint64_t t3 = NowNs();
      if (!drained.ok() || *written != records || counts.records != records || counts.bad) {
        std::fprintf(stderr,
                     "gpunoise-batch-cost: %s: wrote %llu of %u records, drained %llu, %llu malformed\n",
                     v.name, static_cast<unsigned long long>(written.ok() ? *written : 0), records,
                     static_cast<unsigned long long>(counts.records),
                     static_cast<unsigned long long>(counts.bad));
        status = 1;
        break;
      }
      v.samples.push_back({static_cast<double>(t1 - t0) / records, static_cast<double>(t3 - t2) / records});
    }
  }
  if (status == 0) {
    std::printf("%d rounds of %u sched_switch-sized records (%zu B) on CPU %d; batches of %d B\n", rounds,
                records, sizeof(gn_sched_switch), cpu, 4096);
    for (const Variant& v : variants) {
      std::vector<double> p, d;
      for (const Sample& s : v.samples) p.push_back(s.produce_ns), d.push_back(s.drain_ns);
      std::printf("%-8s producer %s ns/record, drain %s ns/record\n", v.name,
                  Span(p, "%.1f (p10 %.1f) [%.1f-%.1f]").c_str(), Span(d, "%.1f (p10 %.1f) [%.1f-%.1f]").c_str());
    }
    std::vector<double> rp, rd;
    for (size_t i = 0; i < variants[0].samples.size(); ++i) {
      rp.push_back(variants[1].samples[i].produce_ns / variants[0].samples[i].produce_ns);
      rd.push_back(variants[1].samples[i].drain_ns / variants[0].samples[i].drain_ns);
    }
    std::printf("batched/direct producer %s, drain %s\n", Span(rp, "%.3f (p10 %.3f) [%.3f-%.3f]").c_str(),
                Span(rd, "%.3f (p10 %.3f) [%.3f-%.3f]").c_str());
    std::printf("batches %llu, refused records %llu, batches the ring refused %llu, ring loss %llu\n",
                static_cast<unsigned long long>(skel->bss->gn_batches),
                static_cast<unsigned long long>(skel->bss->gn_batch_lost),
                static_cast<unsigned long long>(skel->bss->gn_batch_failed),
                static_cast<unsigned long long>((*transport)->LostPerCpu()[static_cast<size_t>(cpu)]));
    if (skel->bss->gn_batch_lost || skel->bss->gn_batch_failed) status = 1;
  }
  if (status == 0 && attach_seconds > 0)
    status = RunAttached(skel, **transport, &counts, attach_seconds, attach_rounds);
  batch_cost_bpf__destroy(skel);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int cpu = 0;
  uint32_t records = 20000;
  int rounds = 10;
  double attach_seconds = 0;
  int attach_rounds = 6;
  po::options_description desc(
      "gpunoise-batch-cost: per-record cost of per-CPU batching in the kernel against the collectors'\n"
      "reserve/submit path, producer and drain, in interleaved rounds (root)\n\n"
      "usage: sudo gpunoise-batch-cost [--cpu N] [--records N] [--rounds N] [--attach S [--attach-rounds N]]\n\noptions");
  desc.add_options()("help,h", "this text")("cpu", po::value(&cpu)->default_value(0), "CPU the programs run on")(
      "records", po::value(&records)->default_value(20000), "records per run (1..1000000)")(
      "rounds", po::value(&rounds)->default_value(10), "interleaved rounds (1..1000)")(
      "attach", po::value(&attach_seconds)->default_value(0),
      "also attach each to sched_switch for this many seconds per round, under a pipe ping-pong "
      "(0..10; 0: not)")("attach-rounds", po::value(&attach_rounds)->default_value(6),
                         "interleaved rounds of --attach (1..100)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "usage: gpunoise-batch-cost: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::printf("%s\n", (std::ostringstream() << desc).str().c_str());
    return 0;
  }
  if (records < 1 || records > 1000000 || rounds < 1 || rounds > 1000 || cpu < 0 ||
      cpu >= libbpf_num_possible_cpus() || attach_seconds < 0 || attach_seconds > 10 || attach_rounds < 1 ||
      attach_rounds > 100) {
    std::fprintf(stderr, "usage: gpunoise-batch-cost: --records 1..1000000, --rounds 1..1000, --cpu a CPU, --attach 0..10, --attach-rounds 1..100\n");
    return 2;
  }
  // On the CPU the programs run on: the test run then calls them directly
  // rather than through an IPI to that CPU.
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    std::fprintf(stderr, "gpunoise-batch-cost: failed to pin to CPU %d: %s\n", cpu, std::strerror(errno));
    return 1;
  }
  return Run(cpu, records, rounds, attach_seconds, attach_rounds);
}
