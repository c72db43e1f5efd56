// What the injection library reads about the process it runs in: its clocks
// and its pid namespace, and the one way it speaks to the program's stderr.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>

#include "cupti/packet_builder.h"

namespace gpunoise::cupti {

uint64_t ClockNs(clockid_t clock);

// BOOTTIME between two reads, with MONOTONIC and REALTIME in between: the
// clock snapshot each fragment carries.
ClockReadings ReadClocks();

// "" when the file cannot be read (a /proc the container does not mount).
std::string ReadFirstLine(const char* path);

// The inode of this process's pid namespace (/proc/self/ns/pid reads
// "pid:[4026531836]"); 0 when /proc is not mounted or not ours to read.
uint64_t OwnPidNamespace();

// PROC_PID_INIT_INO (include/linux/proc_ns.h): the host's pid namespace.
inline constexpr uint64_t kInitPidNamespace = 0xEFFFFFFCull;

// The one line a training program ever sees from us. Inside a container it
// names the pid namespace, since the pid it shows is the namespace's.
void Note(const std::string& message);

}  // namespace gpunoise::cupti
