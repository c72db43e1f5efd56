#include "integration/support/sched_oracle.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "sched_oracle.skel.h"

namespace gpunoise::testing {

std::unique_ptr<SchedOracle> SchedOracle::Start(pid_t tgid, int gate_fd, std::string* error) {
  sched_oracle_bpf* skel = sched_oracle_bpf__open();
  if (!skel) {
    *error = std::string("failed to open the oracle: ") + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<SchedOracle> oracle(new SchedOracle(skel));
  skel->rodata->target_tgid = static_cast<uint32_t>(tgid);
  skel->rodata->use_gate = gate_fd >= 0;
  if (gate_fd >= 0 && bpf_map__reuse_fd(skel->maps.gate, gate_fd) != 0) {
    *error = std::string("failed to share the recording's gate: ") + std::strerror(errno);
    return nullptr;
  }
  if (int err = sched_oracle_bpf__load(skel)) {
    *error = std::string("failed to load the oracle: ") + std::strerror(-err);
    return nullptr;
  }
  if (int err = sched_oracle_bpf__attach(skel)) {
    *error = std::string("failed to attach the oracle: ") + std::strerror(-err);
    return nullptr;
  }
  return oracle;
}

SchedOracle::~SchedOracle() { sched_oracle_bpf__destroy(skel_); }

void SchedOracle::Stop() { sched_oracle_bpf__detach(skel_); }

namespace {

template <typename T>
std::map<uint32_t, uint64_t> NonZero(const T* counts, size_t n) {
  std::map<uint32_t, uint64_t> out;
  for (size_t cpu = 0; cpu < n; ++cpu) {
    uint64_t v = __atomic_load_n(&counts[cpu], __ATOMIC_RELAXED);
    if (v) out[static_cast<uint32_t>(cpu)] = v;
  }
  return out;
}

}  // namespace

std::map<uint32_t, uint64_t> SchedOracle::SwitchesPerCpu() const {
  return NonZero(skel_->bss->switches, std::size(skel_->bss->switches));
}

std::map<uint32_t, uint64_t> SchedOracle::WakingsPerCpu() const {
  return NonZero(skel_->bss->wakings, std::size(skel_->bss->wakings));
}

namespace {

std::map<int32_t, uint64_t> ReadPerTid(const bpf_map* map) {
  std::map<int32_t, uint64_t> out;
  int fd = bpf_map__fd(map);
  uint32_t key = 0, next = 0;
  uint32_t* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    uint64_t v = 0;
    if (bpf_map_lookup_elem(fd, &next, &v) == 0) out[static_cast<int32_t>(next)] = v;
    key = next;
    prev = &key;
  }
  return out;
}

}  // namespace

std::map<int32_t, uint64_t> SchedOracle::SwitchInsPerThread() const { return ReadPerTid(skel_->maps.switch_ins); }

std::map<int32_t, uint64_t> SchedOracle::SuccessorsPerThread() const { return ReadPerTid(skel_->maps.successors); }

int FindRecordingGate(pid_t pid) {
  std::string dir = "/proc/" + std::to_string(pid) + "/fdinfo";
  DIR* d = opendir(dir.c_str());
  if (!d) return -1;
  int found = -1;
  while (dirent* e = readdir(d)) {
    std::ifstream in(dir + "/" + e->d_name);
    std::string line;
    uint32_t id = 0;
    while (std::getline(in, line))
      if (line.rfind("map_id:", 0) == 0) id = static_cast<uint32_t>(std::stoul(line.substr(7)));
    if (!id) continue;
    int fd = bpf_map_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_map_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && std::strcmp(info.name, "gn_gate") == 0) {
      found = fd;
      break;
    }
    close(fd);
  }
  closedir(d);
  return found;
}

}  // namespace gpunoise::testing
