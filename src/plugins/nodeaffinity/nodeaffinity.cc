#include "plugins/nodeaffinity/nodeaffinity.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "berth/api/selectors.h"
#include "berth/config/plugin_args.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/remedy.h"
#include "config/plugin_args_codec.h"
#include "plugins/nodeaffinity/remedies.h"

namespace berth {
namespace {

const NodeAffinity* OptPtr(const std::optional<NodeAffinity>& a) { return a ? &*a : nullptr; }

constexpr std::string_view kReasonPod = "node(s) didn't match Pod's node affinity/selector";
constexpr std::string_view kReasonEnforced =
    "node(s) didn't match scheduler-enforced node affinity";
constexpr std::string_view kReasonConflict = "pod affinity terms conflict";

const NodeSelector* RequiredAffinity(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (a && a->node_affinity && a->node_affinity->required) return &*a->node_affinity->required;
  return nullptr;
}

const std::vector<PreferredSchedulingTerm>* PreferredAffinity(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (a && a->node_affinity && !a->node_affinity->preferred.empty()) {
    return &a->node_affinity->preferred;
  }
  return nullptr;
}

int64_t MatchingWeight(const std::vector<PreferredSchedulingTerm>& terms, const Node& node) {
  int64_t sum = 0;
  for (const PreferredSchedulingTerm& t : terms) {
    // Weight-0 and empty terms add nothing; an empty term never matches.
    if (t.weight != 0 && NodeSelectorTermMatches(t.preference, node)) sum += t.weight;
  }
  return sum;
}

// The node names one required term pins with `metadata.name In (...)`, intersected across its
// field requirements; nullopt when the term does not pin names.
std::optional<std::set<std::string>> PinnedNames(const NodeSelectorTerm& term) {
  std::optional<std::set<std::string>> names;
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if (r.key != "metadata.name" || r.op != "In") continue;
    std::set<std::string> values(r.values.begin(), r.values.end());
    if (!names) {
      names = std::move(values);
    } else {
      std::set<std::string> both;
      std::set_intersection(names->begin(), names->end(), values.begin(), values.end(),
                            std::inserter(both, both.end()));
      names = std::move(both);
    }
  }
  return names;
}

class NodeAffinityPlugin final : public PreFilterPlugin,
                                 public FilterPlugin,
                                 public PreScorePlugin,
                                 public ScorePlugin,
                                 public ScoresWithoutPreScore,
                                 public EnqueueExtensions,
                                 public FilterRemedySearch,
                                 public PodSigner {
 public:
  static Result<std::unique_ptr<Plugin>> New(const PluginArgs* args, Handle&) {
    static const config::NodeAffinityArgs kDefaults;
    auto na = ArgsAs(args, &kDefaults, "NodeAffinityArgs");
    // Upstream's wording for this plugin differs from the others'.
    if (!na.ok()) {
      return Error{"args are not of type NodeAffinityArgs, got " + std::string(args->Kind())};
    }
    auto plugin = std::make_unique<NodeAffinityPlugin>();
    if ((*na)->added_affinity) {
      plugin->added_required_ = (*na)->added_affinity->required;
      plugin->added_preferred_ = (*na)->added_affinity->preferred;
    }
    return std::unique_ptr<Plugin>(std::move(plugin));
  }

  std::string_view Name() const override { return kNodeAffinityName; }

  // Filter and Score read the pod's nodeSelector and node affinity (the profile's added
  // affinity is the same for every pod).
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    if (a.spec.node_selector != b.spec.node_selector) return false;
    const NodeAffinity* x = a.spec.affinity ? OptPtr(a.spec.affinity->node_affinity) : nullptr;
    const NodeAffinity* y = b.spec.affinity ? OptPtr(b.spec.affinity->node_affinity) : nullptr;
    return x == nullptr ? y == nullptr : y != nullptr && *x == *y;
  }

  Status PreFilter(CycleState&, const PodInfo& pod, std::span<const NodeInfo* const>,
                   PreFilterResult* result) override {
    const NodeSelector* required = RequiredAffinity(*pod);
    if (required == nullptr && !added_required_ && pod->spec.node_selector.empty()) {
      return Status::Skip();
    }
    if (required == nullptr || required->terms.empty()) return Status::Success();

    // Terms are ORed, so the pod is pinned to names only if every term pins some.
    std::set<std::string> names;
    for (const NodeSelectorTerm& term : required->terms) {
      std::optional<std::set<std::string>> pinned = PinnedNames(term);
      if (!pinned) return Status::Success();
      names.merge(*pinned);
    }
    if (names.empty()) return Status::Unresolvable(std::string(kReasonConflict));
    if (result != nullptr) result->node_names = std::move(names);
    return Status::Success();
  }

  bool Matches(const Pod& pod, const Node& node) const {
    if (added_required_ && !NodeSelectorMatches(*added_required_, node)) return false;
    return PodMatchesNodeSelectorAndAffinityTerms(pod, node);
  }

  // The labels each rejected node lacks (remedies.h).
  RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                 size_t) const override {
    return nodeaffinity::ProposeNodeLabels(pod, added_required_ ? &*added_required_ : nullptr,
                                           rejected);
  }

  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    const Node* n = node.node();
    if (n == nullptr) return Status::Error("node not found");
    if (added_required_ && !NodeSelectorMatches(*added_required_, *n)) {
      return enforced_not_match_;
    }
    if (!PodMatchesNodeSelectorAndAffinityTerms(*pod, *n)) {
      return pod_not_match_;
    }
    return Status::Success();
  }

  // A node that now matches, and did not before, may take the pod.
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    return {{{EventResource::kNode, kAdd | kUpdateNodeLabel},
             [this](const Pod& pod, const EventObject& old_object,
                    const EventObject& new_object) -> Result<QueueingHint> {
               const Node* node = ObjectAs<Node>(new_object);
               if (!node) return Error{"node event without the node"};
               if (!Matches(pod, *node)) return QueueingHint::kQueueSkip;
               const Node* old_node = ObjectAs<Node>(old_object);
               if (old_node && Matches(pod, *old_node)) return QueueingHint::kQueueSkip;
               return QueueingHint::kQueue;
             }}};
  }

  Status PreScore(CycleState&, const PodInfo& pod, std::span<const NodeInfo* const>) override {
    if (PreferredAffinity(*pod) == nullptr && added_preferred_.empty()) return Status::Skip();
    return Status::Success();
  }

  Status Score(const CycleState&, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override {
    *score = 0;
    const Node* n = node.node();
    if (n == nullptr) return Status::Error("node not found");
    *score += MatchingWeight(added_preferred_, *n);
    if (const auto* preferred = PreferredAffinity(*pod)) *score += MatchingWeight(*preferred, *n);
    return Status::Success();
  }

  bool HasNormalize() const override { return true; }
  Status NormalizeScore(const CycleState&, const PodInfo&,
                        std::span<NodeScore> scores) const override {
    DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
    return Status::Success();
  }

 private:
  // Filter's rejections, built once: most nodes fail a narrow affinity, and a copy of a Status
  // costs a reference count where a new one allocates.
  const Status enforced_not_match_ =
      Status::Unresolvable(std::string(kReasonEnforced)).WithPlugin(kNodeAffinityName);
  const Status pod_not_match_ =
      Status::Unresolvable(std::string(kReasonPod)).WithPlugin(kNodeAffinityName);
  std::optional<NodeSelector> added_required_;
  std::vector<PreferredSchedulingTerm> added_preferred_;
};

}  // namespace

PluginRegistration NodeAffinityRegistration() {
  return MakeRegistration(kNodeAffinityName, &NodeAffinityPlugin::New,
                          config::InTreeArgsDecoder(std::string(kNodeAffinityName)));
}

}  // namespace berth
