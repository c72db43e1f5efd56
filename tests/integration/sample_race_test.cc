// The sampler's per-key counting (bpf/sample_count.bpf.h) on a real
// PERCPU_HASH, as root: a sample whose key another CPU inserted between our
// lookup and our update is counted, and one that finds the map full is
// counted as such, never dropped.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "integration/support/privileges.h"
#include "sample_race.skel.h"

namespace gpunoise::testing {
namespace {

class SampleRace : public ::testing::Test {
 protected:
  void SetUp() override {
    GN_REQUIRE_REAL_EBPF();
    skel_ = sample_race_bpf__open_and_load();
    ASSERT_NE(skel_, nullptr) << std::strerror(errno);
    ncpus_ = libbpf_num_possible_cpus();
    ASSERT_GT(ncpus_, 0);
  }
  void TearDown() override { sample_race_bpf__destroy(skel_); }

  // Inserts `key` from user space with every CPU's copy at zero: what the
  // program finds when another CPU won the race to insert it.
  void InsertForOtherCpu(uint32_t key) {
    std::vector<uint64_t> zero(static_cast<size_t>(ncpus_), 0);
    ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel_->maps.samples), &key, zero.data(), BPF_NOEXIST), 0);
  }
  // Runs the program's insert path for `key` on CPU 0.
  void RunOnCpu0(uint32_t key) {
    skel_->bss->key = key;
    LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);
    ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.insert_after_a_missed_lookup), &opts), 0)
        << std::strerror(errno);
  }
  uint64_t CountOnCpu0(uint32_t key) {
    std::vector<uint64_t> values(static_cast<size_t>(ncpus_), 0);
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.samples), &key, values.data()) != 0) return 0;
    return values[0];
  }

  sample_race_bpf* skel_ = nullptr;
  int ncpus_ = 0;
};

TEST_F(SampleRace, ASampleWhoseKeyAnotherCpuJustInsertedIsCounted) {
  InsertForOtherCpu(7);
  RunOnCpu0(7);
  EXPECT_EQ(CountOnCpu0(7), 1u);
  EXPECT_EQ(skel_->bss->full, 0u);
}

TEST_F(SampleRace, ANewKeyIsInsertedWithItsFirstSample) {
  RunOnCpu0(9);
  EXPECT_EQ(CountOnCpu0(9), 1u);
  EXPECT_EQ(skel_->bss->full, 0u);
}

TEST_F(SampleRace, ASampleThatFindsTheMapFullIsCountedAsSuch) {
  for (uint32_t k = 100; k < 104; ++k) InsertForOtherCpu(k);  // max_entries 4
  RunOnCpu0(5);
  EXPECT_EQ(CountOnCpu0(5), 0u);
  EXPECT_EQ(skel_->bss->full, 1u);
}

}  // namespace
}  // namespace gpunoise::testing
