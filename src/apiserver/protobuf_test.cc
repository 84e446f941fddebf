// Protobuf request bodies: the envelope, scalars and zero values, maps, nested and repeated
// messages, int-or-string, times, and what is refused.
#include "apiserver/protobuf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace berth::apiserver {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// A minimal protobuf writer for building test bodies.
std::string Varint(uint64_t v) {
  std::string out;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<char>(b | (v ? 0x80 : 0)));
  } while (v);
  return out;
}
std::string Tag(int num, int wt) { return Varint((uint64_t(num) << 3) | wt); }
std::string Str(int num, const std::string& s) { return Tag(num, 2) + Varint(s.size()) + s; }
std::string Int(int num, int64_t v) { return Tag(num, 0) + Varint(static_cast<uint64_t>(v)); }
std::string Msg(int num, const std::string& body) { return Str(num, body); }
std::string Entry(int num, const std::string& k, const std::string& v) {
  return Msg(num, Str(1, k) + Str(2, v));
}
std::string Envelope(const std::string& api_version, const std::string& kind,
                     const std::string& raw) {
  return std::string("k8s\0", 4) + Msg(1, Str(1, api_version) + Str(2, kind)) + Str(2, raw);
}

TEST(ProtobufTest, ConfigMapAsKubectlSendsIt) {
  // metadata{name, namespace "", creationTimestamp{}}, data{a: b}, binaryData{bin: "\x01\x02"}
  const std::string meta = Str(1, "cm") + Str(3, "") + Msg(8, "") + Entry(11, "app", "x");
  const std::string raw = Msg(1, meta) + Entry(2, "a", "b") + Entry(3, "bin", "\x01\x02");
  auto obj = DecodeProtobufObject(Envelope("v1", "ConfigMap", raw));
  ASSERT_TRUE(obj.ok()) << obj.error().message;
  EXPECT_EQ(*obj, json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"cm","labels":{"app":"x"}},"data":{"a":"b"},"binaryData":{"bin":"AQI="}})"));
}

TEST(ProtobufTest, ReviewsAsKubectlAuthSendsThem) {
  // `kubectl auth can-i create pods`: spec{resourceAttributes{namespace, verb, resource}}.
  const std::string attrs = Str(1, "default") + Str(2, "create") + Str(5, "pods");
  auto can = DecodeProtobufObject(Envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview",
                                           Msg(1, "") + Msg(2, Msg(1, attrs))));
  ASSERT_TRUE(can.ok()) << can.error().message;
  EXPECT_EQ(*can, json::parse(R"({"apiVersion":"authorization.k8s.io/v1",
      "kind":"SelfSubjectAccessReview","metadata":{},"spec":{"resourceAttributes":
      {"namespace":"default","verb":"create","resource":"pods"}}})"));
  auto who = DecodeProtobufObject(Envelope("authentication.k8s.io/v1", "SelfSubjectReview", ""));
  ASSERT_TRUE(who.ok()) << who.error().message;
  EXPECT_EQ((*who)["kind"], "SelfSubjectReview");
}

TEST(ProtobufTest, ResourceQuotaAsKubectlCreateQuotaSendsIt) {
  // `kubectl create quota q --hard=pods=10,cpu=2 --scopes=BestEffort`: hard{key, Quantity{string}}.
  const std::string hard =
      Msg(1, Str(1, "cpu") + Msg(2, Str(1, "2"))) + Msg(1, Str(1, "pods") + Msg(2, Str(1, "10")));
  auto quota = DecodeProtobufObject(
      Envelope("v1", "ResourceQuota", Msg(1, Str(1, "q")) + Msg(2, hard + Str(2, "BestEffort"))));
  ASSERT_TRUE(quota.ok()) << quota.error().message;
  EXPECT_EQ(*quota, json::parse(R"({"apiVersion":"v1","kind":"ResourceQuota",
      "metadata":{"name":"q"},"spec":{"hard":{"cpu":"2","pods":"10"},"scopes":["BestEffort"]}})"));
}

TEST(ProtobufTest, JobAndCronJobAsKubectlCreateSendsThem) {
  // `kubectl create cronjob c --image=busybox --schedule="*/1 * * * *"`: the job template's pod
  // template under spec.jobTemplate.spec.template.
  const std::string pod_spec = Msg(2, Str(1, "c") + Str(2, "busybox")) + Str(3, "OnFailure");
  const std::string job_spec = Msg(6, Msg(2, pod_spec)) + Int(7, 0);
  auto cron = DecodeProtobufObject(
      Envelope("batch/v1", "CronJob",
               Msg(1, Str(1, "c")) + Msg(2, Str(1, "*/1 * * * *") + Msg(5, Msg(2, job_spec)))));
  ASSERT_TRUE(cron.ok()) << cron.error().message;
  EXPECT_EQ((*cron)["spec"]["schedule"], "*/1 * * * *");
  const json& job = (*cron)["spec"]["jobTemplate"]["spec"];
  EXPECT_EQ(job["backoffLimit"], 0);  // a pointer: zero is data
  EXPECT_EQ(job["template"]["spec"]["containers"][0]["image"], "busybox");
  EXPECT_EQ(job["template"]["spec"]["restartPolicy"], "OnFailure");
  auto plain =
      DecodeProtobufObject(Envelope("batch/v1", "Job", Msg(1, Str(1, "j")) + Msg(2, Int(2, 3))));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ((*plain)["spec"]["completions"], 3);
}

TEST(ProtobufTest, IngressAsKubectlCreateIngressSendsIt) {
  // `kubectl create ingress web --rule="foo.com/=svc:80" --class=nginx`: a rule's http value is
  // a message of its own in protobuf and inline in JSON.
  const std::string backend = Msg(4, Str(1, "svc") + Msg(2, Int(2, 80)));
  const std::string path = Str(1, "/") + Msg(2, backend) + Str(3, "Exact");
  const std::string rule = Str(1, "foo.com") + Msg(2, Msg(1, Msg(1, path)));
  auto ing = DecodeProtobufObject(
      Envelope("networking.k8s.io/v1", "Ingress",
               Msg(1, Str(1, "web")) + Msg(2, Msg(3, rule) + Str(4, "nginx"))));
  ASSERT_TRUE(ing.ok()) << ing.error().message;
  EXPECT_EQ((*ing)["spec"], json::parse(R"({"ingressClassName":"nginx","rules":[{"host":"foo.com",
      "http":{"paths":[{"path":"/","pathType":"Exact","backend":{"service":{"name":"svc",
      "port":{"number":80}}}}]}}]})"));
}

TEST(ProtobufTest, DeploymentWithZerosThatMatter) {
  const std::string container =
      Str(1, "pause") + Str(2, "pause") + Msg(8, Msg(2, Str(1, "cpu") + Msg(2, Str(1, "100m"))));
  const std::string pod_spec = Msg(2, container) + Int(25, 0);
  const std::string tmpl = Msg(1, Entry(11, "app", "d")) + Msg(2, pod_spec);
  const std::string spec =
      Int(1, 0) + Msg(2, Entry(1, "app", "d")) + Msg(3, tmpl) + Int(7, 0) +
      Msg(4, Str(1, "RollingUpdate") +
                 Msg(2, Msg(1, Int(1, 1) + Str(3, "25%")) + Msg(2, Int(1, 0) + Int(2, 2))));
  auto obj =
      DecodeProtobufObject(Envelope("apps/v1", "Deployment", Msg(1, Str(1, "d")) + Msg(2, spec)));
  ASSERT_TRUE(obj.ok()) << obj.error().message;
  const json& s = (*obj)["spec"];
  EXPECT_EQ(s["replicas"], 0);         // a pointer: zero is data
  EXPECT_FALSE(s.contains("paused"));  // omitempty: zero is absent
  EXPECT_EQ(s["selector"]["matchLabels"]["app"], "d");
  EXPECT_EQ(s["strategy"]["rollingUpdate"]["maxUnavailable"], "25%");
  EXPECT_EQ(s["strategy"]["rollingUpdate"]["maxSurge"], 2);
  const json& c = s["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["requests"]["cpu"], "100m");
  EXPECT_EQ(s["template"]["spec"]["priority"], 0);
}

TEST(ProtobufTest, EventTimesAndBinding) {
  const std::string micro = Int(1, 1700000000) + Int(2, 123456000);
  auto ev = DecodeProtobufObject(
      Envelope("events.k8s.io/v1", "Event",
               Msg(1, Str(1, "e1") + Str(3, "default")) + Msg(2, micro) + Str(7, "Scheduled") +
                   Msg(8, Str(1, "Pod") + Str(3, "p")) + Str(10, "Successfully assigned")));
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_EQ((*ev)["eventTime"], "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ((*ev)["regarding"]["name"], "p");
  auto b = DecodeProtobufObject(
      Envelope("v1", "Binding", Msg(1, Str(1, "p")) + Msg(2, Str(1, "Node") + Str(3, "n1"))));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)["target"]["name"], "n1");
}

TEST(ProtobufTest, RefusedBodies) {
  auto unknown = DecodeProtobufObject(Envelope("storage.k8s.io/v1", "StorageClass", ""));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kUnsupportedMediaType);
  EXPECT_THAT(unknown.error().message, HasSubstr("storage.k8s.io/v1 StorageClass"));
  EXPECT_FALSE(DecodeProtobufObject("{\"json\": true}").ok());
  auto truncated =
      DecodeProtobufObject(Envelope("v1", "ConfigMap", Msg(1, Str(1, "cm"))).substr(0, 20));
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().code, ErrorCode::kBadRequest);
}

}  // namespace
}  // namespace berth::apiserver
