#include "daemon/scheduler_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

namespace berth::daemon {
namespace {

// Parses `args` (after the program name) as `berth scheduler` would.
SchedulerFlags Parse(std::vector<std::string> args) {
  NormalizeKubeFlags(args);
  CLI::App app;
  SchedulerFlags flags;
  AddSchedulerFlags(&app, &flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  CollectIgnoredFlags(app, &flags);
  return flags;
}

TEST(SchedulerFlagsTest, KubeSchedulerSpellingsParse) {
  auto f = Parse({"-v=10", "--leader-elect=false", "--secure-port=0", "--master",
                  "http://127.0.0.1:8001", "--kube-api-qps=20"});
  EXPECT_EQ(f.verbosity, 10);
  ASSERT_TRUE(f.leader_elect.has_value());
  EXPECT_FALSE(*f.leader_elect);
  EXPECT_EQ(f.secure_port, 0);
  EXPECT_EQ(f.master, "http://127.0.0.1:8001");
  ASSERT_TRUE(f.kube_api_qps.has_value());
  EXPECT_DOUBLE_EQ(*f.kube_api_qps, 20);
  EXPECT_TRUE(f.ignored.empty());
}

TEST(SchedulerFlagsTest, BareBoolFlagMeansTrue) {
  auto f = Parse({"--leader-elect", "--authentication-skip-lookup"});
  ASSERT_TRUE(f.leader_elect.has_value());
  EXPECT_TRUE(*f.leader_elect);
  EXPECT_EQ(f.ignored, std::vector<std::string>{"--authentication-skip-lookup"});
}

TEST(SchedulerFlagsTest, UnknownAndCompatibilityFlagsAreRecorded) {
  auto f = Parse({"--authorization-kubeconfig=/etc/k.conf", "--some-future-flag=3"});
  EXPECT_EQ(f.ignored,
            (std::vector<std::string>{"--authorization-kubeconfig", "--some-future-flag"}));
}

TEST(SchedulerFlagsTest, FeatureGatesAreCollectedPerOccurrenceNotIgnored) {
  auto f = Parse({"--feature-gates=PodLevelResources=false,OpportunisticBatching=false",
                  "--feature-gates", "AllBeta=true", "--v=2"});
  EXPECT_EQ(f.feature_gates,
            (std::vector<std::string>{"PodLevelResources=false,OpportunisticBatching=false",
                                      "AllBeta=true"}));
  EXPECT_EQ(f.verbosity, 2);
  EXPECT_TRUE(f.ignored.empty());
}

TEST(SchedulerFlagsTest, DeprecatedFlagsApplyWithoutConfigFile) {
  auto f =
      Parse({"--kube-api-qps=7", "--kube-api-burst=9", "--kubeconfig=/k", "--lock-object-name=x"});
  config::SchedulerConfiguration c;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ApplyFlags(f, &c, &warnings).ok());
  EXPECT_FLOAT_EQ(c.client_connection.qps, 7);
  EXPECT_EQ(c.client_connection.burst, 9);
  EXPECT_EQ(c.client_connection.kubeconfig, "/k");
  EXPECT_EQ(c.leader_election.resource_name, "x");
  EXPECT_TRUE(warnings.empty());
}

TEST(SchedulerFlagsTest, ConfigFileWinsOverDeprecatedFlagsAndSaysSo) {
  auto f = Parse({"--config=/etc/s.yaml", "--kube-api-qps=7", "--leader-elect=false",
                  "--leader-elect-lease-duration=30s"});
  config::SchedulerConfiguration c;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ApplyFlags(f, &c, &warnings).ok());
  EXPECT_FLOAT_EQ(c.client_connection.qps, 50);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--kube-api-qps"), std::string::npos);
  // Leader election flags still override the file.
  EXPECT_FALSE(c.leader_election.leader_elect);
  EXPECT_EQ(c.leader_election.lease_duration_ms, 30000);
}

// kube-scheduler ignores --kubeconfig with --config; Berth uses it when the file names none,
// and says which it did.
TEST(SchedulerFlagsTest, KubeconfigFlagFillsWhatTheConfigFileLeavesEmpty) {
  auto f = Parse({"--config=/etc/s.yaml", "--kubeconfig=/k"});
  config::SchedulerConfiguration c;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ApplyFlags(f, &c, &warnings).ok());
  EXPECT_EQ(c.client_connection.kubeconfig, "/k");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--kubeconfig is used"), std::string::npos);

  config::SchedulerConfiguration from_file;
  from_file.client_connection.kubeconfig = "/etc/kubernetes/scheduler.conf";
  warnings.clear();
  ASSERT_TRUE(ApplyFlags(f, &from_file, &warnings).ok());
  EXPECT_EQ(from_file.client_connection.kubeconfig, "/etc/kubernetes/scheduler.conf");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--kubeconfig is ignored"), std::string::npos);
}

TEST(SchedulerFlagsTest, LeaseMustOutlastRenewDeadline) {
  auto f = Parse({"--leader-elect-lease-duration=5s"});
  config::SchedulerConfiguration c;
  std::vector<std::string> warnings;
  auto r = ApplyFlags(f, &c, &warnings);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("renewDeadline"), std::string::npos);
}

TEST(SchedulerFlagsTest, GoDurations) {
  EXPECT_EQ(*ParseGoDurationMs("1m30s", "x"), 90000);
  EXPECT_EQ(*ParseGoDurationMs("500ms", "x"), 500);
  EXPECT_EQ(*ParseGoDurationMs("2h", "x"), 7200000);
  EXPECT_EQ(*ParseGoDurationMs("1.5s", "x"), 1500);
  auto bad = ParseGoDurationMs("15", "--leader-elect-retry-period");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "--leader-elect-retry-period: invalid duration \"15\" (want e.g. 15s, 1m30s, 500ms)");
  EXPECT_FALSE(ParseGoDurationMs("99999999999h", "x").ok());
}

TEST(SchedulerFlagsTest, PodMaxInUnschedulableDefaultsToFiveMinutes) {
  EXPECT_EQ(*PodMaxInUnschedulablePodsDurationMs(Parse({})), 300000);
  EXPECT_EQ(
      *PodMaxInUnschedulablePodsDurationMs(Parse({"--pod-max-in-unschedulable-pods-duration=60s"})),
      60000);
}

}  // namespace
}  // namespace berth::daemon
