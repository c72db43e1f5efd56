#include "common/fork_join.h"

namespace gpunoise {

Result<std::unique_ptr<ForkJoin>> ForkJoin::Start(const char* name, size_t lanes) {
  std::unique_ptr<ForkJoin> f(new ForkJoin());
  for (size_t i = 1; i < lanes; ++i) {
    GN_ASSIGN_OR_RETURN(std::unique_ptr<SerialWorker> worker, SerialWorker::Start(name, 1));
    f->workers_.push_back(std::move(worker));
  }
  return f;
}

void ForkJoin::Run(const std::function<void(size_t lane)>& fn) {
  for (size_t i = 0; i < workers_.size(); ++i) workers_[i]->Post([&fn, i] { fn(i + 1); });
  fn(0);
  for (auto& w : workers_) w->Wait();
}

std::vector<pid_t> ForkJoin::tids() const {
  std::vector<pid_t> out;
  for (const auto& w : workers_) out.push_back(w->tid());
  return out;
}

}  // namespace gpunoise
