// Each process's pid namespace, container, pod, rank and job in the trace
// (model/process_identity.h): typed args on one instant per process, which
// the report reads back (import/identity_reader.h), and process labels
// ("pod 0f1e...", "rank 3") on a process track, which the Perfetto UI shows
// in the process's details (args chrome.process_label[N]).
//
// Args of the instant "gpunoise process identity" on track "gpunoise
// processes": pid, pid_ns, nspid ("8000/1", host first), container.runtime,
// container.id, pod.uid, pod.qos, pod.name, pod.namespace, slurm.job_id,
// rank, local_rank, world_size, job.id, cgroup.N (every /proc/PID/cgroup
// line; v1 lines as "controllers:path").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/process_identity.h"

namespace gpunoise::perfetto {

class TrackEventWriter;
class TraceFileWriter;

// The labels the UI shows on the process, most telling first.
std::vector<std::string> IdentityLabels(const model::ProcessIdentity& id);

Status WriteProcessIdentities(uint64_t ts, const std::vector<model::ProcessIdentity>& identities,
                              TrackEventWriter& writer, TraceFileWriter& out);

}  // namespace gpunoise::perfetto
