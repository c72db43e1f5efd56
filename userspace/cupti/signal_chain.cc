#include "cupti/signal_chain.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace gpunoise::cupti {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};

SignalFlushHooks g_hooks;
struct sigaction g_previous[2];

int IndexOf(int sig) { return sig == SIGINT ? 0 : 1; }

void RestoreAndRaise(int sig) {
  ::sigaction(sig, &g_previous[IndexOf(sig)], nullptr);
  ::raise(sig);
}

void OnSignal(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  const struct sigaction& previous = g_previous[IndexOf(sig)];
  bool default_action = !(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_DFL;
  if (default_action) {
    // A capture thread re-raises the signal after the final flush; a storm
    // of further signals lands here again and changes nothing.
    if (!g_hooks.request_final_flush || !g_hooks.request_final_flush(sig)) {
      // The signal is blocked while this handler runs, and is delivered,
      // fatally, when it returns.
      RestoreAndRaise(sig);
    }
  } else {
    if (g_hooks.request_flush) g_hooks.request_flush();
    if (previous.sa_flags & SA_SIGINFO) {
      previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler != SIG_IGN) {
      previous.sa_handler(sig);
    }
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
    // Where the signal would have killed the program, its interrupted
    // system calls restart: it never expected to see this signal return.
    ours.sa_mask = current.sa_mask;
    bool default_action = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    ours.sa_flags = SA_SIGINFO | (default_action ? SA_RESTART : (current.sa_flags & SA_RESTART));
    ::sigaction(sig, &ours, nullptr);
  }
}

void RaiseDefault(int sig) {
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  RestoreAndRaise(sig);
  // Our threads run with the signal blocked: take it here.
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  // Not reached unless the program's disposition was changed meanwhile.
  ::_exit(128 + sig);
}

}  // namespace gpunoise::cupti
