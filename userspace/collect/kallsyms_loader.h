// Reads /proc/kallsyms in the background (common/background_task.h).
// Reading and parsing it costs 30-50 ms of CPU (120k symbols); on the
// recorder's drain thread, just after the gate opened on a node in a NET_RX
// storm, that pause overflowed a 4 MiB ring (11-15k records lost at start).
#pragma once

#include "collect/kallsyms.h"
#include "common/background_task.h"
#include "common/unique_fd.h"

namespace gpunoise::collect {

class KernelSymbolsLoader {
 public:
  // Starts reading `kallsyms` (opened while the reader could see kernel
  // addresses: the kernel decides from the opener's credentials). An
  // invalid descriptor gives an empty table.
  explicit KernelSymbolsLoader(UniqueFd kallsyms)
      : fd_(std::move(kallsyms)), loading_([fd = fd_.get()] { return KernelSymbols::LoadFromFd(fd); }) {}

  // The table once read, else nullptr; never blocks.
  const KernelSymbols* TryGet() { return loading_.TryGet(); }
  // The table, waiting for the read to finish.
  const KernelSymbols& Get() { return loading_.Get(); }

 private:
  UniqueFd fd_;  // declared first: it outlives the task reading it
  BackgroundTask<KernelSymbols> loading_;
};

}  // namespace gpunoise::collect
