#include "model/exec_path.h"

#include <mutex>
#include <unordered_set>

namespace gpunoise::model {
namespace {

struct Interned {
  std::mutex mu;
  std::unordered_set<std::string> paths;  // node-based: an element's address never changes
  size_t bytes = 0;                         // about what `paths` holds
};

Interned& Table() {
  // Never destroyed: events may still name a path while statics are torn down.
  static Interned* table = new Interned;
  return *table;
}

}  // namespace

ExecPath::ExecPath(std::string_view path) {
  if (path.empty()) return;
  path = path.substr(0, kMaxLen);
  Interned& t = Table();
  std::lock_guard lock(t.mu);
  auto found = t.paths.find(std::string(path));
  if (found != t.paths.end()) {
    path_ = &*found;
    return;
  }
  // A trace from elsewhere can hold any number of distinct paths: past the
  // budget they share one stand-in rather than grow the table for ever.
  if (t.bytes + path.size() > kTableBudget) path = kTableFull;
  auto [it, added] = t.paths.emplace(path);
  if (added) t.bytes += it->size() + sizeof(std::string) + 32;
  path_ = &*it;
}

}  // namespace gpunoise::model
