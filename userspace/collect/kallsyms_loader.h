// Reads /proc/kallsyms on a thread of its own, at a low priority (nice 10).
// Reading and parsing it costs 30-50 ms of CPU (120k symbols); on the
// recorder's drain thread, just after the gate opened on a node in a NET_RX
// storm, that pause overflowed a 4 MiB ring (11-15k records lost at start).
#pragma once

#include <future>
#include <optional>

#include "collect/kallsyms.h"
#include "common/unique_fd.h"

namespace gpunoise::collect {

class KernelSymbolsLoader {
 public:
  // Starts reading `kallsyms` (opened while the reader could see kernel
  // addresses: the kernel decides from the opener's credentials). An
  // invalid descriptor gives an empty table.
  explicit KernelSymbolsLoader(UniqueFd kallsyms);
  ~KernelSymbolsLoader();
  KernelSymbolsLoader(const KernelSymbolsLoader&) = delete;
  KernelSymbolsLoader& operator=(const KernelSymbolsLoader&) = delete;

  // The table once read, else nullptr; never blocks.
  const KernelSymbols* TryGet();
  // The table, waiting for the read to finish.
  const KernelSymbols& Get();

 private:
  UniqueFd fd_;
  std::future<KernelSymbols> loading_;
  std::optional<KernelSymbols> symbols_;
};

}  // namespace gpunoise::collect
