// What a process's cgroups say about where it runs: the container (id and
// runtime), the Kubernetes pod (UID and QoS class) and the SLURM job, from
// the lines of /proc/PID/cgroup. Every line is read: on cgroup-v2 hosts one
// "0::" line; on hybrid hosts (v1 controllers, cgroup2 at
// /sys/fs/cgroup/unified) and v1-only hosts the controller lines carry the
// same paths. Layouts (kubelet with the systemd and the cgroupfs driver,
// containerd, CRI-O, Docker, podman, slurmstepd) are listed in
// docs/containers.md; the parser is pure, so each is a unit test.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/process_identity.h"

namespace gpunoise::collect {

// One line of /proc/PID/cgroup: "hierarchy-ID:controller-list:path".
struct CgroupLine {
  int hierarchy = 0;        // 0: the cgroup-v2 hierarchy
  std::string controllers;  // "cpu,cpuacct", "name=systemd", "" for v2
  std::string path;         // "/kubepods.slice/..."
};

// Lines that do not have the form are skipped.
std::vector<CgroupLine> ParseProcCgroup(std::string_view text);

// The container, pod and job one cgroup path names (empty if none).
model::ContainerIdentity IdentifyCgroupPath(std::string_view path);

// The same over every line: the v2 line when it names anything, else the
// first v1 line that does (cpu, memory, pids, ..., name=systemd).
model::ContainerIdentity IdentifyContainer(std::span<const CgroupLine> lines);

// "cpu,cpuacct:/kubepods/..." for v1 lines, the path alone for v2: what the
// trace keeps of each line.
std::vector<std::string> CgroupPaths(std::span<const CgroupLine> lines);

}  // namespace gpunoise::collect
