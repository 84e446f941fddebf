#include "plugins/imagelocality/imagelocality.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "framework/node_batch_score.h"

namespace berth {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kMinThreshold = 23 * kMiB;
constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

struct ImagePreScoreState final : StateData, std::enable_shared_from_this<ImagePreScoreState> {
  std::vector<std::string> images;  // normalized, init containers first, one per container

  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<ImagePreScoreState>(shared_from_this());
  }
};

inline constexpr StateKey<ImagePreScoreState> kPreScoreKey{"PreScoreImageLocality"};

std::vector<std::string> NormalizedImages(const Pod& pod) {
  std::vector<std::string> out;
  out.reserve(pod.spec.init_containers.size() + pod.spec.containers.size());
  for (const Container& c : pod.spec.init_containers) out.push_back(NormalizeImageName(c.image));
  for (const Container& c : pod.spec.containers) out.push_back(NormalizeImageName(c.image));
  return out;
}

int64_t Priority(int64_t sum, size_t containers) {
  const int64_t max_threshold = kMaxContainerThreshold * static_cast<int64_t>(containers);
  if (max_threshold <= kMinThreshold) return 0;
  sum = std::clamp(sum, kMinThreshold, max_threshold);
  return kMaxNodeScore * (sum - kMinThreshold) / (max_threshold - kMinThreshold);
}

class ImageLocality final : public PreScorePlugin,
                            public ScorePlugin,
                            public ScoresWithoutPreScore,
                            public NodeBatchScorer,
                            public PodSigner {
 public:
  explicit ImageLocality(Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kImageLocalityName; }

  // Score reads the pod's images, normalized.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return NormalizedImages(a) == NormalizedImages(b);
  }

  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const>) override {
    auto s = std::make_shared<ImagePreScoreState>();
    s->images = NormalizedImages(*pod);
    state.Write(kPreScoreKey, std::move(s));
    return Status::Success();
  }

  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override {
    const ImagePreScoreState* s = state.Read(kPreScoreKey);
    std::vector<std::string> computed;
    if (s == nullptr) computed = NormalizedImages(*pod);
    const std::vector<std::string>& images = s ? s->images : computed;

    // Images spread over many nodes count more than rare ones, so one big image does not pull
    // every replica onto the few nodes that happen to hold it.
    const Snapshot& snapshot = handle_.snapshot();
    const double total_nodes = static_cast<double>(snapshot.size());
    const auto& states = node.image_states();
    int64_t sum = 0;
    for (const std::string& image : images) {
      auto it = states.find(image);
      if (it == states.end() || total_nodes == 0) continue;
      const double spread = static_cast<double>(snapshot.ImageNumNodes(image)) / total_nodes;
      sum += static_cast<int64_t>(static_cast<double>(it->second.size) * spread);
    }
    *score = Priority(sum, images.size());
    return Status::Success();
  }

  // Each image's spread is looked up once per run rather than per node, and an image no node
  // holds is not looked for on any (it adds nothing to the sum: the same scores as Score).
  Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                    std::span<const NodeInfo* const> nodes, int64_t* out) const override {
    const ImagePreScoreState* s = state.Read(kPreScoreKey);
    const Snapshot& snapshot = handle_.snapshot();
    if (s == nullptr || s->images.size() > kMaxRunImages || snapshot.size() == 0) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        Status st = Score(state, pod, *nodes[i], &out[i]);
        if (!st.IsSuccess()) return st;
      }
      return Status::Success();
    }
    const double total_nodes = static_cast<double>(snapshot.size());
    std::array<std::pair<const std::string*, double>, kMaxRunImages> held;
    size_t num_held = 0;
    for (const std::string& image : s->images) {
      const int holders = snapshot.ImageNumNodes(image);
      if (holders > 0) held[num_held++] = {&image, static_cast<double>(holders) / total_nodes};
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const auto& states = nodes[i]->image_states();
      int64_t sum = 0;
      for (size_t k = 0; k < num_held; ++k) {
        auto it = states.find(*held[k].first);
        if (it != states.end())
          sum += static_cast<int64_t>(static_cast<double>(it->second.size) * held[k].second);
      }
      out[i] = Priority(sum, s->images.size());
    }
    return Status::Success();
  }

 private:
  static constexpr size_t kMaxRunImages = 16;
  Handle& handle_;
};

Result<std::unique_ptr<Plugin>> NewImageLocality(const PluginArgs*, Handle& handle) {
  return std::unique_ptr<Plugin>(std::make_unique<ImageLocality>(handle));
}

}  // namespace

PluginRegistration ImageLocalityRegistration() {
  return MakeRegistration(kImageLocalityName, &NewImageLocality);
}

}  // namespace berth
