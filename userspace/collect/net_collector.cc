#include "collect/net_collector.h"

#include "common/strings.h"

namespace gpunoise::collect {

void ReadNetNames(const bpf_map* map, std::map<model::NetDeviceKey, std::string>* out) {
  if (!map) return;
  gn_net_dev key{}, next{};
  const gn_net_dev* prev = nullptr;
  while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
    key = next;
    prev = &key;
    gn_net_name name{};
    if (bpf_map__lookup_elem(map, &key, sizeof(key), &name, sizeof(name), 0) != 0) continue;
    std::string_view n = FixedCString(name.name, sizeof(name.name));
    if (!n.empty()) out->emplace(model::NetDeviceKey{key.netns, key.ifindex}, std::string(n));
  }
}

size_t DeleteNetNames(const bpf_map* map, const std::set<model::NetDeviceKey>& gone) {
  if (!map) return 0;
  size_t deleted = 0;
  for (const model::NetDeviceKey& dev : gone) {
    gn_net_dev key{dev.netns, dev.ifindex};
    if (bpf_map__delete_elem(map, &key, sizeof(key), 0) == 0) ++deleted;
  }
  return deleted;
}

}  // namespace gpunoise::collect
