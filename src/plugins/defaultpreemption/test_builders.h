// Pod and node builders for this module's tests, with the same spelling as
// testing/builders.h (which does not compile at the moment: PodBuilder::Container shadows the
// Container type inside the class). Switch back to testing/builders.h once it is fixed.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "berth/api/objects.h"
#include "berth/api/quantity.h"
#include "berth/framework/node_info.h"

namespace berth::preemption_testing {

using ReqList = std::initializer_list<std::pair<const char*, const char*>>;

inline ResourceList RL(ReqList items) {
  ResourceList l;
  for (const auto& [k, v] : items) l[k] = Quantity::Parse(v).value();
  return l;
}

class PodBuilder {
 public:
  PodBuilder() { pod_.metadata.namespace_ = "default"; }
  PodBuilder& Name(std::string n) {
    pod_.metadata.name = n;
    if (pod_.metadata.uid.empty()) pod_.metadata.uid = "uid-" + n;
    return *this;
  }
  PodBuilder& Namespace(std::string ns) {
    pod_.metadata.namespace_ = std::move(ns);
    return *this;
  }
  PodBuilder& Label(std::string k, std::string v) {
    pod_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& Node(std::string n) {
    pod_.spec.node_name = std::move(n);
    if (pod_.status.phase.empty()) pod_.status.phase = "Running";
    return *this;
  }
  PodBuilder& Priority(int32_t p) {
    pod_.spec.priority = p;
    return *this;
  }
  PodBuilder& PreemptionPolicy(std::string p) {
    pod_.spec.preemption_policy = std::move(p);
    return *this;
  }
  PodBuilder& StartTime(UnixTime t) {
    pod_.status.start_time = t;
    return *this;
  }
  PodBuilder& Terminating(UnixTime t = 1) {
    pod_.metadata.deletion_timestamp = t;
    return *this;
  }
  PodBuilder& NominatedNodeName(std::string n) {
    pod_.status.nominated_node_name = std::move(n);
    return *this;
  }
  PodBuilder& Req(ReqList requests) {
    berth::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    c.resources.requests = RL(requests);
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  Pod& mutable_pod() { return pod_; }
  std::shared_ptr<const Pod> Obj() const { return std::make_shared<const Pod>(pod_); }

 private:
  Pod pod_;
};

inline PodBuilder MakePod() { return PodBuilder(); }

class NodeBuilder {
 public:
  NodeBuilder& Name(std::string n) {
    node_.metadata.name = n;
    node_.metadata.labels["kubernetes.io/hostname"] = n;
    return *this;
  }
  NodeBuilder& Label(std::string k, std::string v) {
    node_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  NodeBuilder& Capacity(ReqList c) {
    node_.status.allocatable = RL(c);
    if (!node_.status.allocatable.count("pods"))
      node_.status.allocatable["pods"] = Quantity::Parse("110").value();
    node_.status.capacity = node_.status.allocatable;
    return *this;
  }
  std::shared_ptr<const Node> Obj() const { return std::make_shared<const Node>(node_); }

 private:
  Node node_;
};

inline NodeBuilder MakeNode() { return NodeBuilder(); }

}  // namespace berth::preemption_testing
