// Builders shared by the InterPodAffinity unit tests.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/api/objects.h"
#include "framework/in_memory_cluster.h"

namespace berth::interpodaffinity::test {

inline LabelSelector Expr(std::string key, std::string op, std::vector<std::string> values = {}) {
  LabelSelector s;
  s.match_expressions.push_back({std::move(key), std::move(op), std::move(values)});
  return s;
}

// Adds another expression to a selector (the expressions are ANDed).
inline LabelSelector And(LabelSelector s, std::string key, std::string op,
                         std::vector<std::string> values = {}) {
  s.match_expressions.push_back({std::move(key), std::move(op), std::move(values)});
  return s;
}

inline PodAffinityTerm Term(LabelSelector selector, std::string topology_key,
                            std::vector<std::string> namespaces = {},
                            std::optional<LabelSelector> namespace_selector = std::nullopt) {
  PodAffinityTerm t;
  t.label_selector = std::move(selector);
  t.topology_key = std::move(topology_key);
  t.namespaces = std::move(namespaces);
  t.namespace_selector = std::move(namespace_selector);
  return t;
}

inline PodAffinityTerm In(std::string key, std::vector<std::string> values, std::string topology) {
  return Term(Expr(std::move(key), "In", std::move(values)), std::move(topology));
}
inline PodAffinityTerm NotIn(std::string key, std::vector<std::string> values,
                             std::string topology) {
  return Term(Expr(std::move(key), "NotIn", std::move(values)), std::move(topology));
}
inline PodAffinityTerm Exists(std::string key, std::string topology) {
  return Term(Expr(std::move(key), "Exists"), std::move(topology));
}

// A pod builder with pod (anti-)affinity terms. Pods live in "default" unless told otherwise;
// a pod with a node is running there.
class TestPod {
 public:
  TestPod() { pod_.metadata.namespace_ = "default"; }
  TestPod& Name(std::string n) {
    pod_.metadata.uid = "uid-" + n;
    pod_.metadata.name = std::move(n);
    return *this;
  }
  TestPod& Namespace(std::string ns) {
    pod_.metadata.namespace_ = std::move(ns);
    return *this;
  }
  TestPod& Label(std::string k, std::string v = "") {
    pod_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  TestPod& Node(std::string n) {
    pod_.spec.node_name = std::move(n);
    pod_.status.phase = "Running";
    return *this;
  }
  TestPod& Affinity(PodAffinityTerm t) {
    Aff().pod_affinity->required.push_back(std::move(t));
    return *this;
  }
  TestPod& AntiAffinity(PodAffinityTerm t) {
    Aff().pod_anti_affinity->required.push_back(std::move(t));
    return *this;
  }
  TestPod& PreferredAffinity(int32_t weight, PodAffinityTerm t) {
    Aff().pod_affinity->preferred.push_back({weight, std::move(t)});
    return *this;
  }
  TestPod& PreferredAntiAffinity(int32_t weight, PodAffinityTerm t) {
    Aff().pod_anti_affinity->preferred.push_back({weight, std::move(t)});
    return *this;
  }
  // Replaces the pod's affinity block (for shared fixtures).
  TestPod& WithAffinity(const berth::Affinity& a) {
    pod_.spec.affinity = a;
    return *this;
  }
  std::shared_ptr<const Pod> Obj() const { return std::make_shared<const Pod>(pod_); }

 private:
  berth::Affinity& Aff() {
    auto& a = pod_.spec.affinity;
    if (!a) a.emplace();
    if (!a->pod_affinity) a->pod_affinity.emplace();
    if (!a->pod_anti_affinity) a->pod_anti_affinity.emplace();
    return *a;
  }
  Pod pod_;
};

inline std::shared_ptr<const Node> MakeNode(std::string name,
                                            std::map<std::string, std::string> labels) {
  Node n;
  n.metadata.name = std::move(name);
  for (auto& [k, v] : labels) n.metadata.labels[k] = v;
  return std::make_shared<const Node>(std::move(n));
}

inline Ptr<Namespace> MakeNamespace(std::string name, std::map<std::string, std::string> labels) {
  Namespace ns;
  ns.metadata.name = std::move(name);
  for (auto& [k, v] : labels) ns.metadata.labels[k] = v;
  return std::make_shared<const Namespace>(std::move(ns));
}

// The namespaces kube-scheduler's tests use for namespaceSelector cases.
inline void AddTeamNamespaces(InMemoryCluster& cluster) {
  cluster.AddNamespace(MakeNamespace("subteam1.team1", {{"team", "team1"}}));
  cluster.AddNamespace(MakeNamespace("subteam2.team1", {{"team", "team1"}}));
  cluster.AddNamespace(MakeNamespace("subteam1.team2", {{"team", "team2"}}));
  cluster.AddNamespace(MakeNamespace("subteam2.team2", {{"team", "team2"}}));
}

}  // namespace berth::interpodaffinity::test
