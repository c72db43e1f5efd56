// Flush-on-signal without changing what the program does with the signal.
//
// For SIGINT and SIGTERM whose disposition is not "ignore", a handler is
// put in front of the existing one. When the signal arrives it asks the
// capture to flush, and never waits inside the handler (the thread it
// interrupted may hold a lock the flush needs: malloc's, or the capture's
// own while CUPTI completes a buffer on that thread). Then:
//   - if the program had its own handler, that handler runs as before (the
//     program decides whether to exit; the atexit flush covers a clean exit);
//   - if the disposition was the default (terminate), the handler hands the
//     signal to the capture and returns; a thread of the capture waits a
//     bounded time for the final flush and then calls RaiseDefault(), so the
//     process still dies of the signal with the status the parent expects.
//     If the program reaches exit() first, the exit flush re-raises it too.
//     Where no capture thread runs (a child forked after capture started),
//     the handler restores the default and re-raises at once.
// Signals the program ignores stay ignored; handlers the program installs
// later replace ours, as they would have replaced the default.
#pragma once

namespace gpunoise::cupti {

struct SignalFlushHooks {
  // Async-signal-safe: asks for an ordinary flush (the program's own
  // handler runs next and decides what happens).
  void (*request_flush)() = nullptr;
  // Async-signal-safe: `sig`'s action is to terminate the process. Asks for
  // the final flush and returns true if a thread of the capture will call
  // RaiseDefault(sig) after it; false when none will.
  bool (*request_final_flush)(int sig) = nullptr;
};

void InstallSignalFlush(const SignalFlushHooks& hooks);

// Puts back the disposition the program had for `sig` (the default) and
// raises it in the calling thread, which must be able to take it: the
// process dies of it as it would have without us.
[[noreturn]] void RaiseDefault(int sig);

}  // namespace gpunoise::cupti
