// Termination signals for the long-running commands: SIGINT and SIGTERM are blocked in every
// thread (call BlockTerminationSignals on the main thread before starting any) and taken
// synchronously by the main thread, so shutdown runs as ordinary code, not in a handler. SIGHUP
// (a configuration reload) likewise, for the commands that call BlockReloadSignal.
#pragma once

#include <chrono>
#include <functional>

namespace berth::daemon {

void BlockTerminationSignals();
// Blocks SIGHUP in every thread started afterwards; WaitForTerminationSignal takes it when given
// `on_reload`.
void BlockReloadSignal();

// Waits until SIGINT/SIGTERM arrives (returns the signal) or `stop_early` returns true (returns
// 0); `stop_early` is polled every `poll`. With `on_reload`, each SIGHUP calls it on this thread
// and the wait goes on.
int WaitForTerminationSignal(const std::function<bool()>& stop_early = {},
                             std::chrono::milliseconds poll = std::chrono::milliseconds(200),
                             const std::function<void()>& on_reload = {});

}  // namespace berth::daemon
