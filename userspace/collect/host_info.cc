#include "collect/host_info.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/cpu_list.h"
#include "common/files.h"

namespace gpunoise::collect {

model::HostInfo ReadHostInfo() {
  model::HostInfo h;
  utsname u{};
  if (::uname(&u) == 0) {
    h.hostname = u.nodename;
    h.sysname = u.sysname;
    h.release = u.release;
    h.version = u.version;
    h.machine = u.machine;
  }
  h.machine_name = h.hostname;
  if (auto id = ReadFileToString("/proc/sys/kernel/random/boot_id"); id.ok()) {
    h.boot_id = *id;
    while (!h.boot_id.empty() && (h.boot_id.back() == '\n' || h.boot_id.back() == ' ')) h.boot_id.pop_back();
  }
  h.num_cpus = static_cast<uint32_t>(PossibleCpus().size());
  h.page_size = static_cast<uint32_t>(::sysconf(_SC_PAGESIZE));
  h.ram_bytes = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * h.page_size;
  h.hz = ::sysconf(_SC_CLK_TCK);
  time_t now = ::time(nullptr);
  struct tm local {};
  if (::localtime_r(&now, &local)) h.timezone_off_mins = static_cast<int32_t>(local.tm_gmtoff / 60);
  return h;
}

}  // namespace gpunoise::collect
