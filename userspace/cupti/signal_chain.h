// Flush-on-signal without changing what the program does with the signal.
//
// For SIGINT and SIGTERM whose disposition is not "ignore", a handler is
// put in front of the existing one. When the signal arrives it asks the
// capture to flush; then:
//   - if the program had its own handler, that handler runs as before (the
//     program decides whether to exit; the atexit flush covers a clean exit);
//   - if the disposition was the default (terminate), it waits a bounded time
//     for the final flush, restores the default and re-raises, so the
//     process still dies of the signal with the status the parent expects.
// Signals the program ignores stay ignored; handlers the program installs
// later replace ours, as they would have replaced the default.
#pragma once

namespace gpunoise::cupti {

struct SignalFlushHooks {
  // Async-signal-safe: asks for a flush; `final` when the process will die.
  void (*request_flush)(bool final) = nullptr;
  // Async-signal-safe: waits up to `timeout_ms` for the final flush.
  void (*wait_final_flush)(int timeout_ms) = nullptr;
};

void InstallSignalFlush(const SignalFlushHooks& hooks);

}  // namespace gpunoise::cupti
