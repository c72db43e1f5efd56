#include "cupti/process_self.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace gpunoise::cupti {

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  ::clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

ClockReadings ReadClocks() {
  ClockReadings c;
  uint64_t boot0 = ClockNs(CLOCK_BOOTTIME);
  c.monotonic = ClockNs(CLOCK_MONOTONIC);
  c.realtime = ClockNs(CLOCK_REALTIME);
  uint64_t boot1 = ClockNs(CLOCK_BOOTTIME);
  c.boottime = boot0 + (boot1 - boot0) / 2;
  return c;
}

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

uint64_t OwnPidNamespace() {
  char buf[64];
  ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof(buf) - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* open = std::strchr(buf, '[');
  return open ? std::strtoull(open + 1, nullptr, 10) : 0;
}

void Note(const std::string& message) {
  uint64_t ns = OwnPidNamespace();
  if (ns == kInitPidNamespace)
    std::fprintf(stderr, "gpunoise-cupti[%d]: %s\n", static_cast<int>(::getpid()), message.c_str());
  else
    std::fprintf(stderr, "gpunoise-cupti[%d in pid namespace %llu]: %s\n", static_cast<int>(::getpid()),
                 static_cast<unsigned long long>(ns), message.c_str());
}

}  // namespace gpunoise::cupti
