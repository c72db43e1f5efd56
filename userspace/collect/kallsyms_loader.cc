#include "collect/kallsyms_loader.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>

#include "common/capabilities.h"

namespace gpunoise::collect {

KernelSymbolsLoader::KernelSymbolsLoader(UniqueFd kallsyms) : fd_(std::move(kallsyms)) {
  const int fd = fd_.get();
  loading_ = std::async(std::launch::async, [fd] {
    // Capabilities are per thread, and this one starts before the recorder
    // drops its own: it needs none to read a descriptor already open.
    (void)DropAllCapabilitiesOfThisThread();
    // Only this thread, and below the node's own work. Not nice 19: on a
    // node busy on every CPU that starved it, and a 1 s recording waited
    // 4 s more at its end for the table (nice 10: as long as nice 0).
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
    return KernelSymbols::LoadFromFd(fd);
  });
}

KernelSymbolsLoader::~KernelSymbolsLoader() {
  if (loading_.valid()) loading_.wait();
}

const KernelSymbols* KernelSymbolsLoader::TryGet() {
  if (!symbols_ && loading_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
  return &Get();
}

const KernelSymbols& KernelSymbolsLoader::Get() {
  if (!symbols_) symbols_ = loading_.get();
  return *symbols_;
}

}  // namespace gpunoise::collect
