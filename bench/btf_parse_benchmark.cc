// What one parse of the kernel's BTF costs (/sys/kernel/btf/vmlinux): libbpf
// 1.1 parses it again for every collector object it loads, and the
// tracepoint catalog once more, so this times the ceiling of the "load BTF
// once" lever (issue 18): (parses - 1) x this, against record's start-up.
// BM_LoadVmlinuxBtf reads and parses as libbpf does at each load;
// BM_ParseVmlinuxBtfFromMemory leaves the read out.
#include <benchmark/benchmark.h>
#include <bpf/btf.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

constexpr const char* kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

void BM_LoadVmlinuxBtf(benchmark::State& state) {
  for (auto _ : state) {
    struct btf* btf = btf__load_vmlinux_btf();
    if (!btf) {
      state.SkipWithError("the kernel's BTF did not load");
      return;
    }
    benchmark::DoNotOptimize(btf__type_cnt(btf));
    btf__free(btf);
  }
}
BENCHMARK(BM_LoadVmlinuxBtf)->Unit(benchmark::kMillisecond);

void BM_ParseVmlinuxBtfFromMemory(benchmark::State& state) {
  std::ifstream in(kVmlinuxBtf, std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (bytes.empty()) {
    state.SkipWithError("no /sys/kernel/btf/vmlinux");
    return;
  }
  for (auto _ : state) {
    struct btf* btf = btf__new(bytes.data(), bytes.size());
    if (!btf) {
      state.SkipWithError("the kernel's BTF did not parse");
      return;
    }
    benchmark::DoNotOptimize(btf__type_cnt(btf));
    btf__free(btf);
  }
  state.counters["bytes"] = static_cast<double>(bytes.size());
}
BENCHMARK(BM_ParseVmlinuxBtfFromMemory)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
