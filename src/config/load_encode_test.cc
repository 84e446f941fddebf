#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "api/codec.h"
#include "config/load.h"
#include "config/load_test_util.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace {

using load_test::ExpectUpstreamDefaults;
using load_test::MustLoad;
using load_test::Reg;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ------------------------------------------------------------------ extenders

TEST(ExtendersTest, AllFieldsDecoded) {
  auto c = MustLoad(R"(
extenders:
- urlPrefix: https://extender.example.com/scheduler
  filterVerb: filter
  preemptVerb: preempt
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 3
  enableHTTPS: true
  tlsConfig:
    insecure: true
    serverName: extender.example.com
    certFile: /etc/cert
    keyFile: /etc/key
    caFile: /etc/ca
    certData: Y2VydA==
    keyData: a2V5
    caData: Y2E=
  httpTimeout: 30s
  nodeCacheCapable: true
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: true
  - name: example.com/fpga
  ignorable: true
- urlPrefix: http://second
)");
  ASSERT_EQ(c.extenders.size(), 2u);
  const Extender& e = c.extenders[0];
  EXPECT_EQ(e.url_prefix, "https://extender.example.com/scheduler");
  EXPECT_EQ(e.filter_verb, "filter");
  EXPECT_EQ(e.preempt_verb, "preempt");
  EXPECT_EQ(e.prioritize_verb, "prioritize");
  EXPECT_EQ(e.bind_verb, "bind");
  EXPECT_EQ(e.weight, 3);
  EXPECT_TRUE(e.enable_https);
  ASSERT_TRUE(e.tls_config.has_value());
  EXPECT_TRUE(e.tls_config->insecure);
  EXPECT_EQ(e.tls_config->server_name, "extender.example.com");
  EXPECT_EQ(e.tls_config->cert_file, "/etc/cert");
  EXPECT_EQ(e.tls_config->key_file, "/etc/key");
  EXPECT_EQ(e.tls_config->ca_file, "/etc/ca");
  EXPECT_EQ(e.tls_config->cert_data, "Y2VydA==");
  EXPECT_EQ(e.tls_config->key_data, "a2V5");
  EXPECT_EQ(e.tls_config->ca_data, "Y2E=");
  EXPECT_EQ(e.http_timeout_ms, 30000);
  EXPECT_TRUE(e.node_cache_capable);
  ASSERT_EQ(e.managed_resources.size(), 2u);
  EXPECT_EQ(e.managed_resources[0].name, "example.com/gpu");
  EXPECT_TRUE(e.managed_resources[0].ignored_by_scheduler);
  EXPECT_FALSE(e.managed_resources[1].ignored_by_scheduler);
  EXPECT_TRUE(e.ignorable);
  const Extender& second = c.extenders[1];
  EXPECT_EQ(second.http_timeout_ms, 5000);
  EXPECT_FALSE(second.tls_config.has_value());
  EXPECT_EQ(second.weight, 0);  // no prioritizeVerb, so no weight needed
}

TEST(ExtendersTest, ZeroTimeoutMeansDefault) {
  auto c = MustLoad("extenders:\n- urlPrefix: http://a\n  httpTimeout: 0s\n");
  EXPECT_EQ(c.extenders[0].http_timeout_ms, 5000);
}

// ------------------------------------------------------------------ encoding

TEST(EncodeTest, DefaultsDocument) {
  json doc = EncodeConfiguration(DefaultConfiguration(Reg()));
  EXPECT_EQ(doc["apiVersion"], "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(doc["kind"], "KubeSchedulerConfiguration");
  EXPECT_EQ(doc["parallelism"], 16);
  EXPECT_EQ(doc["leaderElection"], json::parse(R"({"leaderElect": true, "leaseDuration": "15s",
      "renewDeadline": "10s", "retryPeriod": "2s", "resourceLock": "leases",
      "resourceName": "kube-scheduler", "resourceNamespace": "kube-system"})"));
  EXPECT_EQ(doc["clientConnection"], json::parse(R"({"kubeconfig": "", "acceptContentTypes": "",
      "contentType": "application/vnd.kubernetes.protobuf", "qps": 50, "burst": 100})"));
  EXPECT_FALSE(doc.contains("extenders"));
  const json& profile = doc["profiles"][0];
  EXPECT_EQ(profile["schedulerName"], "default-scheduler");
  EXPECT_EQ(profile["plugins"].size(), 1u);  // only multiPoint is non-empty
  EXPECT_EQ(profile["plugins"]["multiPoint"]["enabled"][4],
            json::parse(R"({"name": "TaintToleration", "weight": 3})"));
  EXPECT_EQ(profile["plugins"]["multiPoint"]["enabled"][0], json::parse(R"({"name":
      "SchedulingGates"})"));
  ASSERT_EQ(profile["pluginConfig"].size(), 8u);
  EXPECT_EQ(profile["pluginConfig"][0], json::parse(R"({"name": "DefaultPreemption", "args": {
      "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs",
      "minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}})"));
}

void ExpectRoundTrip(const SchedulerConfiguration& config) {
  json first = EncodeConfiguration(config);
  std::string yaml = JsonToYaml(first);
  auto again = LoadConfig(yaml, "printed.yaml", Reg());
  ASSERT_TRUE(again.ok()) << again.error().message << "\n" << yaml;
  EXPECT_EQ(EncodeConfiguration(again.value()), first) << yaml;
}

TEST(EncodeTest, PrintDefaultsRoundTrips) { ExpectRoundTrip(DefaultConfiguration(Reg())); }

TEST(EncodeTest, CustomConfigurationRoundTrips) {
  ExpectRoundTrip(MustLoad(R"(
parallelism: 4
percentageOfNodesToScore: 30
leaderElection:
  leaderElect: false
  leaseDuration: 1m30s
  renewDeadline: 1500ms
clientConnection:
  qps: 0.1
profiles:
- schedulerName: default-scheduler
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      enabled:
      - name: CustomArgsPlugin
      - name: TaintToleration
        weight: 5
      disabled:
      - name: ImageLocality
    score:
      disabled:
      - name: '*'
  pluginConfig:
  - name: NotRegistered
    args:
      flag: "true"
      count: "10"
      empty: ""
      list: []
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - name: cpu
          weight: 2
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 10
          - utilization: 100
            score: 0
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: pool
              operator: In
              values: ["1", "true"]
- schedulerName: second
  plugins:
    multiPoint:
      disabled:
      - name: '*'
extenders:
- urlPrefix: http://a
  prioritizeVerb: prioritize
  weight: 2
  httpTimeout: 2m
  tlsConfig:
    caData: Y2E=
  managedResources:
  - name: example.com/gpu
)"));
}

TEST(EncodeTest, YamlQuotesAmbiguousStrings) {
  json doc = json::parse(
      R"({"star": "*", "t": "true", "n": "10", "e": "", "plain": "abc", "num": 10, "f": 0.5,
          "b": false, "list": [], "obj": {}, "nul": null, "no": "no", "dur": "15s"})");
  std::string yaml = JsonToYaml(doc);
  EXPECT_THAT(yaml, HasSubstr("t: \"true\""));
  EXPECT_THAT(yaml, HasSubstr("\"n\": \"10\""));
  EXPECT_THAT(yaml, HasSubstr("e: \"\""));
  EXPECT_THAT(yaml, HasSubstr("\"no\": \"no\""));
  EXPECT_THAT(yaml, HasSubstr("plain: abc"));
  EXPECT_THAT(yaml, HasSubstr("num: 10"));
  EXPECT_THAT(yaml, HasSubstr("dur: 15s"));
  auto parsed = ParseDocuments(yaml, "x");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0], doc) << yaml;
}

TEST(EncodeTest, ConfigFileRoundTripThroughDisk) {
  std::string path = ::testing::TempDir() + "/berth_config_load_test.yaml";
  {
    std::ofstream out(path);
    out << EncodeConfigurationYaml(DefaultConfiguration(Reg()));
  }
  auto c = LoadConfigFile(path, Reg());
  ASSERT_TRUE(c.ok()) << c.error().message;
  ExpectUpstreamDefaults(c.value());
  std::remove(path.c_str());
}

// ------------------------------------------------------------------ dispatch by kind/apiVersion

TEST(DispatchTest, PolicyIsTranslated) {
  json policy = json::parse(R"({"kind": "Policy", "apiVersion": "v1", "priorities": []})");
  auto v1 = ToV1Document(policy, "policy.json", "", Reg());
  ASSERT_TRUE(v1.ok()) << v1.error().message;
  EXPECT_EQ(v1->translated_from, "Policy");
  EXPECT_EQ(v1->doc["apiVersion"], kConfigApiVersion);
  EXPECT_FALSE(v1->notes.empty());
}

TEST(DispatchTest, OlderVersionsAreTranslated) {
  for (const char* version : {"v1alpha2", "v1beta1", "v1beta2", "v1beta3"}) {
    const std::string api = std::string("kubescheduler.config.k8s.io/") + version;
    json doc = {{"apiVersion", api}, {"kind", "KubeSchedulerConfiguration"}};
    auto v1 = ToV1Document(doc, "old.yaml", "", Reg());
    ASSERT_TRUE(v1.ok()) << version << ": " << v1.error().message;
    EXPECT_EQ(v1->translated_from, api);
    EXPECT_EQ(v1->doc["apiVersion"], kConfigApiVersion) << version;
    EXPECT_TRUE(DecodeConfiguration(v1->doc, Reg()).ok()) << version;
  }
}

TEST(DispatchTest, V1AndUnknownDocumentsGoToTheV1Decoder) {
  json v1_doc = {{"apiVersion", kConfigApiVersion}, {"kind", "KubeSchedulerConfiguration"}};
  auto v1 = ToV1Document(v1_doc, "sched.yaml", "", Reg());
  ASSERT_TRUE(v1.ok());
  EXPECT_TRUE(v1->translated_from.empty());
  EXPECT_EQ(v1->doc, v1_doc);
  json other = {{"apiVersion", "kubescheduler.config.k8s.io/v2"},
                {"kind", "KubeSchedulerConfiguration"}};
  auto passed = ToV1Document(other, "sched.yaml", "", Reg());
  ASSERT_TRUE(passed.ok());
  EXPECT_TRUE(passed->translated_from.empty());
  auto loaded = LoadConfig(passed->doc.dump(), "sched.yaml", Reg());
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().message, HasSubstr("sched.yaml: apiVersion: unsupported value"));
}

TEST(DispatchTest, TranslatedDocumentErrorsNameTheirOrigin) {
  auto loaded = LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n"
      "parallelism: 0\n",
      "old.yaml", Reg());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message,
            "old.yaml: translated kubescheduler.config.k8s.io/v1beta2: parallelism: invalid value "
            "0: should be an integer value greater than zero");
}

}  // namespace
}  // namespace berth::config
