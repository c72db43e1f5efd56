// The file an exec ran, interned: a pointer to one shared copy per distinct
// path, so that model::Event stays trivially copyable. The recorder's staging
// moves and merges every event of a drain (millions a second under a storm),
// and an event with a std::string in one alternative made each move a
// dispatch through the variant instead of a copy of its bytes.
//
// Copies live until the process ends: memory grows with the number of
// distinct paths exec'd (at most 127 bytes each from the kernel, plus the
// table's node), as the recorder's process table already grows with the
// processes it sees. A path is cut at PATH_MAX, and past kTableBudget bytes
// new paths read kTableFull (a hostile trace cannot grow the table without
// bound).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpunoise::model {

class ExecPath {
 public:
  static constexpr size_t kMaxLen = 4096;
  static constexpr size_t kTableBudget = 64u << 20;
  static constexpr std::string_view kTableFull = "(more distinct exec paths than gpunoise keeps)";

  ExecPath() = default;
  // Interns `path` (thread-safe; an empty path stays empty).
  explicit ExecPath(std::string_view path);

  std::string_view view() const { return path_ ? std::string_view(*path_) : std::string_view(); }
  bool empty() const { return !path_ || path_->empty(); }
  bool operator==(const ExecPath& o) const { return path_ == o.path_ || view() == o.view(); }

 private:
  const std::string* path_ = nullptr;
};

}  // namespace gpunoise::model
