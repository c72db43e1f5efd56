// The threads that exist now of a process or of a cgroup-v2 subtree, from
// /proc and cgroupfs: the seed of the classic twins' tid filter
// (bpf/sched.bpf.c gn_tids). Threads created later are added in the kernel.
#pragma once

#include <string>
#include <vector>

namespace gpunoise::collect {

// Thread ids of process `pid` (/proc/PID/task); empty if it is gone.
std::vector<int> ThreadsOfProcess(int pid);

// Thread ids in the cgroup-v2 directory `path` and every directory below it
// (each one's cgroup.threads).
std::vector<int> ThreadsOfCgroupTree(const std::string& path);

}  // namespace gpunoise::collect
