// The machine a trace was recorded on.
#pragma once

#include <cstdint>
#include <string>

namespace gpunoise::model {

struct HostInfo {
  std::string hostname;
  std::string boot_id;       // /proc/sys/kernel/random/boot_id: this boot of this machine
  std::string machine_name;  // --machine-name, default the hostname; SystemInfo.machine_name
  std::string sysname;   // uname -s
  std::string release;   // uname -r
  std::string version;   // uname -v
  std::string machine;   // uname -m
  uint32_t num_cpus = 0;  // possible CPUs
  uint32_t page_size = 0;
  uint64_t ram_bytes = 0;
  int64_t hz = 0;         // USER_HZ
  int32_t timezone_off_mins = 0;
};

}  // namespace gpunoise::model
