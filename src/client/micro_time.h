// metav1.MicroTime text ("2026-01-02T03:04:05.123456Z"), as events and leases carry it.
#pragma once

#include <chrono>
#include <string>

namespace berth::client {

std::string FormatMicroTime(std::chrono::system_clock::time_point t);
inline std::string MicroTimeNow() { return FormatMicroTime(std::chrono::system_clock::now()); }

}  // namespace berth::client
