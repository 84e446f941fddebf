#include "api/codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/codec_internal.h"

namespace berth {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

template <class T>
std::shared_ptr<const T> As(const Object& o) {
  auto* p = std::get_if<std::shared_ptr<const T>>(&o);
  return p ? *p : nullptr;
}

std::vector<Object> MustDecode(std::string_view text) {
  auto r = DecodeObjects(text, "test.yaml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : std::vector<Object>{};
}

std::string DecodeError(std::string_view text) {
  auto r = DecodeObjects(text, "test.yaml");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message;
}

constexpr std::string_view kPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: prod
  uid: u-1
  labels: {app: web, version: 1.10, release: 2, canary: true}
  annotations:
    note: hello
  creationTimestamp: "2024-01-02T03:04:05Z"
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-rs, uid: rs-1, controller: true}
spec:
  schedulerName: my-scheduler
  priority: 100
  priorityClassName: high
  preemptionPolicy: Never
  nodeSelector: {disk: ssd}
  hostNetwork: true
  containers:
  - name: c1
    image: nginx:1.25
    env: [{name: A, value: b}]
    resources:
      requests: {cpu: 4, memory: 1Gi, example.com/gpu: '1'}
      limits: {cpu: '4.5', memory: 2Gi}
    ports:
    - {containerPort: 80, hostPort: 8080}
    - {containerPort: 53, protocol: UDP, hostIP: 10.0.0.1}
  initContainers:
  - name: sidecar
    restartPolicy: Always
    resources: {requests: {cpu: 0.5}}
  overhead: {cpu: 100m}
  tolerations:
  - {key: k, operator: Equal, value: v, effect: NoSchedule}
  - {operator: Exists, tolerationSeconds: 30}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
          matchFields: [{key: metadata.name, operator: NotIn, values: [n9]}]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 5
        preference: {matchExpressions: [{key: gpu, operator: Exists}]}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
        matchLabelKeys: [pod-template-hash]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        podAffinityTerm:
          namespaceSelector: {}
          topologyKey: zone
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchExpressions: [{key: app, operator: In, values: [web]}]}
    minDomains: 2
    nodeAffinityPolicy: Honor
    matchLabelKeys: [version]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data-web, readOnly: true}
  - name: scratch
    ephemeral: {volumeClaimTemplate: {spec: {}}}
  - name: disk
    rbd: {monitors: [m1], image: img}
  - name: iscsi
    iscsi: {targetPortal: "1.2.3.4:3260", iqn: iqn.x, lun: 2}
  - name: csi
    csi: {driver: ebs.csi.aws.com}
  schedulingGates: [{name: wait}]
status:
  phase: Pending
  nominatedNodeName: n1
  startTime: "2024-01-02T03:05:00Z"
  conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]
)";

TEST(CodecTest, DecodesEveryPodField) {
  auto objs = MustDecode(kPod);
  ASSERT_EQ(objs.size(), 1u);
  auto pod = As<Pod>(objs[0]);
  ASSERT_NE(pod, nullptr);
  const auto& m = pod->metadata;
  EXPECT_EQ(m.name, "web");
  EXPECT_EQ(m.namespace_, "prod");
  EXPECT_EQ(m.uid, "u-1");
  EXPECT_EQ(m.labels.at("version"), "1.10");
  EXPECT_EQ(m.labels.at("release"), "2");
  EXPECT_EQ(m.labels.at("canary"), "true");
  EXPECT_EQ(m.annotations.at("note"), "hello");
  EXPECT_EQ(m.creation_timestamp, 1704164645);
  ASSERT_EQ(m.owner_references.size(), 1u);
  EXPECT_TRUE(m.owner_references[0].controller);
  EXPECT_EQ(m.owner_references[0].kind, "ReplicaSet");
  const auto& s = pod->spec;
  EXPECT_EQ(s.scheduler_name, "my-scheduler");
  EXPECT_EQ(s.priority, 100);
  EXPECT_EQ(s.priority_class_name, "high");
  EXPECT_EQ(s.preemption_policy, "Never");
  EXPECT_EQ(s.node_selector.at("disk"), "ssd");
  EXPECT_TRUE(s.host_network);
  ASSERT_EQ(s.containers.size(), 1u);
  const Container& c = s.containers[0];
  EXPECT_EQ(c.image, "nginx:1.25");
  EXPECT_EQ(c.resources.requests.at("cpu").MilliValue(), 4000);
  EXPECT_EQ(c.resources.requests.at("memory").Value(), 1 << 30);
  EXPECT_EQ(c.resources.requests.at("example.com/gpu").Value(), 1);
  EXPECT_EQ(c.resources.limits.at("cpu").MilliValue(), 4500);
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0].host_port, 8080);
  EXPECT_EQ(c.ports[0].protocol, "TCP");
  EXPECT_EQ(c.ports[1].protocol, "UDP");
  EXPECT_EQ(c.ports[1].host_ip, "10.0.0.1");
  ASSERT_EQ(s.init_containers.size(), 1u);
  EXPECT_EQ(s.init_containers[0].restart_policy, "Always");
  EXPECT_EQ(s.init_containers[0].resources.requests.at("cpu").MilliValue(), 500);
  EXPECT_EQ(s.overhead.at("cpu").MilliValue(), 100);
  ASSERT_EQ(s.tolerations.size(), 2u);
  EXPECT_EQ(s.tolerations[0].effect, "NoSchedule");
  EXPECT_EQ(s.tolerations[1].op, "Exists");
  EXPECT_EQ(s.tolerations[1].toleration_seconds, 30);
  ASSERT_TRUE(s.affinity && s.affinity->node_affinity && s.affinity->node_affinity->required);
  const auto& terms = s.affinity->node_affinity->required->terms;
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0].match_expressions[0].values, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(terms[0].match_fields[0].op, "NotIn");
  ASSERT_EQ(s.affinity->node_affinity->preferred.size(), 1u);
  EXPECT_EQ(s.affinity->node_affinity->preferred[0].weight, 5);
  EXPECT_FALSE(s.affinity->pod_affinity.has_value());
  ASSERT_TRUE(s.affinity->pod_anti_affinity);
  const auto& anti = *s.affinity->pod_anti_affinity;
  ASSERT_EQ(anti.required.size(), 1u);
  EXPECT_EQ(anti.required[0].label_selector->match_labels.at("app"), "web");
  EXPECT_EQ(anti.required[0].match_label_keys, (std::vector<std::string>{"pod-template-hash"}));
  ASSERT_EQ(anti.preferred.size(), 1u);
  EXPECT_EQ(anti.preferred[0].weight, 10);
  EXPECT_TRUE(anti.preferred[0].term.namespace_selector.has_value());
  EXPECT_FALSE(anti.preferred[0].term.label_selector.has_value());
  ASSERT_EQ(s.topology_spread_constraints.size(), 1u);
  const auto& tsc = s.topology_spread_constraints[0];
  EXPECT_EQ(tsc.max_skew, 1);
  EXPECT_EQ(tsc.min_domains, 2);
  EXPECT_EQ(tsc.node_affinity_policy, "Honor");
  EXPECT_FALSE(tsc.node_taints_policy.has_value());
  EXPECT_EQ(tsc.label_selector->match_expressions[0].op, "In");
  ASSERT_EQ(s.volumes.size(), 5u);
  EXPECT_EQ(s.volumes[0].persistent_volume_claim->claim_name, "data-web");
  EXPECT_TRUE(s.volumes[0].persistent_volume_claim->read_only);
  EXPECT_TRUE(s.volumes[1].ephemeral);
  EXPECT_EQ(s.volumes[2].rbd->pool, "rbd");
  EXPECT_EQ(s.volumes[3].iscsi->lun, 2);
  EXPECT_EQ(s.volumes[4].csi->driver, "ebs.csi.aws.com");
  EXPECT_EQ(s.scheduling_gates, (std::vector<std::string>{"wait"}));
  EXPECT_EQ(pod->status.phase, "Pending");
  EXPECT_EQ(pod->status.nominated_node_name, "n1");
  EXPECT_EQ(pod->status.start_time, 1704164700);
  ASSERT_EQ(pod->status.conditions.size(), 1u);
  EXPECT_EQ(pod->status.conditions[0].status, "False");
  ASSERT_NE(pod->raw, nullptr);
  EXPECT_EQ((*pod->raw)["spec"]["containers"][0]["env"][0]["name"], "A");
}

TEST(CodecTest, DefaultsForMissingFields) {
  auto objs = MustDecode("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n");
  auto pod = As<Pod>(objs.at(0));
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->metadata.namespace_, "default");
  EXPECT_EQ(pod->spec.scheduler_name, "default-scheduler");
  EXPECT_FALSE(pod->spec.priority.has_value());
  EXPECT_EQ(pod->Priority(), 0);
  EXPECT_TRUE(pod->spec.containers[0].resources.requests.empty());
}

TEST(CodecTest, QuantitySpellings) {
  auto objs = MustDecode(R"(
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status:
  capacity: {cpu: 4, memory: 8Gi, pods: 110}
  allocatable: {cpu: '3.5', memory: "7Gi", pods: "110", ephemeral-storage: 1e3, hugepages-2Mi: 0}
)");
  auto node = As<Node>(objs.at(0));
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->metadata.namespace_, "");
  EXPECT_EQ(node->status.capacity.at("cpu").MilliValue(), 4000);
  EXPECT_EQ(node->status.allocatable.at("cpu").MilliValue(), 3500);
  EXPECT_EQ(node->status.allocatable.at("memory").Value(), 7LL << 30);
  EXPECT_EQ(node->status.allocatable.at("pods").Value(), 110);
  EXPECT_EQ(node->status.allocatable.at("ephemeral-storage").Value(), 1000);
  EXPECT_TRUE(node->status.allocatable.at("hugepages-2Mi").IsZero());
}

TEST(CodecTest, MultiDocumentListsAndUnknownKinds) {
  auto objs = MustDecode(R"(
# leading comment
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
- {apiVersion: v1, kind: Pod, metadata: {name: p1}}
---
---
apiVersion: v1
kind: PodList
items:
- metadata: {name: p2, namespace: kube-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
---
{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1", "labels": {"team": "a"}}}
)");
  ASSERT_EQ(objs.size(), 5u);
  EXPECT_EQ(As<Node>(objs[0])->metadata.name, "n1");
  EXPECT_EQ(As<Pod>(objs[1])->metadata.name, "p1");
  auto p2 = As<Pod>(objs[2]);
  ASSERT_NE(p2, nullptr);
  EXPECT_EQ(p2->Key(), "kube-system/p2");
  auto unknown = As<UnknownObject>(objs[3]);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->kind, "Deployment");
  EXPECT_EQ(unknown->api_version, "apps/v1");
  EXPECT_EQ(unknown->name, "d");
  EXPECT_EQ(As<Namespace>(objs[4])->metadata.labels.at("team"), "a");
}

TEST(CodecTest, JsonInput) {
  auto objs = MustDecode(R"({"apiVersion":"v1","kind":"List","items":[
    {"kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"resources":{"requests":{"cpu":0.25}}}]}},
    {"kind":"Pod","metadata":{"name":"b"}}]})");
  ASSERT_EQ(objs.size(), 2u);
  EXPECT_EQ(As<Pod>(objs[0])->spec.containers[0].resources.requests.at("cpu").MilliValue(), 250);
}

TEST(CodecTest, AnchorsAndMergeKeys) {
  auto objs = MustDecode(R"(
kind: Pod
metadata:
  name: p
  labels: &base {app: web, tier: front}
  annotations:
    <<: *base
    tier: back
spec:
  containers:
  - &c {name: a, resources: {requests: {cpu: 1}}}
  - *c
)");
  auto pod = As<Pod>(objs.at(0));
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->metadata.annotations.at("app"), "web");
  EXPECT_EQ(pod->metadata.annotations.at("tier"), "back");
  ASSERT_EQ(pod->spec.containers.size(), 2u);
  EXPECT_EQ(pod->spec.containers[1].resources.requests.at("cpu").Value(), 1);
}

// Long by design: one document per kind Berth decodes, and each kind's fields checked.
TEST(CodecTest, OtherKinds) {
  auto objs = MustDecode(R"(
kind: Service
metadata: {name: s}
spec: {selector: {app: web}}
---
kind: ReplicationController
metadata: {name: rc}
spec: {selector: {app: db}}
---
kind: ReplicaSet
metadata: {name: rs}
spec: {selector: {matchLabels: {app: web}}}
---
kind: StatefulSet
metadata: {name: ss}
spec: {selector: {matchExpressions: [{key: app, operator: Exists}]}}
---
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  volumeMode: Block
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
  claimRef: {namespace: default, name: c1, uid: x}
  csi: {driver: d, volumeHandle: h}
status: {phase: Bound}
---
kind: PersistentVolume
metadata: {name: pv2}
spec: {gcePersistentDisk: {pdName: pd}, awsElasticBlockStore: {volumeID: vol}}
---
kind: PersistentVolumeClaim
metadata: {name: c1}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: pv1
  resources: {requests: {storage: 5Gi}}
  selector: {matchLabels: {a: b}}
status: {phase: Bound}
---
kind: StorageClass
metadata: {name: fast}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: zone, values: [a, b]}]
---
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: d, nodeID: n1, allocatable: {count: 3}, topologyKeys: [zone]}
  - {name: e, nodeID: n1}
---
kind: PodDisruptionBudget
metadata: {name: pdb}
spec: {selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 1, disruptedPods: {p1: "2024-01-01T00:00:00Z"}}
---
kind: PriorityClass
metadata: {name: high}
value: 1000
globalDefault: true
preemptionPolicy: Never
)");
  ASSERT_EQ(objs.size(), 11u);
  EXPECT_EQ(As<Service>(objs[0])->selector.at("app"), "web");
  EXPECT_EQ(As<Service>(objs[0])->metadata.namespace_, "default");
  EXPECT_EQ(As<ReplicationController>(objs[1])->selector.at("app"), "db");
  EXPECT_EQ(As<ReplicaSet>(objs[2])->selector->match_labels.at("app"), "web");
  EXPECT_EQ(As<StatefulSet>(objs[3])->selector->match_expressions[0].op, "Exists");
  auto pv = As<PersistentVolume>(objs[4]);
  EXPECT_EQ(pv->spec.capacity.at("storage").Value(), 10LL << 30);
  EXPECT_EQ(pv->spec.access_modes, (std::vector<std::string>{"ReadWriteOnce"}));
  EXPECT_EQ(pv->spec.storage_class_name, "fast");
  EXPECT_EQ(pv->spec.volume_mode, "Block");
  EXPECT_EQ(pv->spec.node_affinity->terms[0].match_expressions[0].key, "zone");
  EXPECT_EQ(pv->spec.claim_ref->name, "c1");
  EXPECT_EQ(pv->spec.csi_driver, "d");
  EXPECT_EQ(pv->spec.csi_volume_handle, "h");
  EXPECT_EQ(pv->status.phase, "Bound");
  EXPECT_EQ(As<PersistentVolume>(objs[5])->spec.gce_pd_name, "pd");
  EXPECT_EQ(As<PersistentVolume>(objs[5])->spec.aws_volume_id, "vol");
  auto pvc = As<PersistentVolumeClaim>(objs[6]);
  EXPECT_EQ(pvc->spec.storage_class_name, "");
  EXPECT_EQ(pvc->spec.volume_name, "pv1");
  EXPECT_EQ(pvc->spec.requests.at("storage").Value(), 5LL << 30);
  EXPECT_EQ(pvc->spec.selector->match_labels.at("a"), "b");
  EXPECT_EQ(pvc->status.phase, "Bound");
  auto sc = As<StorageClass>(objs[7]);
  EXPECT_EQ(sc->provisioner, "kubernetes.io/no-provisioner");
  EXPECT_EQ(sc->volume_binding_mode, "WaitForFirstConsumer");
  ASSERT_EQ(sc->allowed_topologies.size(), 1u);
  EXPECT_EQ(sc->allowed_topologies[0][0].values, (std::vector<std::string>{"a", "b"}));
  auto csi = As<CSINode>(objs[8]);
  ASSERT_EQ(csi->drivers.size(), 2u);
  EXPECT_EQ(csi->drivers[0].allocatable_count, 3);
  EXPECT_FALSE(csi->drivers[1].allocatable_count.has_value());
  EXPECT_EQ(csi->drivers[0].topology_keys, (std::vector<std::string>{"zone"}));
  auto pdb = As<PodDisruptionBudget>(objs[9]);
  EXPECT_EQ(pdb->disruptions_allowed, 1);
  EXPECT_TRUE(pdb->disrupted_pods.at("p1"));
  auto pc = As<PriorityClass>(objs[10]);
  EXPECT_EQ(pc->value, 1000);
  EXPECT_TRUE(pc->global_default);
  EXPECT_EQ(pc->preemption_policy, "Never");
}

TEST(CodecTest, RoundTripKeepsUnknownFields) {
  auto objs = MustDecode(kPod);
  auto pod = As<Pod>(objs.at(0));
  json out = EncodePod(*pod);
  EXPECT_EQ(out["spec"]["containers"][0]["env"][0]["value"], "b");
  EXPECT_EQ(out["spec"]["volumes"][1]["ephemeral"]["volumeClaimTemplate"],
            json::object({{"spec", json::object()}}));
  // Quantities keep their own spelling when unchanged; numbers become canonical strings.
  EXPECT_EQ(out["spec"]["containers"][0]["resources"]["limits"]["cpu"], "4.5");
  EXPECT_EQ(out["spec"]["containers"][0]["resources"]["requests"]["cpu"], "4");
  EXPECT_EQ(out["metadata"]["creationTimestamp"], "2024-01-02T03:04:05Z");
  // Re-decoding the encoding gives the same typed object.
  auto again = DecodePod(out, "again");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(EncodePod(again.value()), out);

  // Typed changes are written over the raw document.
  Pod changed = *pod;
  changed.spec.node_name = "n7";
  changed.spec.containers[0].resources.requests["cpu"] = Quantity::FromMilli(1500);
  changed.metadata.labels.erase("canary");
  changed.spec.tolerations.clear();
  changed.status.nominated_node_name.clear();
  json out2 = EncodePod(changed);
  EXPECT_EQ(out2["spec"]["nodeName"], "n7");
  EXPECT_EQ(out2["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1500m");
  EXPECT_EQ(out2["spec"]["containers"][0]["env"][0]["name"], "A");
  EXPECT_FALSE(out2["metadata"]["labels"].contains("canary"));
  EXPECT_FALSE(out2["spec"].contains("tolerations"));
  EXPECT_FALSE(out2["status"].contains("nominatedNodeName"));
  EXPECT_EQ(out2["apiVersion"], "v1");
}

TEST(CodecTest, EncodesObjectsBuiltInCode) {
  Node node;
  node.metadata.name = "n1";
  node.status.allocatable["cpu"] = Quantity::FromMilli(2000);
  node.spec.taints.push_back({"k", "", "NoSchedule"});
  json j = EncodeNode(node);
  EXPECT_EQ(j["kind"], "Node");
  EXPECT_EQ(j["status"]["allocatable"]["cpu"], "2");
  EXPECT_EQ(j["spec"]["taints"][0], json({{"key", "k"}, {"effect", "NoSchedule"}}));
  auto back = DecodeNode(j, "n");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->status.allocatable.at("cpu").MilliValue(), 2000);

  auto objs = MustDecode(R"(
kind: PersistentVolumeClaim
metadata: {name: c, namespace: ns}
spec: {storageClassName: fast, resources: {requests: {storage: 1Gi}}, dataSource: {kind: X}}
)");
  json pvc = EncodeObject(objs.at(0));
  EXPECT_EQ(pvc["spec"]["dataSource"]["kind"], "X");
  EXPECT_EQ(pvc["spec"]["storageClassName"], "fast");
  EXPECT_EQ(pvc["spec"]["resources"]["requests"]["storage"], "1Gi");
}

TEST(CodecTest, SelectorPiecesForConfig) {
  json affinity = json::parse(R"({"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}})");
  auto a = DecodeNodeAffinity(affinity, "args.addedAffinity");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->required->terms[0].match_expressions[0].key, "zone");
  EXPECT_EQ(EncodeNodeAffinity(a.value()), affinity);

  json bad = json::parse(R"({"nodeSelectorTerms":[{"matchExpressions":"zone"}]})");
  auto b = DecodeNodeSelector(bad, "profiles[0].args.sel");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message,
            "profiles[0].args.sel.nodeSelectorTerms[0].matchExpressions: expected a list, got a "
            "string");

  json ls = json::parse(
      R"({"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"Exists"}]})");
  auto l = DecodeLabelSelector(ls, "x");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(EncodeLabelSelector(l.value()), ls);

  json tsc =
      json::parse(R"({"maxSkew":3,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"})");
  auto t = DecodeTopologySpreadConstraint(tsc, "defaultConstraints[0]");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->max_skew, 3);
  EXPECT_EQ(EncodeTopologySpreadConstraint(t.value()), tsc);
}

TEST(CodecTest, ErrorsNameSourceDocumentObjectAndField) {
  EXPECT_EQ(DecodeError(R"(
kind: Node
metadata: {name: n1}
---
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - resources: {requests: {cpu: 1x}}
)"),
            "test.yaml: document 2 (Pod default/web): spec.containers[0].resources.requests.cpu: "
            "invalid quantity \"1x\"");
  EXPECT_EQ(DecodeError("kind: Pod\nmetadata: {name: p}\nspec: {containers: foo}\n"),
            "test.yaml: document 1 (Pod p): spec.containers: expected a list, got a string");
  EXPECT_EQ(DecodeError("kind: Pod\nmetadata: {name: p}\nspec: {priority: high}\n"),
            "test.yaml: document 1 (Pod p): spec.priority: expected an integer, got a string");
  EXPECT_EQ(DecodeError("kind: Pod\nmetadata: {name: p}\nspec: {priority: 3000000000}\n"),
            "test.yaml: document 1 (Pod p): spec.priority: integer 3000000000 out of range");
  EXPECT_EQ(DecodeError("kind: Pod\nmetadata: [a]\n"),
            "test.yaml: document 1 (Pod): metadata: expected a map, got a list");
  EXPECT_THAT(DecodeError("kind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n"),
              HasSubstr("metadata.creationTimestamp: invalid timestamp \"yesterday\""));
  EXPECT_EQ(DecodeError("kind: Pod\nmetadata: {name: p, labels: {a: [1]}}\n"),
            "test.yaml: document 1 (Pod p): metadata.labels.a: expected a string, got a list");
  EXPECT_EQ(DecodeError("kind: Node\nmetadata: {name: n}\nmetadata2: {}\nstatus: {allocatable: "
                        "{example.com/gpu: x}}\n"),
            "test.yaml: document 1 (Node n): status.allocatable[\"example.com/gpu\"]: invalid "
            "quantity \"x\"");
  EXPECT_EQ(DecodeError("apiVersion: v1\nitems: []\nmetadata: {name: x}\n"),
            "test.yaml: document 1 (object x): kind: missing or not a string");
  EXPECT_EQ(DecodeError("- a\n- b\n"),
            "test.yaml: document 1: expected an object (a map with kind and metadata)");
  EXPECT_EQ(DecodeError("kind: List\nitems:\n- {kind: Pod, metadata: {name: a}}\n- {kind: Pod, "
                        "metadata: {name: b}, spec: {hostNetwork: maybe}}\n"),
            "test.yaml: document 1, item 1 (Pod b): spec.hostNetwork: expected a boolean, got a "
            "string");
  EXPECT_THAT(DecodeError("kind: Pod\nmetadata: {name: [}\n"), HasSubstr("test.yaml: yaml: line"));
  auto missing = DecodeFile("/nonexistent/cluster.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/cluster.yaml"));
}

TEST(CodecTest, EmptyInput) {
  EXPECT_TRUE(MustDecode("").empty());
  EXPECT_TRUE(MustDecode("# nothing\n---\n").empty());
  auto docs = ParseDocuments("a: 1\n---\nb: [x, 2.5, null, ~, '3', yes, 0x1F, 007, 1e3]\n", "s");
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0]["a"], 1);
  EXPECT_EQ((*docs)[1]["b"],
            json::parse(R"(["x", 2.5, null, null, "3", "yes", "0x1F", "007", "1e3"])"));
}

TEST(CodecTest, Timestamps) {
  const std::pair<std::string, UnixTime> cases[] = {
      {"1970-01-01T00:00:00Z", 0},
      {"2024-01-01T00:00:00Z", 1704067200},
      {"2024-02-29T12:30:15Z", 1709209815},
      {"2024-01-01T00:00:00.999999Z", 1704067200},
      {"2024-01-01T02:00:00+02:00", 1704067200},
      {"2023-12-31T19:00:00-05:00", 1704067200},
      {"1969-12-31T23:59:59Z", -1},
  };
  for (const auto& [text, want] : cases) {
    auto t = ParseTimestamp(text);
    ASSERT_TRUE(t.ok()) << text;
    EXPECT_EQ(t.value(), want) << text;
  }
  for (const char* bad : {"", "2024-01-01", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
                          "2024-01-01T00:00:00", "2024-01-01 00:00:00Z", "2024-01-01T24:00:00Z",
                          "2024-01-01T00:00:00Zjunk", "2024-01-01T00:00:00.Z"}) {
    EXPECT_FALSE(ParseTimestamp(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatTimestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatTimestamp(1709209815), "2024-02-29T12:30:15Z");
  EXPECT_EQ(FormatTimestamp(-1), "1969-12-31T23:59:59Z");
}

}  // namespace
}  // namespace berth
