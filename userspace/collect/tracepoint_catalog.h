// Which tracepoints this kernel has, and how each can be attached: as tp_btf
// (typed, BTF-described) or as a classic tracefs tracepoint.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

struct btf;

namespace gpunoise::collect {

class TracepointCatalog {
 public:
  // `tracefs` may be empty (classic tracepoints then count as absent).
  static Result<TracepointCatalog> Open(std::string tracefs, bool use_btf = true);

  TracepointCatalog(TracepointCatalog&&) noexcept;
  TracepointCatalog& operator=(TracepointCatalog&&) noexcept;
  ~TracepointCatalog();

  // The kernel's BTF has "btf_trace_<event>", so tp_btf/<event> can attach.
  bool HasBtfTracepoint(std::string_view event) const;
  bool HasTracefsEvent(std::string_view category, std::string_view event) const;
  std::vector<std::string> TracefsEvents(std::string_view category) const;
  std::vector<std::string> TracefsCategories() const;

  // Number of parameters of the tp_btf prototype (without the leading
  // context pointer); -1 when unknown.
  int BtfTracepointArity(std::string_view event) const;

  const std::string& tracefs() const { return tracefs_; }
  const struct btf* vmlinux_btf() const { return btf_; }

 private:
  TracepointCatalog() = default;
  std::string tracefs_;
  struct btf* btf_ = nullptr;
};

}  // namespace gpunoise::collect
