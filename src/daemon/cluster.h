// `berth cluster`: the simulated part of a cluster against any API server (KWOK's job). It
// creates N nodes of a given shape, runs the simulated kubelets of the nodes annotated
// berth.dev/simulated-kubelet "true" (those it created, and any other so annotated: nodes with
// a real kubelet are left alone) and the controllers of `berth up`. The scheduler is not
// included: run `berth scheduler` (or kube-scheduler) against the same server.
//
// Also `berth node stop|start NAME`: sets or removes the annotation the simulated kubelets
// read as "this machine is down" (kubelet::kStoppedAnnotation).
#pragma once

#include <string>
#include <vector>

#include "berth/api/result.h"
#include "client/rest_client.h"
#include "daemon/cluster_runtime.h"
#include "daemon/demo_nodes.h"

namespace berth::daemon {

struct ClusterOptions {
  std::string kubeconfig;  // required
  int nodes = 3;
  NodeShape shape = [] {
    NodeShape s;
    s.name_prefix = "berth-node";
    return s;
  }();
  RuntimeOptions runtime = [] {
    RuntimeOptions r;
    r.all_nodes = false;
    r.log_prefix = "berth cluster";
    return r;
  }();
  bool no_kubelets = false;
};

// Creates the nodes that do not exist yet (AlreadyExists is fine: a restart).
VoidResult CreateClusterNodes(client::RestClient& rest, const ClusterOptions& options);

// Runs until SIGINT/SIGTERM; returns the process exit code.
int RunCluster(const ClusterOptions& options);

// Stops (`stopped`) or starts the simulated kubelet of node `name`.
VoidResult SetNodeStopped(client::RestClient& rest, const std::string& name, bool stopped);

// `berth node stop|start NAME...` against `kubeconfig` (the data directory's when empty).
int RunNodeCommand(const std::string& kubeconfig, const std::string& data_dir,
                   const std::vector<std::string>& names, bool stop);

}  // namespace berth::daemon
