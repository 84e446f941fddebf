#include "apiserver/protobuf.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <vector>

#include "api/codec.h"
#include "apiserver/base64.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

enum class Kind {
  kString,
  kBytes,  // base64 in JSON
  kInt,    // any varint integer (int32/int64)
  kBool,
  kMessage,      // `sub`
  kInline,       // `sub`, whose fields JSON carries in the enclosing object (Go's inline)
  kMapString,    // map<string, string>
  kMapBytes,     // map<string, bytes>
  kMapQuantity,  // map<string, Quantity>
  kIntOrString,
  kTime,       // meta.v1.Time: seconds
  kMicroTime,  // meta.v1.MicroTime: microseconds
};

struct Schema;
struct Field {
  int number;
  const char* name;
  Kind kind;
  bool repeated = false;
  const Schema* sub = nullptr;
  // Go writes every non-pointer scalar, zero or not; JSON clients omit zeros (omitempty). Zero
  // scalars are dropped unless the field is a pointer or has no omitempty (then zero is data).
  bool keep_zero = false;
};
struct Schema {
  std::vector<Field> fields;
};

constexpr bool kRep = true;

// Field numbers of k8s.io/api and apimachinery's generated.proto.
const Schema kOwnerReference{{{1, "kind", Kind::kString},
                              {3, "name", Kind::kString},
                              {4, "uid", Kind::kString},
                              {5, "apiVersion", Kind::kString},
                              {6, "controller", Kind::kBool, false, nullptr, true},
                              {7, "blockOwnerDeletion", Kind::kBool, false, nullptr, true}}};
const Schema kObjectMeta{{{1, "name", Kind::kString},
                          {2, "generateName", Kind::kString},
                          {3, "namespace", Kind::kString},
                          {5, "uid", Kind::kString},
                          {6, "resourceVersion", Kind::kString},
                          {7, "generation", Kind::kInt},
                          {8, "creationTimestamp", Kind::kTime},
                          {9, "deletionTimestamp", Kind::kTime},
                          {10, "deletionGracePeriodSeconds", Kind::kInt, false, nullptr, true},
                          {11, "labels", Kind::kMapString},
                          {12, "annotations", Kind::kMapString},
                          {13, "ownerReferences", Kind::kMessage, kRep, &kOwnerReference},
                          {14, "finalizers", Kind::kString, kRep}}};
const Schema kObjectReference{{{1, "kind", Kind::kString},
                               {2, "namespace", Kind::kString},
                               {3, "name", Kind::kString},
                               {4, "uid", Kind::kString},
                               {5, "apiVersion", Kind::kString},
                               {6, "resourceVersion", Kind::kString},
                               {7, "fieldPath", Kind::kString}}};
const Schema kLocalObjectReference{{{1, "name", Kind::kString}}};
const Schema kSelectorRequirement{{{1, "key", Kind::kString},
                                   {2, "operator", Kind::kString},
                                   {3, "values", Kind::kString, kRep}}};
const Schema kLabelSelector{{{1, "matchLabels", Kind::kMapString},
                             {2, "matchExpressions", Kind::kMessage, kRep, &kSelectorRequirement}}};

const Schema kConfigMap{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                         {2, "data", Kind::kMapString},
                         {3, "binaryData", Kind::kMapBytes},
                         {4, "immutable", Kind::kBool, false, nullptr, true}}};
const Schema kSecret{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                      {2, "data", Kind::kMapBytes},
                      {3, "type", Kind::kString},
                      {4, "stringData", Kind::kMapString},
                      {5, "immutable", Kind::kBool, false, nullptr, true}}};
const Schema kNamespaceSpec{{{1, "finalizers", Kind::kString, kRep}}};
const Schema kNamespace{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                         {2, "spec", Kind::kMessage, false, &kNamespaceSpec}}};
const Schema kServiceAccount{
    {{1, "metadata", Kind::kMessage, false, &kObjectMeta},
     {2, "secrets", Kind::kMessage, kRep, &kObjectReference},
     {3, "imagePullSecrets", Kind::kMessage, kRep, &kLocalObjectReference},
     {4, "automountServiceAccountToken", Kind::kBool, false, nullptr, true}}};
const Schema kPriorityClass{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                             {2, "value", Kind::kInt, false, nullptr, true},
                             {3, "globalDefault", Kind::kBool},
                             {4, "description", Kind::kString},
                             {5, "preemptionPolicy", Kind::kString}}};
const Schema kPdbSpec{{{1, "minAvailable", Kind::kIntOrString},
                       {2, "selector", Kind::kMessage, false, &kLabelSelector},
                       {3, "maxUnavailable", Kind::kIntOrString},
                       {4, "unhealthyPodEvictionPolicy", Kind::kString}}};
const Schema kPdb{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                   {2, "spec", Kind::kMessage, false, &kPdbSpec}}};
const Schema kServicePort{{{1, "name", Kind::kString},
                           {2, "protocol", Kind::kString},
                           {3, "port", Kind::kInt, false, nullptr, true},
                           {4, "targetPort", Kind::kIntOrString},
                           {5, "nodePort", Kind::kInt},
                           {6, "appProtocol", Kind::kString}}};
const Schema kServiceSpec{{{1, "ports", Kind::kMessage, kRep, &kServicePort},
                           {2, "selector", Kind::kMapString},
                           {3, "clusterIP", Kind::kString},
                           {4, "type", Kind::kString},
                           {5, "externalIPs", Kind::kString, kRep},
                           {7, "sessionAffinity", Kind::kString},
                           {8, "loadBalancerIP", Kind::kString},
                           {9, "loadBalancerSourceRanges", Kind::kString, kRep},
                           {10, "externalName", Kind::kString},
                           {11, "externalTrafficPolicy", Kind::kString},
                           {12, "healthCheckNodePort", Kind::kInt},
                           {13, "publishNotReadyAddresses", Kind::kBool},
                           {17, "ipFamilyPolicy", Kind::kString},
                           {18, "clusterIPs", Kind::kString, kRep},
                           {19, "ipFamilies", Kind::kString, kRep},
                           {20, "allocateLoadBalancerNodePorts", Kind::kBool},
                           {21, "loadBalancerClass", Kind::kString},
                           {22, "internalTrafficPolicy", Kind::kString}}};
const Schema kService{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                       {2, "spec", Kind::kMessage, false, &kServiceSpec}}};

const Schema kContainerPort{{{1, "name", Kind::kString},
                             {2, "hostPort", Kind::kInt},
                             {3, "containerPort", Kind::kInt, false, nullptr, true},
                             {4, "protocol", Kind::kString},
                             {5, "hostIP", Kind::kString}}};
const Schema kEnvVar{{{1, "name", Kind::kString}, {2, "value", Kind::kString}}};
const Schema kResources{{{1, "limits", Kind::kMapQuantity}, {2, "requests", Kind::kMapQuantity}}};
const Schema kContainer{{{1, "name", Kind::kString},
                         {2, "image", Kind::kString},
                         {3, "command", Kind::kString, kRep},
                         {4, "args", Kind::kString, kRep},
                         {5, "workingDir", Kind::kString},
                         {6, "ports", Kind::kMessage, kRep, &kContainerPort},
                         {7, "env", Kind::kMessage, kRep, &kEnvVar},
                         {8, "resources", Kind::kMessage, false, &kResources},
                         {13, "terminationMessagePath", Kind::kString},
                         {14, "imagePullPolicy", Kind::kString},
                         {16, "stdin", Kind::kBool},
                         {17, "stdinOnce", Kind::kBool},
                         {18, "tty", Kind::kBool},
                         {20, "terminationMessagePolicy", Kind::kString}}};
const Schema kToleration{{{1, "key", Kind::kString},
                          {2, "operator", Kind::kString},
                          {3, "value", Kind::kString},
                          {4, "effect", Kind::kString},
                          {5, "tolerationSeconds", Kind::kInt, false, nullptr, true}}};
const Schema kPodSpec{{{2, "containers", Kind::kMessage, kRep, &kContainer},
                       {3, "restartPolicy", Kind::kString},
                       {4, "terminationGracePeriodSeconds", Kind::kInt, false, nullptr, true},
                       {5, "activeDeadlineSeconds", Kind::kInt, false, nullptr, true},
                       {6, "dnsPolicy", Kind::kString},
                       {7, "nodeSelector", Kind::kMapString},
                       {8, "serviceAccountName", Kind::kString},
                       {9, "serviceAccount", Kind::kString},
                       {10, "nodeName", Kind::kString},
                       {11, "hostNetwork", Kind::kBool},
                       {12, "hostPID", Kind::kBool},
                       {13, "hostIPC", Kind::kBool},
                       {15, "imagePullSecrets", Kind::kMessage, kRep, &kLocalObjectReference},
                       {16, "hostname", Kind::kString},
                       {17, "subdomain", Kind::kString},
                       {19, "schedulerName", Kind::kString},
                       {20, "initContainers", Kind::kMessage, kRep, &kContainer},
                       {22, "tolerations", Kind::kMessage, kRep, &kToleration},
                       {24, "priorityClassName", Kind::kString},
                       {25, "priority", Kind::kInt, false, nullptr, true}}};
const Schema kPodTemplateSpec{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                               {2, "spec", Kind::kMessage, false, &kPodSpec}}};
const Schema kPod{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                   {2, "spec", Kind::kMessage, false, &kPodSpec}}};
const Schema kRollingUpdate{
    {{1, "maxUnavailable", Kind::kIntOrString}, {2, "maxSurge", Kind::kIntOrString}}};
const Schema kStrategy{
    {{1, "type", Kind::kString}, {2, "rollingUpdate", Kind::kMessage, false, &kRollingUpdate}}};
const Schema kDeploymentSpec{{{1, "replicas", Kind::kInt, false, nullptr, true},
                              {2, "selector", Kind::kMessage, false, &kLabelSelector},
                              {3, "template", Kind::kMessage, false, &kPodTemplateSpec},
                              {4, "strategy", Kind::kMessage, false, &kStrategy},
                              {5, "minReadySeconds", Kind::kInt},
                              {6, "revisionHistoryLimit", Kind::kInt, false, nullptr, true},
                              {7, "paused", Kind::kBool},
                              {9, "progressDeadlineSeconds", Kind::kInt, false, nullptr, true}}};
const Schema kDeployment{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                          {2, "spec", Kind::kMessage, false, &kDeploymentSpec}}};
const Schema kServiceBackendPort{{{1, "name", Kind::kString}, {2, "number", Kind::kInt}}};
const Schema kIngressServiceBackend{
    {{1, "name", Kind::kString}, {2, "port", Kind::kMessage, false, &kServiceBackendPort}}};
const Schema kTypedLocalObjectReference{
    {{1, "apiGroup", Kind::kString}, {2, "kind", Kind::kString}, {3, "name", Kind::kString}}};
const Schema kIngressBackend{{{3, "resource", Kind::kMessage, false, &kTypedLocalObjectReference},
                              {4, "service", Kind::kMessage, false, &kIngressServiceBackend}}};
const Schema kHttpIngressPath{{{1, "path", Kind::kString},
                               {2, "backend", Kind::kMessage, false, &kIngressBackend},
                               {3, "pathType", Kind::kString}}};
const Schema kHttpIngressRuleValue{{{1, "paths", Kind::kMessage, kRep, &kHttpIngressPath}}};
const Schema kIngressRuleValue{{{1, "http", Kind::kMessage, false, &kHttpIngressRuleValue}}};
const Schema kIngressRule{{{1, "host", Kind::kString},
                           {2, "ingressRuleValue", Kind::kInline, false, &kIngressRuleValue}}};
const Schema kIngressTls{{{1, "hosts", Kind::kString, kRep}, {2, "secretName", Kind::kString}}};
const Schema kIngressSpec{{{1, "defaultBackend", Kind::kMessage, false, &kIngressBackend},
                           {2, "tls", Kind::kMessage, kRep, &kIngressTls},
                           {3, "rules", Kind::kMessage, kRep, &kIngressRule},
                           {4, "ingressClassName", Kind::kString}}};
const Schema kIngress{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                       {2, "spec", Kind::kMessage, false, &kIngressSpec}}};
const Schema kJobSpec{{{1, "parallelism", Kind::kInt, false, nullptr, true},
                       {2, "completions", Kind::kInt, false, nullptr, true},
                       {3, "activeDeadlineSeconds", Kind::kInt, false, nullptr, true},
                       {4, "selector", Kind::kMessage, false, &kLabelSelector},
                       {5, "manualSelector", Kind::kBool},
                       {6, "template", Kind::kMessage, false, &kPodTemplateSpec},
                       {7, "backoffLimit", Kind::kInt, false, nullptr, true},
                       {8, "ttlSecondsAfterFinished", Kind::kInt, false, nullptr, true},
                       {9, "completionMode", Kind::kString},
                       {10, "suspend", Kind::kBool}}};
const Schema kJob{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                   {2, "spec", Kind::kMessage, false, &kJobSpec}}};
const Schema kJobTemplateSpec{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                               {2, "spec", Kind::kMessage, false, &kJobSpec}}};
const Schema kCronJobSpec{{{1, "schedule", Kind::kString},
                           {2, "startingDeadlineSeconds", Kind::kInt, false, nullptr, true},
                           {3, "concurrencyPolicy", Kind::kString},
                           {4, "suspend", Kind::kBool},
                           {5, "jobTemplate", Kind::kMessage, false, &kJobTemplateSpec},
                           {6, "successfulJobsHistoryLimit", Kind::kInt, false, nullptr, true},
                           {7, "failedJobsHistoryLimit", Kind::kInt, false, nullptr, true},
                           {8, "timeZone", Kind::kString}}};
const Schema kCronJob{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                       {2, "spec", Kind::kMessage, false, &kCronJobSpec}}};

const Schema kBinding{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                       {2, "target", Kind::kMessage, false, &kObjectReference}}};
const Schema kEventSource{{{1, "component", Kind::kString}, {2, "host", Kind::kString}}};
const Schema kEventSeries{
    {{1, "count", Kind::kInt, false, nullptr, true}, {2, "lastObservedTime", Kind::kMicroTime}}};
const Schema kEventsEvent{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                           {2, "eventTime", Kind::kMicroTime},
                           {3, "series", Kind::kMessage, false, &kEventSeries},
                           {4, "reportingController", Kind::kString},
                           {5, "reportingInstance", Kind::kString},
                           {6, "action", Kind::kString},
                           {7, "reason", Kind::kString},
                           {8, "regarding", Kind::kMessage, false, &kObjectReference},
                           {9, "related", Kind::kMessage, false, &kObjectReference},
                           {10, "note", Kind::kString},
                           {11, "type", Kind::kString},
                           {12, "deprecatedSource", Kind::kMessage, false, &kEventSource},
                           {13, "deprecatedFirstTimestamp", Kind::kTime},
                           {14, "deprecatedLastTimestamp", Kind::kTime},
                           {15, "deprecatedCount", Kind::kInt}}};
const Schema kCoreEventSeries{
    {{1, "count", Kind::kInt, false, nullptr, true}, {2, "lastObservedTime", Kind::kMicroTime}}};
const Schema kCoreEvent{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                         {2, "involvedObject", Kind::kMessage, false, &kObjectReference},
                         {3, "reason", Kind::kString},
                         {4, "message", Kind::kString},
                         {5, "source", Kind::kMessage, false, &kEventSource},
                         {6, "firstTimestamp", Kind::kTime},
                         {7, "lastTimestamp", Kind::kTime},
                         {8, "count", Kind::kInt},
                         {9, "type", Kind::kString},
                         {10, "eventTime", Kind::kMicroTime},
                         {11, "series", Kind::kMessage, false, &kCoreEventSeries},
                         {12, "action", Kind::kString},
                         {13, "related", Kind::kMessage, false, &kObjectReference},
                         {14, "reportingComponent", Kind::kString},
                         {15, "reportingInstance", Kind::kString}}};
const Schema kLeaseSpec{{{1, "holderIdentity", Kind::kString},
                         {2, "leaseDurationSeconds", Kind::kInt, false, nullptr, true},
                         {3, "acquireTime", Kind::kMicroTime},
                         {4, "renewTime", Kind::kMicroTime},
                         {5, "leaseTransitions", Kind::kInt, false, nullptr, true},
                         {6, "strategy", Kind::kString},
                         {7, "preferredHolder", Kind::kString}}};
const Schema kLease{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                     {2, "spec", Kind::kMessage, false, &kLeaseSpec}}};
const Schema kPolicyRule{{{1, "verbs", Kind::kString, kRep},
                          {2, "apiGroups", Kind::kString, kRep},
                          {3, "resources", Kind::kString, kRep},
                          {4, "resourceNames", Kind::kString, kRep},
                          {5, "nonResourceURLs", Kind::kString, kRep}}};
const Schema kRole{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                    {2, "rules", Kind::kMessage, kRep, &kPolicyRule}}};
const Schema kSubject{{{1, "kind", Kind::kString},
                       {2, "apiGroup", Kind::kString},
                       {3, "name", Kind::kString},
                       {4, "namespace", Kind::kString}}};
const Schema kRoleRef{
    {{1, "apiGroup", Kind::kString}, {2, "kind", Kind::kString}, {3, "name", Kind::kString}}};
const Schema kRoleBinding{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                           {2, "subjects", Kind::kMessage, kRep, &kSubject},
                           {3, "roleRef", Kind::kMessage, false, &kRoleRef}}};

const Schema kScopedResourceSelectorRequirement{{{1, "scopeName", Kind::kString},
                                                 {2, "operator", Kind::kString},
                                                 {3, "values", Kind::kString, kRep}}};
const Schema kScopeSelector{
    {{1, "matchExpressions", Kind::kMessage, kRep, &kScopedResourceSelectorRequirement}}};
const Schema kResourceQuotaSpec{{{1, "hard", Kind::kMapQuantity},
                                 {2, "scopes", Kind::kString, kRep},
                                 {3, "scopeSelector", Kind::kMessage, false, &kScopeSelector}}};
const Schema kResourceQuota{{{1, "metadata", Kind::kMessage, false, &kObjectMeta},
                             {2, "spec", Kind::kMessage, false, &kResourceQuotaSpec}}};

// The review kinds a client sends about itself (`kubectl auth can-i`, `kubectl auth whoami`);
// their statuses are the server's to fill in.
const Schema kResourceAttributes{{{1, "namespace", Kind::kString},
                                  {2, "verb", Kind::kString},
                                  {3, "group", Kind::kString},
                                  {4, "version", Kind::kString},
                                  {5, "resource", Kind::kString},
                                  {6, "subresource", Kind::kString},
                                  {7, "name", Kind::kString}}};
const Schema kNonResourceAttributes{{{1, "path", Kind::kString}, {2, "verb", Kind::kString}}};
const Schema kSelfSubjectAccessReviewSpec{
    {{1, "resourceAttributes", Kind::kMessage, false, &kResourceAttributes},
     {2, "nonResourceAttributes", Kind::kMessage, false, &kNonResourceAttributes}}};
const Schema kSelfSubjectAccessReview{
    {{1, "metadata", Kind::kMessage, false, &kObjectMeta},
     {2, "spec", Kind::kMessage, false, &kSelfSubjectAccessReviewSpec}}};
const Schema kSelfSubjectRulesReviewSpec{{{1, "namespace", Kind::kString}}};
const Schema kSelfSubjectRulesReview{
    {{1, "metadata", Kind::kMessage, false, &kObjectMeta},
     {2, "spec", Kind::kMessage, false, &kSelfSubjectRulesReviewSpec}}};
const Schema kSelfSubjectReview{{{1, "metadata", Kind::kMessage, false, &kObjectMeta}}};

const Schema* SchemaFor(std::string_view api_version, std::string_view kind) {
  static const std::map<std::pair<std::string_view, std::string_view>, const Schema*> kKinds = {
      {{"v1", "ConfigMap"}, &kConfigMap},
      {{"v1", "Secret"}, &kSecret},
      {{"v1", "Namespace"}, &kNamespace},
      {{"v1", "ServiceAccount"}, &kServiceAccount},
      {{"v1", "Service"}, &kService},
      {{"v1", "Pod"}, &kPod},
      {{"v1", "Binding"}, &kBinding},
      {{"v1", "Event"}, &kCoreEvent},
      {{"v1", "ResourceQuota"}, &kResourceQuota},
      {{"events.k8s.io/v1", "Event"}, &kEventsEvent},
      {{"scheduling.k8s.io/v1", "PriorityClass"}, &kPriorityClass},
      {{"policy/v1", "PodDisruptionBudget"}, &kPdb},
      {{"apps/v1", "Deployment"}, &kDeployment},
      {{"batch/v1", "Job"}, &kJob},
      {{"networking.k8s.io/v1", "Ingress"}, &kIngress},
      {{"batch/v1", "CronJob"}, &kCronJob},
      {{"coordination.k8s.io/v1", "Lease"}, &kLease},
      {{"rbac.authorization.k8s.io/v1", "Role"}, &kRole},
      {{"rbac.authorization.k8s.io/v1", "ClusterRole"}, &kRole},
      {{"rbac.authorization.k8s.io/v1", "RoleBinding"}, &kRoleBinding},
      {{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"}, &kRoleBinding},
      {{"authorization.k8s.io/v1", "SelfSubjectAccessReview"}, &kSelfSubjectAccessReview},
      {{"authorization.k8s.io/v1", "SelfSubjectRulesReview"}, &kSelfSubjectRulesReview},
      {{"authentication.k8s.io/v1", "SelfSubjectReview"}, &kSelfSubjectReview},
  };
  auto it = kKinds.find({api_version, kind});
  return it == kKinds.end() ? nullptr : it->second;
}

// Protobuf wire format reading.
class Reader {
 public:
  explicit Reader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}
  bool done() const { return p_ >= end_; }
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const auto b = static_cast<uint8_t>(*p_++);
      *v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > uint64_t(end_ - p_)) return false;
    *out = std::string_view(p_, n);
    p_ += n;
    return true;
  }
  bool Skip(int wire_type) {
    uint64_t v;
    std::string_view s;
    switch (wire_type) {
      case 0:
        return Varint(&v);
      case 1:
        if (end_ - p_ < 8) return false;
        p_ += 8;
        return true;
      case 2:
        return Bytes(&s);
      case 5:
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
      default:
        return false;
    }
  }

 private:
  const char* p_;
  const char* end_;
};

ApiError Malformed(std::string_view where) {
  return Error{fmt::format("the protobuf body could not be decoded: {}", where),
               ErrorCode::kBadRequest};
}

Result<json> DecodeMessage(std::string_view data, const Schema& schema, std::string_view where);

// A (key, value) map entry: key = 1, value = 2.
Result<std::pair<std::string, std::string_view>> MapEntry(std::string_view data,
                                                          std::string_view where) {
  Reader r(data);
  std::string key;
  std::string_view value;
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed(where);
    const int num = static_cast<int>(tag >> 3), wt = static_cast<int>(tag & 7);
    std::string_view s;
    if ((num == 1 || num == 2) && wt == 2) {
      if (!r.Bytes(&s)) return Malformed(where);
      if (num == 1) key = std::string(s);
      if (num == 2) value = s;
    } else if (!r.Skip(wt)) {
      return Malformed(where);
    }
  }
  return std::make_pair(std::move(key), value);
}

// A message holding one string in field 1 (Quantity) or an IntOrString / Time / MicroTime.
Result<json> Special(std::string_view data, Kind kind, std::string_view where) {
  Reader r(data);
  int64_t i1 = 0, i2 = 0, i3_unused = 0;
  std::string s1, s3;
  while (!r.done()) {
    uint64_t tag, v;
    if (!r.Varint(&tag)) return Malformed(where);
    const int num = static_cast<int>(tag >> 3), wt = static_cast<int>(tag & 7);
    std::string_view s;
    if (wt == 0) {
      if (!r.Varint(&v)) return Malformed(where);
      if (num == 1) i1 = static_cast<int64_t>(v);
      if (num == 2) i2 = static_cast<int64_t>(v);
      if (num == 3) i3_unused = static_cast<int64_t>(v);
    } else if (wt == 2) {
      if (!r.Bytes(&s)) return Malformed(where);
      if (num == 1) s1 = std::string(s);
      if (num == 3) s3 = std::string(s);
    } else if (!r.Skip(wt)) {
      return Malformed(where);
    }
  }
  (void)i3_unused;
  switch (kind) {
    case Kind::kIntOrString:
      return i1 == 1 ? json(s3) : json(static_cast<int32_t>(i2));
    case Kind::kTime:
      if (i1 == 0) return json();
      return json(FormatTimestamp(i1));
    case Kind::kMicroTime: {
      if (i1 == 0 && i2 == 0) return json();
      std::string t = FormatTimestamp(i1);  // ...Z
      if (!t.empty() && t.back() == 'Z') t.pop_back();
      return json(fmt::format("{}.{:06d}Z", t, (i2 / 1000) % 1000000));
    }
    default:
      return json(s1);  // Quantity
  }
}

Result<json> DecodeMessage(std::string_view data, const Schema& schema, std::string_view where) {
  json out = json::object();
  Reader r(data);
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed(where);
    const int num = static_cast<int>(tag >> 3), wt = static_cast<int>(tag & 7);
    const Field* f = nullptr;
    for (const Field& candidate : schema.fields)
      if (candidate.number == num) f = &candidate;
    if (!f) {
      if (!r.Skip(wt)) return Malformed(where);
      continue;
    }
    const std::string path = fmt::format("{}.{}", where, f->name);
    json value;
    if (wt == 0) {
      uint64_t v;
      if (!r.Varint(&v)) return Malformed(path);
      if (v == 0 && !f->keep_zero && !f->repeated) continue;
      if (f->kind == Kind::kBool) {
        value = v != 0;
      } else {
        value = static_cast<int64_t>(v);
      }
    } else if (wt == 2) {
      std::string_view s;
      if (!r.Bytes(&s)) return Malformed(path);
      switch (f->kind) {
        case Kind::kString:
          if (s.empty() && !f->repeated) continue;
          value = std::string(s);
          break;
        case Kind::kBytes:
          value = Base64(s);
          break;
        case Kind::kMessage: {
          BERTH_TRY_ASSIGN(m, DecodeMessage(s, *f->sub, path));
          value = std::move(m);
          break;
        }
        case Kind::kInline: {
          BERTH_TRY_ASSIGN(m, DecodeMessage(s, *f->sub, where));
          for (auto it = m.begin(); it != m.end(); ++it) out[it.key()] = std::move(it.value());
          continue;
        }
        case Kind::kMapString:
        case Kind::kMapBytes:
        case Kind::kMapQuantity: {
          BERTH_TRY_ASSIGN(entry, MapEntry(s, path));
          json& map = out[f->name];
          if (!map.is_object()) map = json::object();
          if (f->kind == Kind::kMapString) {
            map[entry.first] = std::string(entry.second);
          } else if (f->kind == Kind::kMapBytes) {
            map[entry.first] = Base64(entry.second);
          } else {
            BERTH_TRY_ASSIGN(q, Special(entry.second, Kind::kString, path));
            map[entry.first] = std::move(q);
          }
          continue;
        }
        case Kind::kIntOrString:
        case Kind::kTime:
        case Kind::kMicroTime: {
          BERTH_TRY_ASSIGN(sp, Special(s, f->kind, path));
          if (sp.is_null()) continue;  // a zero time: absent
          value = std::move(sp);
          break;
        }
        default:
          return Malformed(path);
      }
    } else {
      if (!r.Skip(wt)) return Malformed(path);
      continue;
    }
    if (f->repeated) {
      json& list = out[f->name];
      if (!list.is_array()) list = json::array();
      list.push_back(std::move(value));
    } else {
      out[f->name] = std::move(value);
    }
  }
  return out;
}

}  // namespace

Result<json> DecodeProtobufObject(std::string_view body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, 4) != kMagic) return Malformed("missing the k8s protobuf envelope");
  Reader r(body.substr(4));
  std::string api_version, kind;
  std::string_view raw;
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed("envelope");
    const int num = static_cast<int>(tag >> 3), wt = static_cast<int>(tag & 7);
    std::string_view s;
    if (num == 1 && wt == 2) {
      if (!r.Bytes(&s)) return Malformed("envelope typeMeta");
      Reader tm(s);
      while (!tm.done()) {
        uint64_t t;
        std::string_view v;
        if (!tm.Varint(&t) || (t & 7) != 2 || !tm.Bytes(&v)) return Malformed("typeMeta");
        if ((t >> 3) == 1) api_version = std::string(v);
        if ((t >> 3) == 2) kind = std::string(v);
      }
    } else if (num == 2 && wt == 2) {
      if (!r.Bytes(&raw)) return Malformed("envelope raw");
    } else if (!r.Skip(wt)) {
      return Malformed("envelope");
    }
  }
  const Schema* schema = SchemaFor(api_version, kind);
  if (!schema) {
    return Error{fmt::format("the body of the request was in an unknown format - protobuf is "
                             "accepted for a limited set of kinds, not {} {}; send "
                             "application/json",
                             api_version, kind),
                 ErrorCode::kUnsupportedMediaType};
  }
  BERTH_TRY_ASSIGN(obj, DecodeMessage(raw, *schema, kind));
  obj["apiVersion"] = api_version;
  obj["kind"] = kind;
  return obj;
}

}  // namespace berth::apiserver
