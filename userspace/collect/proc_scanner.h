// Reads every process and thread from /proc, so that tasks which never
// change name or start during a recording still have their names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/process_snapshot.h"

namespace gpunoise::collect {

// `kubelet_log_root`: where the kubelet's pods/ and containers/ log trees
// are (collect/kubelet_pods.h), for pod and container names.
model::ProcessSnapshot ScanProcesses(const std::string& proc_root = "/proc",
                                     const std::string& kubelet_log_root = "/var/log");

// The inode of /proc/PID/ns/pid ("pid:[4026531836]"); 0 if unreadable.
uint64_t ReadPidNsInode(const std::string& proc_pid_dir);
// A task's ids in its pid namespaces, the host's first (status NSpid);
// empty if unreadable.
std::vector<int32_t> ReadNsTids(const std::string& proc_task_dir);

}  // namespace gpunoise::collect
