// A ring record as the sched programs write it, for the record stages' tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "bpf/sched.h"
}

namespace gpunoise::record::test_records {

// A sched_switch on the ring at `ts`, from `prev` (the current task) to `next`.
inline std::vector<uint8_t> SwitchRecord(uint64_t ts, int32_t prev = 7, int32_t next = 8) {
  gn_sched_switch r{};
  r.hdr.ts = ts;
  r.hdr.kind = GN_REC_SCHED_SWITCH;
  r.hdr.tid = prev;
  r.next_tid = next;
  std::vector<uint8_t> bytes(sizeof(r));
  std::memcpy(bytes.data(), &r, sizeof(r));
  return bytes;
}

}  // namespace gpunoise::record::test_records
