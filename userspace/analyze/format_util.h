// Human-readable numbers for findings and tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpunoise::analyze {

std::string FormatNs(uint64_t ns);        // "812 ms", "3.2 us", "1.25 s"
std::string FormatShare(double share);    // "40.6%"
std::string JoinCpus(const std::vector<uint32_t>& cpus);  // "1", "0,2,3", "0,4-7"
std::string CpuPhrase(const std::vector<uint32_t>& cpus);  // "CPU 1", "CPUs 0,4-7"
// Offset of `ts` from the start of the data: "+2.345 s".
std::string FormatOffset(uint64_t ts, uint64_t origin);

}  // namespace gpunoise::analyze
