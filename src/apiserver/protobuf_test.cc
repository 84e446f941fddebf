// Protobuf request bodies: the envelope, scalars and zero values, maps, nested and repeated
// messages, int-or-string, times, and what is refused.
#include "apiserver/protobuf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "apiserver/protobuf_writer.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using namespace protobuf_writer;  // NOLINT(build/namespaces): the bodies read as their fields

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

// meta/v1 Time / MicroTime: seconds = 1 (and nanos = 2).
std::string Time(int num, int64_t seconds) { return Msg(num, Int(1, seconds)); }
std::string Quantity(int num, const std::string& key, const std::string& q) {
  return Msg(num, Str(1, key) + Msg(2, Str(1, q)));
}
// intstr.IntOrString: type = 1 (0 int, 1 string), intVal = 2, strVal = 3.
std::string IntOrStr(int num, int v) { return Msg(num, Int(1, 0) + Int(2, v) + Str(3, "")); }
std::string IntOrStr(int num, const std::string& v) {
  return Msg(num, Int(1, 1) + Int(2, 0) + Str(3, v));
}

// A pod as client-go's protobuf encoder writes it: every non-pointer scalar on the wire, zero
// or not (hostPort, timeoutSeconds, readOnly, ... below), pointers only when set.
std::string WebPodBody() {
  const std::string meta =
      Str(1, "web") + Str(3, "default") + Time(8, 1700000000) + Entry(11, "app", "web");
  const std::string volumes =
      Msg(1, Str(1, "cache") + Msg(2, Msg(2, Str(1, "") + Msg(2, Str(1, "1Gi"))))) +
      Msg(1, Str(1, "cfg") +
                 Msg(2, Msg(19, Msg(1, Str(1, "web-config")) +
                                    Msg(2, Str(1, "a") + Str(2, "a.conf")) + Int(3, 420))));
  const std::string liveness =
      Msg(1, Msg(2, Str(1, "/healthz") + IntOrStr(2, "http") + Str(3, "") + Str(4, "HTTP"))) +
      Int(2, 5) + Int(3, 0) + Int(4, 10) + Int(5, 0) + Int(6, 0);
  const std::string readiness = Msg(1, Msg(3, IntOrStr(1, 80) + Str(2, "")));
  const std::string container =
      Str(1, "web") + Str(2, "nginx") +
      Msg(6, Str(1, "") + Int(2, 0) + Int(3, 80) + Str(4, "TCP") + Str(5, "")) +
      Msg(8, Quantity(2, "cpu", "100m") + Quantity(2, "memory", "64Mi")) +
      Msg(9, Str(1, "cache") + Int(2, 0) + Str(3, "/cache") + Str(4, "")) + Msg(10, liveness) +
      Msg(11, readiness);
  // nodeAffinity{required{nodeSelectorTerms[{matchExpressions[{key, operator, values}]}]}}
  const std::string node_affinity =
      Msg(1, Msg(1, Msg(1, Str(1, "zone") + Str(2, "In") + Str(3, "a") + Str(3, "b"))));
  const std::string anti_affinity = Msg(
      2, Int(1, 100) + Msg(2, Msg(1, Entry(1, "app", "web")) + Str(3, "kubernetes.io/hostname")));
  const std::string tolerations =
      Msg(22, Str(1, "dedicated") + Str(2, "Equal") + Str(3, "web") + Str(4, "NoSchedule")) +
      Msg(22, Str(1, "") + Str(2, "Exists") + Str(3, "") + Str(4, "NoExecute") + Int(5, 0));
  const std::string spread = Msg(
      33, Int(1, 1) + Str(2, "zone") + Str(3, "DoNotSchedule") + Msg(4, Entry(1, "app", "web")));
  const std::string spec = volumes + Msg(2, container) + Str(3, "Always") + Int(4, 0) + Int(11, 0) +
                           Msg(18, Msg(1, node_affinity) + Msg(3, anti_affinity)) + tolerations +
                           Int(30, 0) + spread;
  const std::string status = Str(1, "Pending") + Time(7, 1700000000);
  return Envelope("v1", "Pod", Msg(1, meta) + Msg(2, spec) + Msg(3, status));
}

TEST(ProtobufTest, PodWithVolumesAffinityProbesAndTolerations) {
  auto pod = DecodeProtobufObject(WebPodBody());
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  // The pod's JSON as the Pod reference documents each field (pointers kept at zero:
  // terminationGracePeriodSeconds, enableServiceLinks, tolerationSeconds).
  EXPECT_EQ(*pod, json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"web","namespace":"default","creationTimestamp":"2023-11-14T22:13:20Z",
                "labels":{"app":"web"}},
    "spec":{
      "volumes":[{"name":"cache","emptyDir":{"sizeLimit":"1Gi"}},
                 {"name":"cfg","configMap":{"name":"web-config",
                  "items":[{"key":"a","path":"a.conf"}],"defaultMode":420}}],
      "containers":[{"name":"web","image":"nginx",
        "ports":[{"containerPort":80,"protocol":"TCP"}],
        "resources":{"requests":{"cpu":"100m","memory":"64Mi"}},
        "volumeMounts":[{"name":"cache","mountPath":"/cache"}],
        "livenessProbe":{"httpGet":{"path":"/healthz","port":"http","scheme":"HTTP"},
                         "initialDelaySeconds":5,"periodSeconds":10},
        "readinessProbe":{"tcpSocket":{"port":80}}}],
      "restartPolicy":"Always","terminationGracePeriodSeconds":0,"enableServiceLinks":false,
      "affinity":{
        "nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":
          [{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}},
        "podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,
          "podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"web"}},
                             "topologyKey":"kubernetes.io/hostname"}}]}},
      "tolerations":[{"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"},
                     {"operator":"Exists","effect":"NoExecute","tolerationSeconds":0}],
      "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",
        "whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"web"}}}]},
    "status":{"phase":"Pending","startTime":"2023-11-14T22:13:20Z"}})"));
}

TEST(ProtobufTest, SecretBytesAreBase64) {
  // `kubectl create secret generic s --from-literal=password=s3cr3t`, plus a binary value.
  auto secret = DecodeProtobufObject(Envelope(
      "v1", "Secret",
      Msg(1, Str(1, "s")) + Msg(2, Str(1, "password") + Str(2, "s3cr3t")) +
          Msg(2, Str(1, "bin") + Str(2, std::string("\0\xff", 2))) + Str(3, "Opaque") + Int(5, 0)));
  ASSERT_TRUE(secret.ok()) << secret.error().message;
  EXPECT_EQ(*secret, json::parse(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},
      "data":{"password":"czNjcjN0","bin":"AP8="},"type":"Opaque","immutable":false})"));
}

TEST(ProtobufTest, NodeQuantitiesConditionsAndTaints) {
  const std::string spec =
      Str(1, "10.0.0.0/24") + Int(4, 0) + Msg(5, Str(1, "gpu") + Str(2, "") + Str(3, "NoSchedule"));
  const std::string status = Quantity(1, "cpu", "4") + Quantity(1, "memory", "16Gi") +
                             Quantity(1, "pods", "110") + Quantity(2, "cpu", "3900m") +
                             Quantity(2, "ephemeral-storage", "") +
                             Msg(4, Str(1, "Ready") + Str(2, "True") + Time(3, 1700000000) +
                                        Msg(4, "") + Str(5, "KubeletReady")) +
                             Msg(5, Str(1, "InternalIP") + Str(2, "10.0.0.5"));
  auto node = DecodeProtobufObject(
      Envelope("v1", "Node", Msg(1, Str(1, "n1")) + Msg(2, spec) + Msg(3, status)));
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_EQ(*node, json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},
      "spec":{"podCIDR":"10.0.0.0/24","taints":[{"key":"gpu","effect":"NoSchedule"}]},
      "status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},
        "allocatable":{"cpu":"3900m","ephemeral-storage":"0"},
        "conditions":[{"type":"Ready","status":"True",
          "lastHeartbeatTime":"2023-11-14T22:13:20Z","reason":"KubeletReady"}],
        "addresses":[{"type":"InternalIP","address":"10.0.0.5"}]}})"));
}

TEST(ProtobufTest, ServiceTargetPortsIntOrString) {
  const std::string ports =
      Msg(1, Str(1, "http") + Str(2, "TCP") + Int(3, 80) + IntOrStr(4, "web") + Int(5, 0)) +
      Msg(1, Str(1, "https") + Str(2, "TCP") + Int(3, 443) + IntOrStr(4, 8443) + Int(5, 30443));
  auto svc = DecodeProtobufObject(Envelope(
      "v1", "Service",
      Msg(1, Str(1, "web")) + Msg(2, ports + Entry(2, "app", "web") + Str(4, "NodePort"))));
  ASSERT_TRUE(svc.ok()) << svc.error().message;
  EXPECT_EQ((*svc)["spec"], json::parse(R"({"type":"NodePort","selector":{"app":"web"},
      "ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":"web"},
               {"name":"https","protocol":"TCP","port":443,"targetPort":8443,
                "nodePort":30443}]})"));
}

TEST(ProtobufTest, RawJsonManagedFieldsAndListValues) {
  // ControllerRevision.data is a RawExtension; managedFields' fieldsV1 is JSON too.
  const std::string managed =
      Msg(17, Str(1, "kubectl") + Str(2, "Update") + Str(3, "apps/v1") + Time(4, 1700000000) +
                  Str(6, "FieldsV1") + Msg(7, Str(1, R"({"f:data":{}})")));
  auto rev = DecodeProtobufObject(
      Envelope("apps/v1", "ControllerRevision",
               Msg(1, Str(1, "r") + managed) + Msg(2, Str(1, R"({"spec":{"x":1}})")) + Int(3, 0)));
  ASSERT_TRUE(rev.ok()) << rev.error().message;
  EXPECT_EQ(*rev, json::parse(R"({"apiVersion":"apps/v1","kind":"ControllerRevision",
      "metadata":{"name":"r","managedFields":[{"manager":"kubectl","operation":"Update",
        "apiVersion":"apps/v1","time":"2023-11-14T22:13:20Z","fieldsType":"FieldsV1",
        "fieldsV1":{"f:data":{}}}]},
      "data":{"spec":{"x":1}},"revision":0})"));
  auto bad =
      DecodeProtobufObject(Envelope("apps/v1", "ControllerRevision", Msg(2, Str(1, "{not json"))));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kBadRequest);
  EXPECT_THAT(bad.error().message, HasSubstr("ControllerRevision.data"));
  // SubjectAccessReview.spec.extra: map<string, ExtraValue>, each value a JSON list.
  auto sar = DecodeProtobufObject(Envelope(
      "authorization.k8s.io/v1", "SubjectAccessReview",
      Msg(2, Str(3, "alice") + Msg(5, Str(1, "scopes") + Msg(2, Str(1, "a") + Str(1, "b"))))));
  ASSERT_TRUE(sar.ok()) << sar.error().message;
  EXPECT_EQ((*sar)["spec"], json::parse(R"({"user":"alice","extra":{"scopes":["a","b"]}})"));
}

TEST(ProtobufTest, TimesOutsideJsonRangeAreRefused) {
  auto far = DecodeProtobufObject(
      Envelope("v1", "ConfigMap", Msg(1, Str(1, "cm") + Time(8, 253402300800))));
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().code, ErrorCode::kBadRequest);
  auto last = DecodeProtobufObject(
      Envelope("v1", "ConfigMap", Msg(1, Str(1, "cm") + Time(8, 253402300799))));
  ASSERT_TRUE(last.ok()) << last.error().message;
  EXPECT_EQ((*last)["metadata"]["creationTimestamp"], "9999-12-31T23:59:59Z");
}

TEST(ProtobufTest, InvalidUtf8BecomesReplacementCharacters) {
  // Go's JSON encoder writes each byte of an invalid sequence as U+FFFD.
  auto cm = DecodeProtobufObject(
      Envelope("v1", "ConfigMap", Msg(1, Str(1, "cm")) + Entry(2, "k\xff", "a\xc3(b\xe2\x82\xac")));
  ASSERT_TRUE(cm.ok()) << cm.error().message;
  EXPECT_EQ((*cm)["data"], json::parse(R"({"k\ufffd":"a\ufffd(b\u20ac"})"));
}

TEST(ProtobufTest, GoDurationText) {
  EXPECT_EQ(FormatGoDuration(0), "0s");
  EXPECT_EQ(FormatGoDuration(999), "999ns");
  EXPECT_EQ(FormatGoDuration(1500), "1.5µs");
  EXPECT_EQ(FormatGoDuration(1500000), "1.5ms");
  EXPECT_EQ(FormatGoDuration(2000000000), "2s");
  EXPECT_EQ(FormatGoDuration(-2000000000), "-2s");
  EXPECT_EQ(FormatGoDuration(60000000000), "1m0s");
  EXPECT_EQ(FormatGoDuration(3600000000000), "1h0m0s");
  EXPECT_EQ(FormatGoDuration(3723500000000), "1h2m3.5s");
}

TEST(ProtobufTest, GarbageNeverCrashes) {
  // Every truncation and many byte flips of a real body: each either decodes or is a 400.
  const std::string body = WebPodBody();
  // A flipped byte in the kind's name makes an unknown kind: a 415.
  auto check = [](const std::string& input) {
    auto r = DecodeProtobufObject(input);
    if (!r.ok()) {
      EXPECT_THAT(r.error().code,
                  ::testing::AnyOf(ErrorCode::kBadRequest, ErrorCode::kUnsupportedMediaType));
      return;
    }
    EXPECT_NO_THROW(r->dump());  // every string valid UTF-8
  };
  int refused = 0;
  for (size_t n = 4; n < body.size(); ++n) {
    refused += !DecodeProtobufObject(body.substr(0, n)).ok();
    check(body.substr(0, n));
  }
  EXPECT_GT(refused, static_cast<int>(body.size()) / 2);
  uint32_t seed = 12345;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = body;
    for (int k = 0; k < 3; ++k) {
      seed = seed * 1664525 + 1013904223;
      mutated[4 + seed % (mutated.size() - 4)] = static_cast<char>(seed >> 24);
    }
    check(mutated);
  }
  check(std::string("k8s\0", 4) + std::string(64, '\xff'));
  check(std::string("k8s\0", 4) + Str(2, std::string(100, '\x0b')));
}

}  // namespace
}  // namespace berth::apiserver
