// The web view of `berth up`: a page served from the binary under /ui/ that draws the nodes'
// allocated and free resources, the pods and where they run, and per pod its last scheduling
// decision (score matrix, filter rejections) or, for a pending pod, the explanation of
// `berth explain`. The page follows the API server's own watches, so it updates live.
//
// Routes (mounted on the API server as ExtraRoutes):
//   /ui/, /ui/app.js, /ui/app.css      public; static; they carry no cluster data
//   /ui/api/decision?namespace=&name=  the pod's last attempt (DecisionJson), or 404
//   /ui/api/explain?namespace=&name=   explain::ToJson over the stored objects
//   /ui/api/timeline                   the cluster's timeline since start (LiveTimeline)
// Data routes need the API server's bearer token. The page reads the token from the URL
// fragment (#token=..., never sent to the server), keeps it in sessionStorage and sends it as
// "Authorization: Bearer" on every request, the watches included.
//
// Threads: the handlers run on the API server's I/O threads; explanations, which schedule the
// pod again over a copy of the cluster, run one at a time (a second one meanwhile gets 503).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/server.h"
#include "berth/framework/registry.h"
#include "config/types.h"
#include "ui/decision_log.h"
#include "ui/live_timeline.h"

namespace berth::ui {

struct WebViewOptions {
  // What explanations schedule with: the configuration and plugins the scheduler runs. Both
  // must outlive the server.
  const config::SchedulerConfiguration* config = nullptr;
  const Registry* registry = nullptr;
  std::string config_source = "default configuration";
  const DecisionLog* decisions = nullptr;  // null when no scheduler runs
  // The cluster's timeline; null: the Timeline tab shows only reports opened from files.
  std::shared_ptr<const LiveTimeline> timeline;
};

std::vector<apiserver::ExtraRoute> WebViewRoutes(const WebViewOptions& options);

// A static asset by file name ("index.html", "app.js", "timeline.js", "compare.js",
// "app.css"), or nullptr.
std::optional<std::string_view> FindAsset(std::string_view name);

}  // namespace berth::ui
