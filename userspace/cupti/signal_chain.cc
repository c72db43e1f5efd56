#include "cupti/signal_chain.h"

#include <signal.h>

#include <cerrno>

namespace gpunoise::cupti {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr int kFinalFlushWaitMs = 2000;

SignalFlushHooks g_hooks;
struct sigaction g_previous[2];

int IndexOf(int sig) { return sig == SIGINT ? 0 : 1; }

void OnSignal(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  const struct sigaction& previous = g_previous[IndexOf(sig)];
  bool default_action = !(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_DFL;
  if (g_hooks.request_flush) g_hooks.request_flush(default_action);
  if (default_action) {
    if (g_hooks.wait_final_flush) g_hooks.wait_final_flush(kFinalFlushWaitMs);
    // Put the default back and re-raise: the signal is blocked while this
    // handler runs, and is delivered, fatally, when it returns.
    ::sigaction(sig, &previous, nullptr);
    ::raise(sig);
  } else if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  }
  errno = saved_errno;
}

}  // namespace

void InstallSignalFlush(const SignalFlushHooks& hooks) {
  g_hooks = hooks;
  for (int sig : kSignals) {
    struct sigaction current;
    if (::sigaction(sig, nullptr, &current) != 0) continue;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
    g_previous[IndexOf(sig)] = current;
    struct sigaction ours = {};
    ours.sa_sigaction = OnSignal;
    // Keep the program's mask and restart behaviour for its own handler.
    ours.sa_mask = current.sa_mask;
    ours.sa_flags = SA_SIGINFO | (current.sa_flags & SA_RESTART);
    ::sigaction(sig, &ours, nullptr);
  }
}

}  // namespace gpunoise::cupti
