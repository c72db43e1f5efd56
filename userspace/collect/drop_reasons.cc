#include "collect/drop_reasons.h"

#include <bpf/btf.h>
#include <fmt/format.h>

#include <string_view>

#include "common/strings.h"

namespace gpunoise::collect {

DropReasonNames DropReasonNames::FromBtf(const struct btf* btf) {
  DropReasonNames out;
  if (!btf) return out;
  int id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
  if (id <= 0) return out;
  const struct btf_type* t = btf__type_by_id(btf, id);
  const struct btf_enum* e = btf_enum(t);
  for (unsigned i = 0; i < btf_vlen(t); ++i, ++e) {
    std::string_view name = btf__name_by_offset(btf, e->name_off);
    constexpr std::string_view kPrefix = "SKB_DROP_REASON_";
    if (StartsWith(name, kPrefix)) name.remove_prefix(kPrefix.size());
    else if (name == "SKB_CONSUMED" || name == "SKB_NOT_DROPPED_YET") name.remove_prefix(4);
    out.names_.emplace(static_cast<uint32_t>(e->val), std::string(name));
  }
  return out;
}

DropReasonNames DropReasonNames::FromMapForTesting(std::map<uint32_t, std::string> names) {
  DropReasonNames out;
  out.names_ = std::move(names);
  return out;
}

std::string DropReasonNames::Name(uint32_t reason) const {
  if (auto it = names_.find(reason); it != names_.end()) return it->second;
  // include/net/dropreason.h: SKB_DROP_REASON_SUBSYS_SHIFT is 16.
  if (reason >> 16) return fmt::format("SUBSYS_{}_{}", reason >> 16, reason & 0xffff);
  return fmt::format("REASON_{}", reason);
}

}  // namespace gpunoise::collect
