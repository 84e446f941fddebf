// The candidate changes `berth explain` checks: what the Filter plugins that rejected nodes
// propose themselves (include/berth/framework/remedy.h), each applied to a copy of the cluster
// and handed to the Verifier, which keeps it only if the pod is then placed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "explain/verify.h"

namespace berth::explain {

// What the asking reads: the cluster, the first attempt's rejections, and the verifier.
struct Search {
  Search(const Cluster& cluster, const SchedulingAttempt& attempt, const ExplainOptions& opts,
         Verifier& v);

  // Whether another candidate of `group` may be tried (each costs a scheduling attempt over
  // the whole cluster, so only the first few per group are; rejected nodes of one kind look
  // alike on a large cluster).
  bool TryMore(const std::string& group);

  const Cluster& c;
  const SchedulingAttempt& a;
  const ExplainOptions& options;
  Verifier& verifier;
  std::map<std::string, NodePtr> by_name;

 private:
  std::map<std::string, size_t> tried_;
};

// Asks the Filter plugins of the pod's profile, in the order they run, what would make the
// nodes they rejected pass (FilterRemedySearch, or FilterRemedies node by node) and checks
// each change; collects their notes (facts that explain the rejections) into `notes` and what
// the plugins implementing FilterDiagnosis say about each node they rejected into `diagnoses`.
void AskPlugins(Search& s, const config::SchedulerConfiguration& config, const Registry& registry,
                std::vector<std::string>* notes, std::vector<NodeDiagnosis>* diagnoses);

}  // namespace berth::explain
