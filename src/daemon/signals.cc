#include "daemon/signals.h"

#include <csignal>
#include <ctime>

namespace berth::daemon {
namespace {
sigset_t TerminationSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A client that goes away mid-write must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
}

void BlockReloadSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal(const std::function<bool()>& stop_early,
                             std::chrono::milliseconds poll,
                             const std::function<void()>& on_reload) {
  sigset_t set = TerminationSet();
  if (on_reload) sigaddset(&set, SIGHUP);
  timespec ts{static_cast<time_t>(poll.count() / 1000),
              static_cast<long>((poll.count() % 1000) * 1000000)};
  for (;;) {
    int sig = sigtimedwait(&set, nullptr, &ts);
    if (sig == SIGHUP) {
      on_reload();
      continue;
    }
    if (sig > 0) return sig;
    if (stop_early && stop_early()) return 0;
  }
}

}  // namespace berth::daemon
