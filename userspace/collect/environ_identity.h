// Rank and job of a distributed job's process, from its environment
// (/proc/PID/environ: NUL-separated NAME=VALUE, as the process was started).
// Reading another user's environ needs root or CAP_SYS_PTRACE; without it
// the process simply has no rank.
#pragma once

#include <string>
#include <string_view>

#include "model/process_identity.h"

namespace gpunoise::collect {

// RANK / LOCAL_RANK / WORLD_SIZE (torchrun, most launchers), else
// OMPI_COMM_WORLD_RANK / _LOCAL_RANK / _SIZE (Open MPI), else SLURM_PROCID /
// SLURM_LOCALID / SLURM_NTASKS (srun); the job from SLURM_JOB_ID, else
// TORCHELASTIC_RUN_ID. Values that are not numbers are ignored.
model::JobIdentity ParseJobEnviron(std::string_view environ);

// At most this much of an environ is read: a job's rank variables sit near
// the start, and a huge environment must not slow the scan.
inline constexpr size_t kMaxEnvironBytes = 256 * 1024;

// The process's cgroups (every line of PID/cgroup), what they name, and its
// rank and job (PID/environ). `proc_pid_dir` is "/proc/PID".
void ReadProcessIdentity(const std::string& proc_pid_dir, model::ProcessIdentity* id);

}  // namespace gpunoise::collect
