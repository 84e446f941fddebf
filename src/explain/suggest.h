// The candidate changes `berth explain` derives from an attempt's rejections, one finder per
// kind. A finder only proposes: it builds the change on a copy of the cluster and hands it to
// the Verifier, which keeps it only if the pod is then placed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "explain/verify.h"

namespace berth::explain {

// What a finder reads: the cluster, the first attempt's rejections, and the verifier.
struct Search {
  Search(const Cluster& cluster, const SchedulingAttempt& attempt, const ExplainOptions& opts,
         Verifier& v);

  // The rejected nodes whose status came from `plugin`, by name.
  std::vector<std::string> RejectedBy(std::string_view plugin) const;
  // Whether another candidate of `kind` may be tried (each costs a scheduling attempt over the
  // whole cluster, so only the cheapest few per kind are; rejected nodes of one kind look
  // alike on a large cluster).
  bool TryMore(const std::string& kind);

  const Cluster& c;
  const SchedulingAttempt& a;
  const ExplainOptions& options;
  Verifier& verifier;
  std::map<std::string, NodePtr> by_name;

 private:
  std::map<std::string, size_t> tried_;
};

Suggestion MakeSuggestion(std::string kind, std::string description, std::string yaml,
                          std::string node, int64_t cost);

// What the plugins that rejected nodes propose themselves (FilterRemedies): tolerations for a
// node's taints (TaintToleration), uncordoning (NodeUnschedulable), and a plugin library's.
// Also collects, into `diagnoses`, what the plugins implementing FilterDiagnosis say about
// each node they rejected.
void SuggestPluginRemedies(Search& s, const config::SchedulerConfiguration& config,
                           const Registry& registry, std::vector<NodeDiagnosis>* diagnoses);
// Node labels for the nodeSelector / required node affinity, the volume's zone.
void SuggestNodeChanges(Search& s);
// Freeing resources on a node by evicting or shrinking pods there; a larger node when no node
// is large enough.
void SuggestResources(Search& s);
// The maxSkew a DoNotSchedule topology spread constraint would need.
void SuggestSpreadSkew(Search& s);
// The pods that required anti-affinity keeps the pod apart from.
void SuggestAntiAffinity(Search& s);
// The matching pod required pod affinity finds in no admissible domain.
void SuggestPodAffinity(Search& s);

// Facts that explain the rejection without being a change to verify.
// "no node is large enough": a resource the pod requests beyond every node's allocatable.
std::vector<std::string> NodeSizeNotes(const Cluster& c);
// The pod's claims that are not bound, each with why (no such StorageClass, no matching PV...).
std::vector<std::string> VolumeClaimNotes(const Cluster& c);

// "16650m" for cpu, "24Mi" for memory and storage, the count for the rest.
std::string FormatAmount(std::string_view resource, int64_t v);

}  // namespace berth::explain
