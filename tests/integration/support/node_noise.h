// Helpers the node-noise integration tests (node_noise_*_test.cc, issue 19)
// share: the kernel's own accounting of a thread (schedstat, affinity), a
// recording made while a workload runs, and the report on it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "analyze/analysis.h"
#include "integration/support/workloads.h"
#include "report/report_session.h"

namespace gpunoise::testing {

pid_t Gettid();

// Field 2 of /proc/self/task/TID/schedstat: ns spent runnable, not running.
uint64_t RunDelayNs(pid_t tid);

void Spin(std::chrono::microseconds d);

// Page-cache pressure and writeback need a disk-backed file system: on a
// tmpfs /tmp (a minimal Debian root, many CI runners) written pages are
// shmem, which without swap is never reclaimed or written back.
std::string OnDisk();

// Every thread of `pid` onto `cpu` (threads it makes later inherit it).
void PinProcess(pid_t pid, int cpu);

// `recorder_cpu` >= 0 keeps the recorder there: beside two spinning threads
// on one CPU with load balancing off, it gets a few ms every 300 and its
// once-a-second affinity scan can come after the thread it should see.
std::string RecordWhile(const std::string& dir, const char* name, const char* seconds,
                        const std::function<void()>& workload, int recorder_cpu = -1);

const analyze::Finding* FindDetector(const analyze::Analysis& a, std::string_view detector);

std::string UniqueName(const char* what);

// The calling thread onto `cpus`.
void Pin(std::initializer_list<int> cpus);

analyze::Analysis ReportOn(const std::string& trace, pid_t focus, std::string* text);

}  // namespace gpunoise::testing
