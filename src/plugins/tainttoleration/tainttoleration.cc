#include "plugins/tainttoleration/tainttoleration.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/tolerations.h"
#include "berth/api/selectors.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/remedy.h"
#include "framework/node_batch_score.h"
#include "framework/pod_signature.h"

namespace berth {
namespace {

struct TaintPreScoreState final : StateData, std::enable_shared_from_this<TaintPreScoreState> {
  // The pod's tolerations that can tolerate a PreferNoSchedule taint (that effect or any).
  std::vector<Toleration> prefer_no_schedule;

  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<TaintPreScoreState>(shared_from_this());
  }
};

inline constexpr StateKey<TaintPreScoreState> kPreScoreKey{"PreScoreTaintToleration"};

bool Tolerates(const Pod& pod, const Node& node, bool comparison_operators) {
  return FindUntoleratedTaint(node.spec.taints, pod.spec.tolerations, &IsScheduleBlockingTaint,
                              comparison_operators) == nullptr;
}

// A toleration as the pod would add it for `taint`: Exists for a taint without a value.
Toleration TolerationFor(const Taint& t) {
  return {t.key, t.value.empty() ? "Exists" : "Equal", t.value, t.effect, {}};
}

std::string TolerationYaml(const Taint& t) {
  if (t.value.empty())
    return fmt::format("- key: {}\n  operator: Exists\n  effect: {}\n", t.key, t.effect);
  return fmt::format("- key: {}\n  operator: Equal\n  value: {}\n  effect: {}\n", t.key, t.value,
                     t.effect);
}

class TaintToleration final : public FilterPlugin,
                              public PreScorePlugin,
                              public ScorePlugin,
                              public EnqueueExtensions,
                              public FilterRemedySearch,
                              public NodeBatchScorer,
                              public PodSigner {
 public:
  explicit TaintToleration(bool comparison_operators)
      : comparison_operators_(comparison_operators) {}

  std::string_view Name() const override { return kTaintTolerationName; }

  // Filter and Score read the pod's tolerations only.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return signature::SameTolerations(a, b);
  }

  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::Error("node not found");
    if (FindUntoleratedTaint(node.node()->spec.taints, pod->spec.tolerations,
                             &IsScheduleBlockingTaint, comparison_operators_) != nullptr) {
      return Status::Unresolvable(std::string(kTaintTolerationReason));
    }
    return Status::Success();
  }

  // Per rejected node, tolerations for every taint of it the pod does not tolerate, together:
  // one toleration opens no node that has two.
  RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                 size_t) const override {
    RemedyProposal proposal;
    for (const RejectedNode& node : rejected)
      if (auto r = TolerationsFor(pod, *node.node)) proposal.remedies.push_back(std::move(*r));
    return proposal;
  }

  // Helps when a node the pod tolerates appears, or a node's taints become tolerable.
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    const bool ops = comparison_operators_;
    return {{{EventResource::kNode, kAdd | kUpdateNodeTaint},
             [ops](const Pod& pod, const EventObject& old_object,
                   const EventObject& new_object) -> Result<QueueingHint> {
               const Node* node = ObjectAs<Node>(new_object);
               if (!node) return Error{"node event without the node"};
               if (!Tolerates(pod, *node, ops)) return QueueingHint::kQueueSkip;
               const Node* old_node = ObjectAs<Node>(old_object);
               return old_node && Tolerates(pod, *old_node, ops) ? QueueingHint::kQueueSkip
                                                                 : QueueingHint::kQueue;
             }}};
  }

  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const>) override {
    auto s = std::make_shared<TaintPreScoreState>();
    for (const Toleration& t : pod->spec.tolerations) {
      if (t.effect.empty() || t.effect == "PreferNoSchedule") s->prefer_no_schedule.push_back(t);
    }
    state.Write(kPreScoreKey, std::move(s));
    return Status::Success();
  }

  // Raw score: the number of PreferNoSchedule taints no collected toleration tolerates.
  Status Score(const CycleState& state, const PodInfo&, const NodeInfo& node,
               int64_t* score) const override {
    *score = 0;
    const TaintPreScoreState* s = state.Read(kPreScoreKey);
    if (s == nullptr) return MissingPreScore();
    return ScoreWith(*s, node, score);
  }

  Status ScoreNodes(const CycleState& state, const PodInfo&, std::span<const NodeInfo* const> nodes,
                    int64_t* out) const override {
    const TaintPreScoreState* s = state.Read(kPreScoreKey);
    if (s == nullptr) return MissingPreScore();
    for (size_t i = 0; i < nodes.size(); ++i) {
      out[i] = 0;
      Status st = ScoreWith(*s, *nodes[i], &out[i]);
      if (!st.IsSuccess()) return st;
    }
    return Status::Success();
  }

  bool HasNormalize() const override { return true; }
  Status NormalizeScore(const CycleState&, const PodInfo&,
                        std::span<NodeScore> scores) const override {
    DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
    return Status::Success();
  }

 private:
  std::optional<ClusterRemedy> TolerationsFor(const Pod& pod, const Node& node) const {
    auto tolerant = std::make_shared<Pod>(pod);
    std::vector<std::string> shown;
    std::string yaml = "tolerations:\n";
    for (const Taint& t : node.spec.taints) {
      if (FindUntoleratedTaint(std::span<const Taint>(&t, 1), pod.spec.tolerations,
                               &IsScheduleBlockingTaint, comparison_operators_) == nullptr)
        continue;
      tolerant->spec.tolerations.push_back(TolerationFor(t));
      shown.push_back(
          fmt::format("{}{}{}:{}", t.key, t.value.empty() ? "" : "=", t.value, t.effect));
      yaml += TolerationYaml(t);
    }
    if (shown.empty()) return std::nullopt;
    tolerant->raw.reset();
    ClusterRemedy r;
    r.kind = "toleration";
    r.description = fmt::format("add a toleration for the taint{} {}", shown.size() > 1 ? "s" : "",
                                fmt::join(shown, ", "));
    r.pod = std::move(tolerant);
    r.pod_change = std::move(yaml);
    r.cost = static_cast<int64_t>(shown.size()) - 1;
    return r;
  }

  static Status MissingPreScore() {
    return Status::Error("failed to read \"PreScoreTaintToleration\" from cycleState: not found");
  }
  Status ScoreWith(const TaintPreScoreState& s, const NodeInfo& node, int64_t* score) const {
    if (node.node() == nullptr) return Status::Error("node not found");
    for (const Taint& taint : node.node()->spec.taints) {
      if (taint.effect != "PreferNoSchedule") continue;
      bool tolerated = false;
      for (const Toleration& t : s.prefer_no_schedule) {
        if (TolerationToleratesTaint(t, taint, comparison_operators_)) {
          tolerated = true;
          break;
        }
      }
      if (!tolerated) ++*score;
    }
    return Status::Success();
  }

  const bool comparison_operators_;  // the TaintTolerationComparisonOperators gate
};

}  // namespace

PluginRegistration TaintTolerationRegistration() {
  return TaintTolerationRegistration(config::FeatureGates());
}

PluginRegistration TaintTolerationRegistration(const config::FeatureGates& gates) {
  const bool ops = gates.Enabled(kTaintTolerationComparisonOperatorsGate);
  return MakeRegistration(kTaintTolerationName,
                          [ops](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
                            return std::unique_ptr<Plugin>(std::make_unique<TaintToleration>(ops));
                          });
}

}  // namespace berth
