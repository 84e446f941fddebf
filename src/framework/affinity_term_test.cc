#include <gtest/gtest.h>

#include "berth/framework/node_info.h"

namespace berth {
namespace {

Pod PodLabelled(Labels labels) {
  Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  pod.metadata.labels = std::move(labels);
  return pod;
}

PodAffinityTerm TermFor(LabelSelector selector) {
  PodAffinityTerm term;
  term.label_selector = std::move(selector);
  term.topology_key = "kubernetes.io/hostname";
  term.match_label_keys = {"pod-template-hash"};
  term.mismatch_label_keys = {"tenant"};
  return term;
}

LabelSelector AppWeb() {
  LabelSelector s;
  s.match_labels["app"] = "web";
  return s;
}

// A pod that was never admitted (a manifest given to the simulator) gets what admission would
// have merged: its own hash In, its own tenant NotIn.
TEST(AffinityTermTest, KeysOfAPodNeverAdmittedAreFolded) {
  Pod pod = PodLabelled({{"app", "web"}, {"pod-template-hash", "h1"}, {"tenant", "t1"}});
  AffinityTerm t = MakeAffinityTerm(pod, TermFor(AppWeb()));
  EXPECT_TRUE(t.selector.Matches({{"app", "web"}, {"pod-template-hash", "h1"}, {"tenant", "t2"}}));
  EXPECT_FALSE(t.selector.Matches({{"app", "web"}, {"pod-template-hash", "h2"}}));
  EXPECT_FALSE(t.selector.Matches({{"app", "web"}, {"pod-template-hash", "h1"}, {"tenant", "t1"}}));
}

// An admitted pod keeps the selector the API server merged at creation, as kube-scheduler
// reads it, even after its labels change: the keys are not applied a second time.
TEST(AffinityTermTest, AnAdmittedPodKeepsTheSelectorItWasCreatedWith) {
  LabelSelector merged = AppWeb();
  merged.match_expressions = {{"pod-template-hash", "In", {"h1"}}, {"tenant", "NotIn", {"t1"}}};
  Pod relabelled = PodLabelled({{"app", "web"}, {"pod-template-hash", "h2"}, {"tenant", "t1"}});
  AffinityTerm t = MakeAffinityTerm(relabelled, TermFor(merged));
  EXPECT_TRUE(t.selector.Matches({{"app", "web"}, {"pod-template-hash", "h1"}, {"tenant", "t2"}}));
  EXPECT_FALSE(t.selector.Matches({{"app", "web"}, {"pod-template-hash", "h2"}, {"tenant", "t2"}}));
  EXPECT_FALSE(t.selector.Matches({{"app", "web"}, {"pod-template-hash", "h1"}, {"tenant", "t1"}}));
}

// mismatchLabelKeys may share a key with the user's selector: the pod's own value is still
// excluded when admission has not done it.
TEST(AffinityTermTest, AUsersNotInOnAMismatchKeyDoesNotHideTheFold) {
  LabelSelector s = AppWeb();
  s.match_expressions = {{"tenant", "NotIn", {"t9"}}};
  Pod pod = PodLabelled({{"app", "web"}, {"tenant", "t1"}});
  AffinityTerm t = MakeAffinityTerm(pod, TermFor(s));
  EXPECT_FALSE(t.selector.Matches({{"app", "web"}, {"tenant", "t1"}}));
  EXPECT_FALSE(t.selector.Matches({{"app", "web"}, {"tenant", "t9"}}));
  EXPECT_TRUE(t.selector.Matches({{"app", "web"}, {"tenant", "t2"}}));
}

// No selector: the term selects nothing, keys or not.
TEST(AffinityTermTest, ATermWithoutASelectorSelectsNothing) {
  PodAffinityTerm term = TermFor(AppWeb());
  term.label_selector.reset();
  AffinityTerm t = MakeAffinityTerm(PodLabelled({{"pod-template-hash", "h1"}}), term);
  EXPECT_FALSE(t.selector.Matches({{"pod-template-hash", "h1"}}));
}

}  // namespace
}  // namespace berth
