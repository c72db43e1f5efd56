// gpunoise-batch-cost: what per-CPU batching in the kernel would save per
// record, before it is built into the collectors (issue 18). Runs the two
// producers of bench/batch_cost.bpf.c (the collectors' reserve/submit path,
// and a nesting-safe per-CPU batch flushed with one bpf_ringbuf_output) with
// BPF_PROG_TEST_RUN on one CPU, in interleaved rounds, and drains each
// through RingTransport, the record path's reader. Prints, per variant, the
// producer's ns per record (wall time of the test run: the program loops in
// the kernel, so the syscall's own cost is spread over every record) and
// the drain's ns per record (libbpf's ring reading plus the walk over each
// batch's records), median and range, and the per-round ratios.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>
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

int Run(int cpu, uint32_t records, int rounds) {
  Counts counts;
  auto handler = [&counts](uint32_t, std::span<const uint8_t> data) { CountRecords(data, &counts); };
  // Room for one round of either variant (direct: 8 bytes of ring header per record).
  uint64_t ring_bytes = 4ull * records * (sizeof(gn_sched_switch) + 8) + (1 << 20);
  auto transport = collect::RingTransport::Create({cpu}, ring_bytes, handler);
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
  batch_cost_bpf__destroy(skel);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  int cpu = 0;
  uint32_t records = 20000;
  int rounds = 10;
  po::options_description desc(
      "gpunoise-batch-cost: per-record cost of per-CPU batching in the kernel against the collectors'\n"
      "reserve/submit path, producer and drain, in interleaved rounds (root)\n\n"
      "usage: sudo gpunoise-batch-cost [--cpu N] [--records N] [--rounds N]\n\noptions");
  desc.add_options()("help,h", "this text")("cpu", po::value(&cpu)->default_value(0), "CPU the programs run on")(
      "records", po::value(&records)->default_value(20000), "records per run (1..1000000)")(
      "rounds", po::value(&rounds)->default_value(10), "interleaved rounds (1..1000)");
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
      cpu >= libbpf_num_possible_cpus()) {
    std::fprintf(stderr, "usage: gpunoise-batch-cost: --records 1..1000000, --rounds 1..1000, --cpu a CPU\n");
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
  return Run(cpu, records, rounds);
}
