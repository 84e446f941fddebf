// The resource.k8s.io/v1 kinds through the codec, and a pod's resource claims.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "api/codec.h"
#include "berth/api/resource_claims.h"

namespace berth {
namespace {

template <class T>
std::shared_ptr<const T> DecodeOne(const std::string& text) {
  auto r = DecodeObjects(text, "test.yaml");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok() || r->size() != 1) return nullptr;
  auto* p = std::get_if<std::shared_ptr<const T>>(&(*r)[0]);
  EXPECT_NE(p, nullptr);
  return p ? *p : nullptr;
}

Quantity Q(const char* s) { return Quantity::Parse(s).value(); }

constexpr const char* kSlice = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 3, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
      numa: {int: 1}
      vf: {bool: true}
      driverVersion: {version: 1.2.3}
    capacity:
      memory: {value: 40Gi}
      bandwidth:
        value: "10"
        requestPolicy:
          default: "2"
          validRange: {min: "2", max: "8", step: "2"}
    consumesCounters:
    - counterSet: gpu-0-counters
      counters: {memory: {value: 40Gi}}
    taints:
    - {key: broken, value: "yes", effect: NoSchedule}
    bindsToNode: true
    bindingConditions: [attached]
    bindingFailureConditions: [failed]
    allowMultipleAllocations: true
    futureField: kept
  sharedCounters:
  - name: gpu-0-counters
    counters: {memory: {value: 80Gi}}
)";

TEST(CodecResourceTest, DecodesResourceSlice) {
  auto s = DecodeOne<ResourceSlice>(kSlice);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->metadata.name, "node-1-gpu");
  EXPECT_EQ(s->spec.driver, "gpu.example.com");
  EXPECT_EQ(s->spec.pool.name, "node-1");
  EXPECT_EQ(s->spec.pool.generation, 3);
  EXPECT_EQ(s->spec.pool.resource_slice_count, 1);
  EXPECT_EQ(s->spec.node_name, std::optional<std::string>("node-1"));
  ASSERT_EQ(s->spec.devices.size(), 1u);
  const Device& d = s->spec.devices[0];
  EXPECT_EQ(d.attributes.at("model").string_value, std::optional<std::string>("a100"));
  EXPECT_EQ(d.attributes.at("numa").int_value, std::optional<int64_t>(1));
  EXPECT_EQ(d.attributes.at("vf").bool_value, std::optional<bool>(true));
  EXPECT_EQ(d.attributes.at("driverVersion").version_value, std::optional<std::string>("1.2.3"));
  EXPECT_EQ(d.capacity.at("memory").value, Q("40Gi"));
  const auto& policy = d.capacity.at("bandwidth").request_policy;
  ASSERT_TRUE(policy.has_value());
  EXPECT_EQ(policy->default_value, std::optional<Quantity>(Q("2")));
  EXPECT_EQ(policy->valid_range->max, std::optional<Quantity>(Q("8")));
  ASSERT_EQ(d.consumes_counters.size(), 1u);
  EXPECT_EQ(d.consumes_counters[0].counters.at("memory"), Q("40Gi"));
  ASSERT_EQ(d.taints.size(), 1u);
  EXPECT_EQ(d.taints[0].effect, "NoSchedule");
  EXPECT_TRUE(d.binds_to_node);
  EXPECT_TRUE(d.allow_multiple_allocations);
  EXPECT_EQ(d.binding_conditions, std::vector<std::string>{"attached"});
  ASSERT_EQ(s->spec.shared_counters.size(), 1u);
  EXPECT_EQ(s->spec.shared_counters[0].counters.at("memory"), Q("80Gi"));
}

TEST(CodecResourceTest, ResourceSliceRoundTrip) {
  auto s = DecodeOne<ResourceSlice>(kSlice);
  ASSERT_NE(s, nullptr);
  nlohmann::json out = EncodeObject(s);
  EXPECT_EQ(out["apiVersion"], "resource.k8s.io/v1");
  auto again = DecodeOne<ResourceSlice>(out.dump());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->spec.devices[0].attributes, s->spec.devices[0].attributes);
  EXPECT_EQ(again->spec.devices[0].capacity.at("bandwidth").request_policy->valid_range->step,
            std::optional<Quantity>(Q("2")));
  EXPECT_EQ(again->spec.devices[0].taints, s->spec.devices[0].taints);
  EXPECT_EQ(again->spec.pool.generation, 3);
  EXPECT_EQ(out["spec"]["devices"][0]["capacity"]["memory"]["value"], "40Gi");
  // A slice built in code encodes without a raw document.
  ResourceSlice built;
  built.metadata.name = "s";
  built.spec.driver = "d";
  built.spec.all_nodes = true;
  built.spec.devices.push_back(Device{"dev"});
  nlohmann::json fresh = EncodeObject(std::make_shared<const ResourceSlice>(built));
  EXPECT_EQ(fresh["kind"], "ResourceSlice");
  EXPECT_EQ(fresh["spec"]["allNodes"], true);
  EXPECT_EQ(fresh["spec"]["devices"][0]["name"], "dev");
}

constexpr const char* kClaim = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"name": "gpu", "namespace": "ml", "uid": "u1"},
  "spec": {"devices": {
    "requests": [
      {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2,
        "allocationMode": "ExactCount", "adminAccess": true,
        "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].numa == 1"}}],
        "tolerations": [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}],
        "capacity": {"requests": {"memory": "10Gi"}}}},
      {"name": "nic", "firstAvailable": [
        {"name": "fast", "deviceClassName": "nic", "allocationMode": "All"},
        {"name": "slow", "deviceClassName": "nic", "count": 1}]}],
    "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "gpu.example.com/numa"}],
    "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com",
                "parameters": {"sharing": "timeslice"}}}]}},
  "status": {
    "allocation": {
      "devices": {
        "results": [{"request": "nic/slow", "driver": "nic", "pool": "p", "device": "d",
                     "shareID": "abc", "consumedCapacity": {"bw": "1"},
                     "bindingConditions": ["ready"]}],
        "config": [{"source": "FromClaim", "requests": ["gpu"],
                    "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]},
      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}},
    "reservedFor": [{"resource": "pods", "name": "web", "uid": "p1"}]}
})";

TEST(CodecResourceTest, DecodesResourceClaim) {
  auto c = DecodeOne<ResourceClaim>(kClaim);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->metadata.namespace_, "ml");
  const auto& reqs = c->spec.devices.requests;
  ASSERT_EQ(reqs.size(), 2u);
  ASSERT_TRUE(reqs[0].exactly.has_value());
  EXPECT_EQ(reqs[0].exactly->count, 2);
  EXPECT_TRUE(reqs[0].exactly->admin_access);
  EXPECT_EQ(reqs[0].exactly->selectors.size(), 1u);
  EXPECT_EQ(reqs[0].exactly->tolerations.at(0).op, "Exists");
  EXPECT_EQ(reqs[0].exactly->capacity_requests.at("memory"), Q("10Gi"));
  ASSERT_EQ(reqs[1].first_available.size(), 2u);
  EXPECT_EQ(reqs[1].first_available[0].request.allocation_mode, "All");
  EXPECT_EQ(c->spec.devices.constraints.at(0).match_attribute,
            std::optional<std::string>("gpu.example.com/numa"));
  EXPECT_EQ((*c->spec.devices.config.at(0).opaque.parameters)["sharing"], "timeslice");
  ASSERT_TRUE(c->status.allocation.has_value());
  const auto& res = c->status.allocation->results.at(0);
  EXPECT_EQ(res.request, "nic/slow");
  EXPECT_EQ(res.share_id, std::optional<std::string>("abc"));
  EXPECT_EQ(res.consumed_capacity.at("bw"), Q("1"));
  EXPECT_EQ(res.binding_conditions, std::vector<std::string>{"ready"});
  ASSERT_TRUE(c->status.allocation->node_selector.has_value());
  EXPECT_EQ(c->status.allocation->node_selector->terms.at(0).match_fields.at(0).values,
            std::vector<std::string>{"node-1"});
  ASSERT_EQ(c->status.reserved_for.size(), 1u);
  EXPECT_EQ(c->status.reserved_for[0].name, "web");
}

TEST(CodecResourceTest, ResourceClaimRoundTripWithNewAllocation) {
  auto c = DecodeOne<ResourceClaim>(kClaim);
  ASSERT_NE(c, nullptr);
  ResourceClaim changed = *c;
  changed.status.allocation->results[0].device = "d2";
  changed.status.reserved_for.push_back({"", "pods", "api", "p2"});
  nlohmann::json out = EncodeObject(std::make_shared<const ResourceClaim>(changed));
  auto again = DecodeOne<ResourceClaim>(out.dump());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->status.allocation->results.at(0).device, "d2");
  EXPECT_EQ(again->status.reserved_for.size(), 2u);
  EXPECT_EQ(again->spec.devices.requests.at(1).first_available.at(1).name, "slow");
  EXPECT_EQ(again->spec.devices.requests.at(0).exactly->tolerations,
            c->spec.devices.requests.at(0).exactly->tolerations);
  EXPECT_EQ(again->status.allocation->node_selector, c->status.allocation->node_selector);
  // Dropping the allocation removes it from the document.
  changed.status.allocation.reset();
  changed.status.reserved_for.clear();
  out = EncodeObject(std::make_shared<const ResourceClaim>(changed));
  EXPECT_FALSE(out.contains("status") && out["status"].contains("allocation"));
}

TEST(CodecResourceTest, DeviceClassAndTemplate) {
  auto cls = DecodeOne<DeviceClass>(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
  config: [{opaque: {driver: gpu.example.com, parameters: {mode: shared}}}]
  extendedResourceName: example.com/gpu
)");
  ASSERT_NE(cls, nullptr);
  EXPECT_EQ(cls->spec.selectors.at(0).cel_expression, "device.driver == \"gpu.example.com\"");
  EXPECT_EQ(cls->spec.config.at(0).opaque.driver, "gpu.example.com");
  EXPECT_EQ(cls->spec.extended_resource_name, std::optional<std::string>("example.com/gpu"));
  auto cls2 = DecodeOne<DeviceClass>(EncodeObject(cls).dump());
  ASSERT_NE(cls2, nullptr);
  EXPECT_EQ(cls2->spec.selectors, cls->spec.selectors);
  EXPECT_EQ((*cls2->spec.config.at(0).opaque.parameters)["mode"], "shared");

  auto t = DecodeOne<ResourceClaimTemplate>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu-template}
spec:
  metadata: {labels: {app: ml}}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
)");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->metadata.namespace_, "default");
  EXPECT_EQ(t->spec.metadata.labels.at("app"), "ml");
  EXPECT_EQ(t->spec.devices.requests.at(0).exactly->device_class_name, "gpu.example.com");
  auto t2 = DecodeOne<ResourceClaimTemplate>(EncodeObject(t).dump());
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(t2->spec.metadata.labels.at("app"), "ml");
  EXPECT_EQ(t2->spec.devices.requests.at(0).name, "gpu");
}

TEST(CodecResourceTest, TypeErrorsNameTheField) {
  auto r = DecodeObjects(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, pool: {name: p, generation: x}}
)",
                         "s.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("spec.pool.generation"), std::string::npos) << r.error().message;
}

TEST(PodResourceClaimsTest, ReadsSpecAndStatusFromRaw) {
  auto r = DecodeObjects(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: gpu-template}
  - {name: shared, resourceClaimName: shared-gpu}
status:
  resourceClaimStatuses:
  - {name: gpu, resourceClaimName: p-gpu-abcde}
  - {name: unneeded}
)",
                         "pod.yaml");
  ASSERT_TRUE(r.ok());
  const Pod& pod = *std::get<std::shared_ptr<const Pod>>((*r)[0]);
  auto claims = PodResourceClaimsOf(pod);
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0], (PodResourceClaim{"gpu", std::nullopt, "gpu-template"}));
  EXPECT_EQ(claims[1], (PodResourceClaim{"shared", "shared-gpu", std::nullopt}));
  auto statuses = PodResourceClaimStatusesOf(pod);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0], std::make_pair(std::string("gpu"), std::string("p-gpu-abcde")));
  // The pod's encoding keeps them.
  auto again = DecodeObjects(EncodeObject((*r)[0]).dump(), "again");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(PodResourceClaimsOf(*std::get<std::shared_ptr<const Pod>>((*again)[0])), claims);
}

TEST(PodResourceClaimsTest, PodsWithoutRawOrClaims) {
  Pod pod;
  EXPECT_TRUE(PodResourceClaimsOf(pod).empty());
  EXPECT_TRUE(PodResourceClaimStatusesOf(pod).empty());
  SetPodResourceClaims(pod, {{"gpu", "my-claim", std::nullopt}});
  SetPodResourceClaimStatuses(pod, {{"gpu", "my-claim"}});
  EXPECT_EQ(PodResourceClaimsOf(pod),
            (std::vector<PodResourceClaim>{{"gpu", "my-claim", std::nullopt}}));
  EXPECT_EQ(PodResourceClaimStatusesOf(pod).size(), 1u);
  EXPECT_EQ((*pod.raw)["kind"], "Pod");
  SetPodResourceClaims(pod, {});
  EXPECT_TRUE(PodResourceClaimsOf(pod).empty());
}

}  // namespace
}  // namespace berth
