// The report of a scenario run: JSON for machines, text for people. Both are functions of the
// run's result alone (no wall-clock numbers), so the same run prints the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "scenario/runner.h"

namespace berth::scenario {

nlohmann::json ReportJson(const RunResult& result);
std::string ReportText(const RunResult& result);

}  // namespace berth::scenario
