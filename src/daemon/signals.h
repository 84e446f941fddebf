// Termination signals for the long-running commands: SIGINT and SIGTERM are blocked in every
// thread (call BlockTerminationSignals on the main thread before starting any) and taken
// synchronously by the main thread, so shutdown runs as ordinary code, not in a handler.
#pragma once

#include <chrono>
#include <functional>

namespace berth::daemon {

void BlockTerminationSignals();

// Waits until SIGINT/SIGTERM arrives (returns the signal) or `stop_early` returns true (returns
// 0); `stop_early` is polled every `poll`.
int WaitForTerminationSignal(const std::function<bool()>& stop_early = {},
                             std::chrono::milliseconds poll = std::chrono::milliseconds(200));

}  // namespace berth::daemon
