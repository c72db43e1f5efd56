// Every trusted_packet_sequence_id a recording writes, in one place. Two
// writers on one sequence would share (and clear) each other's interned
// strings and defaults, so each range is kept apart from the others.
#pragma once

#include <cstdint>

namespace gpunoise::perfetto {

// gpunoise's own track events (track descriptors, node, network, findings).
inline constexpr uint32_t kTrackEventSequenceId = 1;
// GPU samples read through NVML.
inline constexpr uint32_t kNvmlSequenceId = 2;
// Kernel log lines (record, flight-recorder dumps, blackbox).
inline constexpr uint32_t kKernelLogSequenceId = 7;

// Busy per-CPU tracks, each on a sequence of its own whose defaults carry the
// track (TrackEventWriter's default track): a CPU's system-vector slices and
// its idle-state samples, tens of thousands a second each under a NET_RX
// flood. Below 16384, so the id stays a 2-byte varint for 7680 CPUs.
inline constexpr uint32_t kCpuTrackSequenceBase = 1024;
inline constexpr uint32_t CpuVectorSequenceId(uint32_t cpu) { return kCpuTrackSequenceBase + 2 * cpu; }
inline constexpr uint32_t CpuIdleSequenceId(uint32_t cpu) { return kCpuTrackSequenceBase + 2 * cpu + 1; }

// A thread's track descriptor goes out on no sequence (no
// trusted_packet_sequence_id). On a sequence with valid incremental state,
// the trace processor (v58) also takes it as the thread of the whole
// sequence, earlier packets included: every event of that sequence on a
// global track then looks up or makes that thread (its
// `legacy_event.passthrough_utid` arg), and a thread that started during the
// recording came out twice, once made at the first such event, before the
// thread existed. A packet without a sequence never has valid incremental
// state (clearing it needs a sequence id).

// The GPU processes' fragments, renumbered from here upward when they are
// merged into the recording: above every fixed id, however many there are.
inline constexpr uint32_t kFirstFragmentSequenceId = 1u << 20;

}  // namespace gpunoise::perfetto
