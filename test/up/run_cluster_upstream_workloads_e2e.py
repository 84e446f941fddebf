#!/usr/bin/env python3
"""Berth's controllers, simulated kubelets (`berth cluster`) and `berth scheduler` against a real
kube-apiserver v1.23 and etcd (../shared/upstream/cluster.sh), checked as an operator would with
kubectl and the official Python client.

Usage: run_cluster_upstream_workloads_e2e.py BERTH [CHECK ...]

Prints "SKIP ..." and exits 0 when the upstream binaries are absent (as
run_cluster_upstream_e2e.py, whose set-up it shares). Checks, in order (one line each):

* the nodes are Ready and `berth scheduler` (leader election on) holds its Lease;
* deployment: `kubectl rollout status`, `kubectl set image` (rolling update), `kubectl rollout
  undo`; the Python client reads the Deployment's status;
* job: a Job's pods finish and `kubectl wait --for=condition=complete` returns;
* daemonset: one pod per node, and one more on a node added later;
* statefulset: volumeClaimTemplates' claims get the default StorageClass `berth cluster`
  creates, are provisioned and bound, and the pods run;
* gc: deleting a Deployment removes its ReplicaSets and pods; `kubectl delete namespace`
  removes the namespace and what is in it;
* drain: `kubectl drain` a node under a PodDisruptionBudget (evictions wait for the
  disruption controller's status) and the pods run elsewhere;
* stopped-node: `berth node stop` a node: it goes Unknown, its pods are evicted and replaced;
* cronjob: a CronJob made at the start has run a Job by the end;
* pagination: 700 ConfigMaps whose owner does not exist, made before Berth starts (its
  garbage collector lists them in two pages), are collected;
* quiet: in kube-apiserver's audit log, no request of Berth's keeps failing with 404 (an
  unserved API is asked again with backoff), and no log line repeats in a loop.
Prints "N passed, M failed" and the time the checks took.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_cluster_upstream_e2e import (BIN, KUBECTL, SCRIPTS, free_port,  # noqa: E402
                                      stop_processes, wait_for)

NODES = ["berth-node-001", "berth-node-002", "berth-node-003"]
GRACE = "8s"  # --node-monitor-grace-period
UNREACHABLE = "node.kubernetes.io/unreachable"
PYTHON = "/usr/bin/python3"  # python3-kubernetes


class Fail(Exception):
    pass


class Env:
    def __init__(self, berth, work, kubeconfig):
        self.berth, self.work, self.kubeconfig = berth, work, kubeconfig

    def kubectl(self, args, stdin=None, check=True, timeout=120):
        p = subprocess.run([KUBECTL, "--kubeconfig", self.kubeconfig] + args, input=stdin,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise Fail("kubectl %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout

    def apply(self, obj):
        self.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj))

    def get(self, kind, name=None, ns="default", selector=None):
        args = ["get", kind] + ([name] if name else []) + ["-n", ns, "-o", "json"]
        if selector:
            args += ["-l", selector]
        return json.loads(self.kubectl(args))

    def pods(self, selector, ns="default"):
        return self.get("pods", ns=ns, selector=selector)["items"]

    def exists(self, kind, name, ns="default"):
        p = subprocess.run([KUBECTL, "--kubeconfig", self.kubeconfig, "get", kind, name, "-n", ns],
                           capture_output=True, text=True, timeout=60)
        return p.returncode == 0


def live(pods):
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def running(pods):
    return [p for p in live(pods) if p["status"].get("phase") == "Running"
            and p["spec"].get("nodeName")]


def condition(obj, kind):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c["type"] == kind:
            return c["status"]
    return ""


def template(app, image="nginx:1.0", tolerate=None, annotations=None):
    spec = {"containers": [{"name": "c", "image": image,
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
    if tolerate is not None:
        # The DefaultTolerationSeconds admission would add 300 s; a short one shows eviction.
        spec["tolerations"] = [{"key": k, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": tolerate}
                               for k in (UNREACHABLE, "node.kubernetes.io/not-ready")]
    meta = {"labels": {"app": app}}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


def deployment(name, replicas, image="nginx:1.0", ns="default", tolerate=None):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "template": template(name, image, tolerate)}}


def images(env, app):
    return sorted({p["spec"]["containers"][0]["image"] for p in live(env.pods("app=" + app))})


def check_deployment(env):
    env.apply(deployment("web", 3))
    env.kubectl(["rollout", "status", "deployment/web", "--timeout=120s"])
    if len(running(env.pods("app=web"))) != 3:
        raise Fail("rollout status returned without 3 Running pods")
    env.kubectl(["set", "image", "deployment/web", "c=nginx:2.0"])
    env.kubectl(["rollout", "status", "deployment/web", "--timeout=120s"])
    wait_for("pods of nginx:2.0 only", lambda: images(env, "web") == ["nginx:2.0"], 60)
    rs = env.get("replicasets", selector="app=web")["items"]
    if len(rs) != 2:
        raise Fail("%d ReplicaSets after an update, want 2" % len(rs))
    env.kubectl(["rollout", "undo", "deployment/web"])
    env.kubectl(["rollout", "status", "deployment/web", "--timeout=120s"])
    wait_for("pods of nginx:1.0 only", lambda: images(env, "web") == ["nginx:1.0"], 60)
    history = env.kubectl(["rollout", "history", "deployment/web"])
    if "3" not in history.split():
        raise Fail("rollout history has no revision 3: %s" % history)
    # The official Python client reads the status as a user's script would.
    script = (
        "import kubernetes, json, sys\n"
        "kubernetes.config.load_kube_config(sys.argv[1])\n"
        "d = kubernetes.client.AppsV1Api().read_namespaced_deployment_status('web', 'default')\n"
        "print(json.dumps({'replicas': d.status.replicas, 'ready': d.status.ready_replicas,\n"
        "  'available': d.status.available_replicas, 'updated': d.status.updated_replicas,\n"
        "  'observed': d.status.observed_generation, 'generation': d.metadata.generation,\n"
        "  'conditions': {c.type: c.status for c in d.status.conditions}}))\n")
    p = subprocess.run([PYTHON, "-c", script, env.kubeconfig], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise Fail("python client: %s" % p.stderr.strip()[-800:])
    s = json.loads(p.stdout)
    want = {"replicas": 3, "ready": 3, "available": 3, "updated": 3}
    if any(s[k] != v for k, v in want.items()) or s["observed"] != s["generation"] or \
            s["conditions"].get("Available") != "True" or \
            s["conditions"].get("Progressing") != "True":
        raise Fail("python client read %s" % s)


def check_job(env):
    env.apply({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "pi", "namespace": "default"},
               "spec": {"completions": 3, "parallelism": 2, "backoffLimit": 2,
                        "template": dict(template("pi", "perl", annotations={
                            "berth.dev/run-seconds": "1"}), spec=dict(
                            template("pi", "perl")["spec"], restartPolicy="Never"))}})
    env.kubectl(["wait", "--for=condition=complete", "job/pi", "--timeout=120s"])
    job = env.get("job", "pi")
    if job["status"].get("succeeded") != 3:
        raise Fail("job status %s" % job["status"])


def ds_pods_by_node(env):
    return {p["spec"]["nodeName"] for p in running(env.pods("app=agent"))}


def check_daemonset(env):
    env.apply({"apiVersion": "apps/v1", "kind": "DaemonSet",
               "metadata": {"name": "agent", "namespace": "default"},
               "spec": {"selector": {"matchLabels": {"app": "agent"}},
                        "template": template("agent", "agent:1")}})
    wait_for("a DaemonSet pod on each node", lambda: ds_pods_by_node(env) == set(NODES), 90)
    # A node added by hand, annotated for a simulated kubelet: it gets a pod too.
    env.apply({"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": "extra-node",
                            "labels": {"kubernetes.io/hostname": "extra-node"},
                            "annotations": {"berth.dev/simulated-kubelet": "true"}}})
    wait_for("extra-node Ready",
             lambda: condition(env.get("node", "extra-node"), "Ready") == "True", 60)
    wait_for("a DaemonSet pod on the added node",
             lambda: ds_pods_by_node(env) == set(NODES + ["extra-node"]), 90)
    wait_for("DaemonSet status 4 ready", lambda: env.get("daemonset", "agent")["status"].get(
        "numberReady") == 4, 60)


def check_statefulset(env):
    classes = env.get("storageclasses")["items"]
    default = [c["metadata"]["name"] for c in classes if c["metadata"].get("annotations", {}).get(
        "storageclass.kubernetes.io/is-default-class") == "true"]
    if not default:
        raise Fail("no default StorageClass: %s" % [c["metadata"]["name"] for c in classes])
    env.apply({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "db", "namespace": "default"},
               "spec": {"replicas": 2, "serviceName": "db",
                        "selector": {"matchLabels": {"app": "db"}},
                        "template": template("db", "postgres"),
                        "volumeClaimTemplates": [{
                            "metadata": {"name": "data"},
                            "spec": {"accessModes": ["ReadWriteOnce"],
                                     "resources": {"requests": {"storage": "1Gi"}}}}]}})
    wait_for("2 StatefulSet pods Running",
             lambda: sorted(p["metadata"]["name"] for p in running(env.pods("app=db")))
             == ["db-0", "db-1"], 120)
    for name in ("data-db-0", "data-db-1"):
        pvc = env.get("pvc", name)
        if pvc["status"].get("phase") != "Bound" or pvc["spec"].get("storageClassName") != \
                default[0]:
            raise Fail("claim %s: %s, class %s" % (name, pvc["status"],
                                                    pvc["spec"].get("storageClassName")))
        pv = env.get("pv", pvc["spec"]["volumeName"])
        if pv["status"].get("phase") != "Bound":
            raise Fail("volume of %s: %s" % (name, pv["status"]))
    env.kubectl(["delete", "statefulset", "db", "--wait=true", "--timeout=90s"])
    wait_for("StatefulSet pods gone", lambda: not env.pods("app=db"), 90)


def check_gc(env):
    env.kubectl(["delete", "deployment", "web"])
    wait_for("web's ReplicaSets and pods collected",
             lambda: not env.get("replicasets", selector="app=web")["items"]
             and not env.pods("app=web"), 90)
    env.kubectl(["create", "namespace", "team"])
    env.apply(deployment("api", 2, ns="team"))
    env.kubectl(["create", "configmap", "settings", "-n", "team", "--from-literal=a=b"])
    wait_for("team's pods Running", lambda: len(running(env.pods("app=api", ns="team"))) == 2, 90)
    env.kubectl(["delete", "namespace", "team", "--wait=true", "--timeout=120s"], timeout=150)
    if env.exists("namespace", "team", ns="default"):
        raise Fail("namespace team still there")


def check_drain(env):
    env.apply(deployment("guarded", 3))
    env.apply({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
               "metadata": {"name": "guarded", "namespace": "default"},
               "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "guarded"}}}})
    wait_for("guarded's pods Running", lambda: len(running(env.pods("app=guarded"))) == 3, 90)
    wait_for("the PDB allows 1 disruption", lambda: env.get("pdb", "guarded")["status"].get(
        "disruptionsAllowed") == 1, 60)
    node = running(env.pods("app=guarded"))[0]["spec"]["nodeName"]
    env.kubectl(["drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
                 "--timeout=150s"], timeout=180)
    if not env.get("node", node)["spec"].get("unschedulable"):
        raise Fail("%s not cordoned" % node)
    left = [p["metadata"]["name"] for p in live(env.get("pods")["items"])
            if p["spec"].get("nodeName") == node and
            not p["metadata"]["name"].startswith("agent-")]
    if left:
        raise Fail("pods left on drained %s: %s" % (node, left))
    wait_for("guarded runs 3 pods elsewhere",
             lambda: len([p for p in running(env.pods("app=guarded"))
                          if p["spec"]["nodeName"] != node]) == 3, 90)
    env.kubectl(["uncordon", node])
    env.kubectl(["delete", "pdb", "guarded"])


def check_stopped_node(env):
    env.apply(deployment("resilient", 4, tolerate=2))
    wait_for("resilient's pods Running", lambda: len(running(env.pods("app=resilient"))) == 4, 90)
    node = running(env.pods("app=resilient"))[0]["spec"]["nodeName"]
    p = subprocess.run([env.berth, "node", "stop", node, "--kubeconfig", env.kubeconfig],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise Fail("berth node stop: %s" % p.stderr)
    wait_for("%s Ready Unknown" % node,
             lambda: condition(env.get("node", node), "Ready") == "Unknown", 60)
    wait_for("unreachable taint on %s" % node, lambda: UNREACHABLE in {
        t["key"] for t in env.get("node", node)["spec"].get("taints", []) or []}, 30)
    wait_for("4 resilient pods Running off %s" % node,
             lambda: len([q for q in running(env.pods("app=resilient"))
                          if q["spec"]["nodeName"] != node]) == 4, 90)
    p = subprocess.run([env.berth, "node", "start", node, "--kubeconfig", env.kubeconfig],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise Fail("berth node start: %s" % p.stderr)
    wait_for("%s Ready again" % node, lambda: condition(env.get("node", node), "Ready") == "True",
             60)
    # Back, its kubelet finishes the pods deleted while it was down.
    wait_for("evicted pods gone", lambda: len(env.pods("app=resilient")) == 4, 60)


PAGED = 700  # more than one page of the informers' lists (500)


def create_paged(env):
    # Before Berth starts, so its garbage collector's first list of ConfigMaps takes two pages:
    # dependents of an owner that does not exist, each to be collected.
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "no-such-owner",
             "uid": "00000000-0000-0000-0000-000000000001"}
    items = [{"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "paged-%04d" % i, "namespace": "default",
                           "labels": {"berth-e2e": "paged"}, "ownerReferences": [owner]}}
             for i in range(PAGED)]
    env.kubectl(["create", "-f", "-"], stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                         "items": items}), timeout=300)


def check_pagination(env):
    wait_for("%d ConfigMaps of a missing owner collected" % PAGED,
             lambda: not env.get("configmaps", selector="berth-e2e=paged")["items"], 120)


def create_cronjob(env):
    env.apply({"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": "tick", "namespace": "default"},
               "spec": {"schedule": "* * * * *", "successfulJobsHistoryLimit": 1,
                        "jobTemplate": {"spec": {"template": dict(
                            template("tick", "busybox", annotations={
                                "berth.dev/run-seconds": "1"}),
                            spec=dict(template("tick", "busybox")["spec"],
                                      restartPolicy="Never"))}}}})


def check_cronjob(env):
    def fired():
        jobs = [j for j in env.get("jobs")["items"]
                if any(r.get("kind") == "CronJob" and r.get("name") == "tick"
                       for r in j["metadata"].get("ownerReferences", []))]
        return [j for j in jobs if condition(j, "Complete") == "True"]
    wait_for("a Job of CronJob tick Complete", fired, 130)
    cj = env.get("cronjob", "tick")
    if not cj["status"].get("lastScheduleTime") or not cj["status"].get("lastSuccessfulTime"):
        raise Fail("cronjob status %s" % cj["status"])
    env.kubectl(["delete", "cronjob", "tick"])


def berth_errors(env):
    """Berth's failed requests in kube-apiserver's audit log: {(code, verb, path): count} and
    the seconds the log spans."""
    failed = collections.Counter()
    first = last = None
    for line in open(os.path.join(env.work, "audit.log"), errors="replace"):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not event.get("userAgent", "").startswith("berth"):
            continue
        at = event.get("stageTimestamp", "")
        first, last = first or at, at
        code = event.get("responseStatus", {}).get("code", 0)
        if code >= 400:
            path = event.get("requestURI", "").split("?")[0]
            # One entry per collection: names and namespaces vary.
            path = re.sub(r"/namespaces/[^/]+", "/namespaces/NS", path)
            failed[(code, event.get("verb"), path)] += 1
    span = 1.0
    if first and last:
        fmt = "%Y-%m-%dT%H:%M:%S"
        span = max(1.0, time.mktime(time.strptime(last[:19], fmt))
                   - time.mktime(time.strptime(first[:19], fmt)))
    return failed, span


def check_quiet(env):
    failed, span = berth_errors(env)
    for (code, verb, path), n in sorted(failed.items()):
        print("  berth: %d x %s %s -> %d" % (n, verb, path, code), flush=True)
    # An unserved API (resource.k8s.io, PodGroups on 1.23) is asked again with backoff, not in a
    # loop: every Berth client of it together stays under one request a second.
    loops = {"%s %s" % (verb, path): n for (code, verb, path), n in failed.items()
             if code == 404 and n / span > 1.0}
    repeated = {}
    for name in ("cluster.log", "scheduler.log"):
        # The same line over and over (klog's time and thread left out): a retry loop. Lines
        # that differ by object (700 collected ConfigMaps) are not.
        counts = collections.Counter(
            re.sub(r"^[IWEF]\d{4} [\d:.]+\s+\d+ ", "", line.strip())
            for line in open(os.path.join(env.work, name), errors="replace"))
        repeated.update({"%s: %s" % (name, line[:160]): n for line, n in counts.items()
                         if n > 20})
    if loops or repeated:
        raise Fail("404 loops over %.0f s: %s; repeated log lines %s" % (span, loops, repeated))


CHECKS = [("deployment", check_deployment), ("job", check_job), ("daemonset", check_daemonset),
          ("statefulset", check_statefulset), ("gc", check_gc), ("drain", check_drain),
          ("stopped-node", check_stopped_node), ("cronjob", check_cronjob),
          ("pagination", check_pagination),
          ("quiet", check_quiet)]


def run_checks(env, selected):
    passed = failed = 0
    if "cronjob" in selected:
        create_cronjob(env)
    for name, fn in CHECKS:
        if name not in selected:
            continue
        t0 = time.time()
        try:
            fn(env)
            passed += 1
            print("PASS %s (%.1f s)" % (name, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - report every check
            failed += 1
            print("FAIL %s (%.1f s): %s" % (name, time.time() - t0, e), flush=True)
    return passed, failed


def start_berth(env, procs):
    for name, args in (
            ("cluster", ["cluster", "--kubeconfig", env.kubeconfig, "--nodes", "3",
                         "--node-lease-renew-interval", "2s", "--pod-start-delay", "200ms",
                         "--node-monitor-grace-period", GRACE]),
            # With leader election, as deployed: it must take kube-system/kube-scheduler's Lease.
            ("scheduler", ["scheduler", "--kubeconfig", env.kubeconfig, "--secure-port", "0"])):
        log = open(os.path.join(env.work, name + ".log"), "w")
        procs.append((subprocess.Popen([env.berth] + args, stdout=log, stderr=subprocess.STDOUT),
                      log))


def main():
    berth = os.path.abspath(sys.argv[1])
    selected = sys.argv[2:] or [name for name, _ in CHECKS]
    cluster_sh = os.path.join(SCRIPTS, "cluster.sh")
    missing = [p for p in (cluster_sh, os.path.join(BIN, "kube-apiserver"))
               if not os.path.exists(p)]
    if not shutil.which("etcd"):
        missing.append("etcd (Debian package etcd-server)")
    if not os.path.exists(KUBECTL):
        missing.append("kubectl")
    if missing:
        print("SKIP: upstream control plane not available (missing: %s)" % ", ".join(missing))
        return 0
    work = tempfile.mkdtemp(prefix="berth-upstream-workloads-")
    # Every request in an audit log (cluster.sh's flags plus these): the quiet check reads it.
    with open(os.path.join(work, "audit-policy.yaml"), "w") as f:
        f.write("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n"
                "rules:\n- level: Metadata\n")
    env_vars = dict(os.environ, UPSTREAM_BIN=BIN, CLUSTER_DIR=work,
                    CLUSTER_ETCD_PORT=str(free_port()), APISERVER_PORT=str(free_port()),
                    APISERVER_EXTRA="--audit-policy-file %s --audit-log-path %s" % (
                        os.path.join(work, "audit-policy.yaml"), os.path.join(work, "audit.log")))
    env = Env(berth, work, os.path.join(work, "kubeconfig"))
    procs = []
    t0 = time.time()
    passed = failed = 0
    try:
        subprocess.run([cluster_sh, "start"], env=env_vars, check=True, timeout=180)
        if "pagination" in selected:
            create_paged(env)
        start_berth(env, procs)

        def nodes_ready():
            nodes = env.get("nodes")["items"]
            return len([n for n in nodes if condition(n, "Ready") == "True"]) == 3
        wait_for("3 nodes Ready", nodes_ready)
        print("PASS nodes Ready (%.1f s)" % (time.time() - t0), flush=True)
        lease = wait_for("the scheduler's Lease", lambda: env.exists(
            "lease", "kube-scheduler", ns="kube-system") and env.get(
            "lease", "kube-scheduler", ns="kube-system")["spec"].get("holderIdentity"))
        print("PASS scheduler leads (Lease held by %s)" % lease, flush=True)
        passed, failed = run_checks(env, selected)
    except Exception as e:  # noqa: BLE001 - report whatever failed, then the logs
        failed += 1
        print("FAIL: %s" % e)
    finally:
        stop_processes(procs)
        if failed or os.environ.get("KEEP_LOGS"):
            for name in ("cluster.log", "scheduler.log"):
                path = os.path.join(work, name)
                if os.path.exists(path):
                    print("%s (tail):\n%s" % (name, open(path, errors="replace").read()[-4000:]))
        subprocess.run([cluster_sh, "stop"], env=env_vars, timeout=60)
        if os.environ.get("KEEP_WORK"):
            print("work directory kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed in %.0f s" % (passed, failed, time.time() - t0))
    return 0 if failed == 0 and passed else 1


if __name__ == "__main__":
    sys.exit(main())
