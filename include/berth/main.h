// Berth's command line as a function, for a scheduler binary of one's own with plugins compiled
// in — upstream's `app.NewSchedulerCommand(app.WithPlugin(name, factory))`:
//
//   #include <berth/main.h>
//   int main(int argc, char** argv) {
//     return berth::Main(argc, argv, {MyPluginRegistration()});
//   }
//
// The binary then has every berth subcommand (scheduler, up, simulate, capacity, ...), with
// `plugins` registered beside the in-tree ones (a name clash is an error at start).
#pragma once

#include <vector>

#include "berth/framework/registry.h"

namespace berth {

// Runs the command line; returns the process exit code. Call once, from main().
BERTH_EXPORT int Main(int argc, char** argv, std::vector<PluginRegistration> plugins = {});

}  // namespace berth
