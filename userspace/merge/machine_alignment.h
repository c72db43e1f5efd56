// Which machine each input of `gpunoise merge` comes from, and how its clock
// relates to the host machine's.
//
// Perfetto's trace processor (v53 and later) reads the packets that carry a
// TracePacket.machine_id as another machine's: its own CPUs, threads and
// clock snapshots, each converted to that machine's BOOTTIME. Machine 0 is
// the host and the time axis. A remote machine's BOOTTIME is brought onto
// the host's by the offset it computes from a RemoteClockSync packet of
// that machine (upstream's multi-machine tracing writes one from round-trip
// clock pings). The merger writes that packet itself, with the offset the
// two machines' REALTIME clocks give: REALTIME is the clock NTP or PTP keeps
// equal across nodes, BOOTTIME is not (it starts at each boot).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise::perfetto {

// One instant read on a machine's BOOTTIME and REALTIME clocks.
struct ClockPair {
  int64_t boottime = 0;
  int64_t realtime = 0;
};

// What an input says about the machine it was recorded on.
struct InputMachine {
  std::string path;
  std::string boot_id;       // the session summary's boot_id arg
  std::string machine_name;  // SystemInfo.machine_name, else the summary's arg
  std::optional<ClockPair> clocks;  // the first snapshot with both clocks
  // The clock discipline at the recording's start (session summary's
  // clock.start.*): unset when the trace does not say.
  std::optional<bool> clock_synced;
  int64_t maxerror_us = 0;
};

// A warning for a machine whose recorded clock was not synchronised
// (adjtimex STA_UNSYNC): its REALTIME, so its alignment, may be off by up to
// the kernel's maxerror; empty when it was, or when the trace does not say.
std::string UnsyncedClockWarning(const InputMachine& m);

// Reads every packet of `path` (inflating compressed blocks) for the above.
Result<InputMachine> ScanInputMachine(const std::string& path);

// The same per machine of a merged trace, by TracePacket.machine_id (0: the
// host's packets, which carry none); one entry for a plain recording.
Result<std::map<uint32_t, InputMachine>> ScanTraceMachines(const std::string& path);

// The machine of each input: inputs with one boot_id (a recording and its
// GPU fragments, several processes of one boot) share a machine; two boots
// of one host are two machines. An input without a boot_id is matched by
// machine name; one with neither (an old trace, a GPU fragment collected by
// hand) is on the machine of the nearest input before it on the command
// line, as in `merge rec.pftrace gpu-*.pftrace`, or its own if it is first.
// Machine 0 is the first input's.
std::vector<uint32_t> AssignMachines(const std::vector<InputMachine>& inputs);

// Names for machines: their machine name, but "host (boot N)" for each of
// several boots of one host, N counting boots in the order they happened
// (REALTIME - BOOTTIME is the instant of the boot; without clocks, in the
// order given). One entry per machine: name, boot_id and, if known, the
// REALTIME of its boot.
struct MachineIdentity {
  std::string name, boot_id;
  std::optional<int64_t> booted_at;
};
std::vector<std::string> MachineLabels(const std::vector<MachineIdentity>& machines);

// How machine `machine_id`'s BOOTTIME maps onto the host's: the host
// BOOTTIME of the instant the machine's REALTIME snapshot names.
struct MachineClockSync {
  uint32_t machine_id = 0;
  int64_t client_boottime = 0;
  int64_t host_boottime = 0;
};
MachineClockSync AlignByRealtime(uint32_t machine_id, const ClockPair& machine,
                                 const ClockPair& host);

// A serialized TracePacket (machine_id set) holding a RemoteClockSync from
// which the trace processor computes host_boottime - client_boottime as the
// machine's offset: two rounds with equal stamps, so its round-trip
// estimate is exactly the offset given.
std::string RemoteClockSyncPacket(const MachineClockSync& sync);

// Another machine's ClockSnapshot, as the trace processor must get it. Since
// v58 it reads a ClockSnapshot that holds BOOTTIME as naming the trace's time
// axis (ClockTracker::SetGlobalClock, owned per trace file rather than per
// machine), so a remote machine's snapshot would move the axis onto that
// machine's BOOTTIME for every packet read after it, and undo the alignment.
// A RemoteClockSync adds the same clocks to that machine's clock graph
// (its client_clocks) without that, and relates its BOOTTIME to the host's by
// `host_minus_client_ns`. Nothing when `packet` holds no ClockSnapshot, or
// one with a sequence-scoped clock (ids 64 and up), which a RemoteClockSync
// cannot carry, or one it cannot parse; an error only when the packet's own
// fields are malformed.
struct RemoteClockSnapshot {
  std::string sync_packet;  // the RemoteClockSync, machine_id set
  // The packet without its snapshot (sequence flags, say); empty when only
  // the timestamp and the framing fields were left.
  std::string rest;
};
Result<std::optional<RemoteClockSnapshot>> AsRemoteClockSync(std::string_view packet, uint32_t machine_id,
                                                              int64_t host_minus_client_ns);

}  // namespace gpunoise::perfetto
