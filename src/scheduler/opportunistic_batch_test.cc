// OpportunisticBatch's bookkeeping, after kube-scheduler's batching unit tests: a pod gets the
// next node of the previous alike pod's ranking when that pod's node takes no more such pods;
// a different signature, a cycle in between, a nominated node, age, a missing node and an
// empty ranking give none; a still-fitting node is rescored into the ranking.
#include "scheduler/opportunistic_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace berth {
namespace {

using Flush = OpportunisticBatch::Flush;
using LastNode = OpportunisticBatch::Checks::LastNode;

// Signs pods by their label "sig"; a pod labelled "unsignable" has no signature.
class LabelSigner : public PodSigner {
 public:
  bool Signable(const Pod& pod) const override { return !pod.metadata.labels.count("unsignable"); }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return a.metadata.labels.count("sig") && b.metadata.labels.count("sig") &&
           a.metadata.labels.at("sig") == b.metadata.labels.at("sig");
  }
};

// The cycle's side: the previous pod's node is full, still fits or is gone; rescoring orders
// the candidates by `scores` (missing: 0) or fails with `rescore_error`.
class FakeChecks : public OpportunisticBatch::Checks {
 public:
  LastNode last = LastNode::kFull;
  std::map<std::string, int> scores;
  std::optional<Flush> rescore_error;
  std::vector<std::string> checked, rescored;

  LastNode CheckLastChosen(const std::string& node) override {
    checked.push_back(node);
    return last;
  }
  std::optional<Flush> Rescore(std::vector<std::string>* ranking) override {
    rescored = *ranking;
    if (rescore_error) return rescore_error;
    std::stable_sort(ranking->begin(), ranking->end(),
                     [&](const auto& a, const auto& b) { return scores[a] > scores[b]; });
    return std::nullopt;
  }
};

std::shared_ptr<const Pod> MakePod(const std::string& name, const std::string& sig) {
  auto p = std::make_shared<Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "default";
  if (sig == "-") {
    p->metadata.labels["unsignable"] = "true";
  } else {
    p->metadata.labels["sig"] = sig;
  }
  return p;
}

class OpportunisticBatchTest : public ::testing::Test {
 protected:
  void SetUp() override { batch_.AddProfile(&profile_, {&signer_}); }
  // The first pod's full cycle: no hint (nothing kept yet), then `chosen` and `rest` stored.
  void FirstPod(const std::string& sig, const std::string& chosen, std::vector<std::string> rest,
                uint64_t cycle = 1) {
    auto pod = MakePod("p1", sig);
    EXPECT_EQ(Hint(pod, cycle), "");
    batch_.Store(&profile_, pod, true, "", chosen, std::move(rest), cycle, now_);
  }
  std::string Hint(const std::shared_ptr<const Pod>& pod, uint64_t cycle) {
    return batch_.Hint(&profile_, pod, batch_.Signable(&profile_, *pod), cycle, now_, checks_);
  }

  int profile_ = 0;
  LabelSigner signer_;
  OpportunisticBatch batch_;
  FakeChecks checks_;
  TimePoint now_{std::chrono::seconds(1000)};
};

TEST_F(OpportunisticBatchTest, SameSignatureGetsTheNextNodeOfTheRanking) {
  FirstPod("sig", "n3", {"n1"});
  auto pod2 = MakePod("p2", "sig");
  EXPECT_EQ(Hint(pod2, 2), "n1");
  EXPECT_EQ(checks_.checked, std::vector<std::string>{"n3"});  // Filter on the last node only
  batch_.Store(&profile_, pod2, true, "n1", "n1", {}, 2, now_);
  EXPECT_EQ(batch_.counts().no_hint, 1u);
  EXPECT_EQ(batch_.counts().hint_used, 1u);
  EXPECT_TRUE(batch_.Ranking(&profile_).empty());
}

TEST_F(OpportunisticBatchTest, RemainingRankingServesTheNextPod) {
  FirstPod("sig", "n3", {"n1", "n2"});
  auto pod2 = MakePod("p2", "sig");
  EXPECT_EQ(Hint(pod2, 2), "n1");
  batch_.Store(&profile_, pod2, true, "n1", "n1", {}, 2, now_);
  EXPECT_EQ(batch_.Ranking(&profile_), std::vector<std::string>{"n2"});
  // The third pod: n1 (the second pod's node) is full now, n2 is next.
  EXPECT_EQ(Hint(MakePod("p3", "sig"), 3), "n2");
  EXPECT_EQ(checks_.checked.back(), "n1");
}

TEST_F(OpportunisticBatchTest, DifferentSignatureGetsNoHint) {
  FirstPod("sig", "n3", {"n1"});
  EXPECT_EQ(Hint(MakePod("p2", "sig2"), 2), "");
  EXPECT_EQ(batch_.flushed(Flush::kPodIncompatible), 1u);
  EXPECT_EQ(batch_.counts().no_hint, 2u);
  EXPECT_TRUE(batch_.Ranking(&profile_).empty());
}

TEST_F(OpportunisticBatchTest, UnsignablePodGetsNoHintAndStoresNothing) {
  FirstPod("sig", "n3", {"n1"});
  auto pod2 = MakePod("p2", "-");
  EXPECT_FALSE(batch_.Signable(&profile_, *pod2));
  EXPECT_EQ(Hint(pod2, 2), "");
  EXPECT_EQ(batch_.flushed(Flush::kPodIncompatible), 1u);
  batch_.Store(&profile_, pod2, false, "", "n1", {"n2"}, 2, now_);
  EXPECT_EQ(batch_.flushed(Flush::kPodNotBatchable), 1u);
  EXPECT_EQ(Hint(MakePod("p3", "-"), 3), "");
}

TEST_F(OpportunisticBatchTest, NoHintWhenThePreviousPodWasNotPlaced) {
  // The first pod's cycle placed nothing (no Store): what it left is unknown.
  EXPECT_EQ(Hint(MakePod("p1", "sig"), 1), "");
  EXPECT_EQ(Hint(MakePod("p2", "sig"), 2), "");
  EXPECT_EQ(batch_.counts().no_hint, 2u);
  EXPECT_EQ(batch_.flushed(Flush::kPodSkipped), 0u);  // nothing was kept to drop
}

TEST_F(OpportunisticBatchTest, EmptyRankingGivesNoHint) {
  FirstPod("sig", "n3", {});
  EXPECT_EQ(batch_.flushed(Flush::kEmptyList), 1u);
  EXPECT_EQ(Hint(MakePod("p2", "sig"), 2), "");
}

TEST_F(OpportunisticBatchTest, CycleOfAnotherProfileInBetweenDropsTheRanking) {
  FirstPod("sig", "n3", {"n1"});
  EXPECT_EQ(Hint(MakePod("p2", "sig"), 3), "");  // cycle 2 was another profile's
  EXPECT_EQ(batch_.flushed(Flush::kPodSkipped), 1u);
}

TEST_F(OpportunisticBatchTest, NominatedPodGetsNoHint) {
  FirstPod("sig", "n3", {"n1"});
  auto pod2 = std::make_shared<Pod>(*MakePod("p2", "sig"));
  pod2->status.nominated_node_name = "n1";
  EXPECT_EQ(Hint(pod2, 2), "");
  EXPECT_EQ(batch_.flushed(Flush::kPodNominated), 1u);
}

TEST_F(OpportunisticBatchTest, RankingExpiresAfterHalfASecond) {
  FirstPod("sig", "n3", {"n1", "n2"});
  now_ += std::chrono::milliseconds(500);
  EXPECT_EQ(Hint(MakePod("p2", "sig"), 2), "n1");  // 500 ms: still served
  batch_.Store(&profile_, MakePod("p2", "sig"), true, "n1", "n1", {}, 2, now_);
  now_ += std::chrono::milliseconds(1);  // the age counts from the full cycle, not the hints
  EXPECT_EQ(Hint(MakePod("p3", "sig"), 3), "");
  EXPECT_EQ(batch_.flushed(Flush::kExpired), 1u);
}

TEST_F(OpportunisticBatchTest, MissingLastNodeDropsTheRanking) {
  FirstPod("sig", "n3", {"n1"});
  checks_.last = LastNode::kMissing;
  EXPECT_EQ(Hint(MakePod("p2", "sig"), 2), "");
  EXPECT_EQ(batch_.flushed(Flush::kNodeMissing), 1u);
  EXPECT_TRUE(batch_.Ranking(&profile_).empty());
}

TEST_F(OpportunisticBatchTest, StillFittingLastNodeIsRescoredAndWins) {
  FirstPod("sig", "n2", {"n1"});
  checks_.last = LastNode::kStillFits;
  checks_.scores = {{"n1", 50}, {"n2", 100}};
  EXPECT_EQ(Hint(MakePod("p2", "sig"), 2), "n2");
  EXPECT_EQ(checks_.rescored, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(batch_.Ranking(&profile_), std::vector<std::string>{"n1"});
}

TEST_F(OpportunisticBatchTest, StillFittingLastNodeIsRescoredAndLoses) {
  FirstPod("sig", "n2", {"n1"});
  checks_.last = LastNode::kStillFits;
  checks_.scores = {{"n1", 50}, {"n2", 10}};
  EXPECT_EQ(Hint(MakePod("p2", "sig"), 2), "n1");
  EXPECT_EQ(batch_.Ranking(&profile_), std::vector<std::string>{"n2"});
}

TEST_F(OpportunisticBatchTest, RescoreFailureGivesNoHint) {
  for (Flush why : {Flush::kPreScoreError, Flush::kRescoreError, Flush::kNodeMissing}) {
    OpportunisticBatch batch;
    batch.AddProfile(&profile_, {&signer_});
    batch.Store(&profile_, MakePod("p1", "sig"), true, "", "n2", {"n1"}, 1, now_);
    checks_.last = LastNode::kStillFits;
    checks_.rescore_error = why;
    EXPECT_EQ(batch.Hint(&profile_, MakePod("p2", "sig"), true, 2, now_, checks_), "");
    EXPECT_EQ(batch.flushed(why), 1u);
    EXPECT_TRUE(batch.Ranking(&profile_).empty());
  }
}

TEST_F(OpportunisticBatchTest, HintNotTakenReplacesTheRanking) {
  FirstPod("sig", "n3", {"n1", "n2"});
  auto pod2 = MakePod("p2", "sig");
  EXPECT_EQ(Hint(pod2, 2), "n1");
  // Filter rejected n1 for this pod: its full cycle chose n5 and ranked n6, n7.
  batch_.Store(&profile_, pod2, true, "n1", "n5", {"n6", "n7"}, 2, now_);
  EXPECT_EQ(batch_.counts().hint_not_used, 1u);
  EXPECT_EQ(batch_.Ranking(&profile_), (std::vector<std::string>{"n6", "n7"}));
  EXPECT_EQ(Hint(MakePod("p3", "sig"), 3), "n6");
  EXPECT_EQ(checks_.checked.back(), "n5");
}

TEST_F(OpportunisticBatchTest, ProfileWithoutSignersNeverBatches) {
  int other = 0;
  EXPECT_FALSE(batch_.Batches(&other));
  EXPECT_FALSE(batch_.Signable(&other, *MakePod("p", "sig")));
  batch_.Store(&other, MakePod("p1", "sig"), true, "", "n1", {"n2"}, 1, now_);
  EXPECT_EQ(batch_.Hint(&other, MakePod("p2", "sig"), true, 2, now_, checks_), "");
  EXPECT_TRUE(checks_.checked.empty());
}

}  // namespace
}  // namespace berth
