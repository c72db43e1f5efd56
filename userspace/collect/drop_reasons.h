// Names of the running kernel's packet drop reasons, read from its BTF
// (enum skb_drop_reason), never from a table compiled into gpunoise: the
// enum grows with every release and its numbers shift.
#pragma once

#include <cstdint>
#include <map>
#include <string>

struct btf;

namespace gpunoise::collect {

class DropReasonNames {
 public:
  // From the kernel's BTF (`btf` is vmlinux BTF, e.g. the tracepoint
  // catalog's). Without BTF, or on kernels older than 5.17 that have no
  // enum, every reason is unnamed.
  static DropReasonNames FromBtf(const struct btf* btf);
  static DropReasonNames FromMapForTesting(std::map<uint32_t, std::string> names);

  // "SOCKET_RCVBUFF" (the enum member without its SKB_DROP_REASON_ prefix,
  // as the kfree_skb tracepoint prints it). Reasons of other subsystems
  // (the upper 16 bits, SKB_DROP_REASON_SUBSYS_*) and unknown values read
  // "SUBSYS_<n>_<code>" or "REASON_<n>".
  std::string Name(uint32_t reason) const;
  size_t size() const { return names_.size(); }

 private:
  std::map<uint32_t, std::string> names_;
};

}  // namespace gpunoise::collect
