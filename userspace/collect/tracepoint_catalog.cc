#include "collect/tracepoint_catalog.h"

#include <bpf/btf.h>

#include <utility>

#include "common/files.h"

namespace gpunoise::collect {

Result<TracepointCatalog> TracepointCatalog::Open(std::string tracefs, bool use_btf) {
  TracepointCatalog c;
  c.tracefs_ = std::move(tracefs);
  if (use_btf) {
    c.btf_ = btf__load_vmlinux_btf();
    if (!c.btf_) return MakeError("failed to load the kernel's BTF");
  }
  return c;
}

TracepointCatalog::TracepointCatalog(TracepointCatalog&& o) noexcept { *this = std::move(o); }

TracepointCatalog& TracepointCatalog::operator=(TracepointCatalog&& o) noexcept {
  if (this != &o) {
    if (btf_) btf__free(btf_);
    tracefs_ = std::move(o.tracefs_);
    btf_ = std::exchange(o.btf_, nullptr);
  }
  return *this;
}

TracepointCatalog::~TracepointCatalog() {
  if (btf_) btf__free(btf_);
}

bool TracepointCatalog::HasBtfTracepoint(std::string_view event) const {
  if (!btf_) return false;
  std::string name = "btf_trace_" + std::string(event);
  return btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_TYPEDEF) > 0;
}

int TracepointCatalog::BtfTracepointArity(std::string_view event) const {
  if (!btf_) return -1;
  std::string name = "btf_trace_" + std::string(event);
  int id = btf__find_by_name_kind(btf_, name.c_str(), BTF_KIND_TYPEDEF);
  if (id <= 0) return -1;
  // typedef -> pointer -> func_proto
  const struct btf_type* t = btf__type_by_id(btf_, btf__type_by_id(btf_, id)->type);
  if (!t || !btf_is_ptr(t)) return -1;
  t = btf__type_by_id(btf_, t->type);
  if (!t || !btf_is_func_proto(t)) return -1;
  return static_cast<int>(btf_vlen(t)) - 1;
}

bool TracepointCatalog::HasTracefsEvent(std::string_view category, std::string_view event) const {
  if (tracefs_.empty()) return false;
  return PathExists(tracefs_ + "/events/" + std::string(category) + "/" + std::string(event) + "/id");
}

std::vector<std::string> TracepointCatalog::TracefsEvents(std::string_view category) const {
  std::vector<std::string> out;
  if (tracefs_.empty()) return out;
  auto names = ListDirectory(tracefs_ + "/events/" + std::string(category));
  if (!names.ok()) return out;
  for (auto& n : *names)
    if (n != "enable" && n != "filter") out.push_back(std::move(n));
  return out;
}

std::vector<std::string> TracepointCatalog::TracefsCategories() const {
  std::vector<std::string> out;
  if (tracefs_.empty()) return out;
  auto names = ListDirectory(tracefs_ + "/events");
  if (!names.ok()) return out;
  for (auto& n : *names)
    if (PathExists(tracefs_ + "/events/" + n + "/enable") &&
        !PathExists(tracefs_ + "/events/" + n + "/id"))
      out.push_back(std::move(n));
  return out;
}

}  // namespace gpunoise::collect
