#!/usr/bin/env python3
"""End-to-end tests of the Deployment controller of `berth up`, with the real kubectl and the
official Python client.

Usage: run_deployment_e2e.py BERTH [CHECK ...]

* `kubectl create deployment` makes one ReplicaSet <name>-<pod-template-hash> with the hash in
  its selector, labels and pods; the pods run; status counts, observedGeneration, the
  revision annotation and the Available / Progressing conditions are upstream's, also as the
  Python client reads them;
* `kubectl set image` rolls out within replicas + maxSurge, `rollout history` lists the
  revisions, `rollout undo` goes back (the old revision becomes the newest), `scale`,
  `rollout pause` (no new ReplicaSet while paused) / `resume` / `restart`;
* Recreate scales the old set to zero before the new one gets pods;
* revisionHistoryLimit deletes old ReplicaSets scaled to zero; an orphan ReplicaSet matching
  the selector is adopted; a progress deadline that passes gives ProgressDeadlineExceeded;
* `kill -9` of `berth up` during a rolling update: after a restart the rollout completes and
  the pods never exceed replicas + maxSurge.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, Up, run_against_up, wait_for, run_python_client  # noqa: E402

HASH = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"


def get(up, kind, name):
    rc, out, _ = up.kubectl(["get", kind, name, "-o", "json"], check=False)
    return json.loads(out) if rc == 0 else None


def sets_of(up, app):
    out = up.kubectl(["get", "rs", "-l", "app=" + app, "-o", "json"])[1]
    return {s["metadata"]["name"]: s for s in json.loads(out)["items"]}


def live_pods(up, app):
    out = up.kubectl(["get", "pods", "-l", "app=" + app, "-o", "json"])[1]
    return [p for p in json.loads(out)["items"]
            if not p["metadata"].get("deletionTimestamp")
            and p["status"].get("phase") not in ("Succeeded", "Failed")]


def cond(d, type_):
    for c in d.get("status", {}).get("conditions", []):
        if c["type"] == type_:
            return c
    return {}


def rollout_status(up, name, timeout="60s"):
    up.kubectl(["rollout", "status", "deploy/" + name, "--timeout=" + timeout], timeout=90)


def deployment(name, replicas, surge=1, unavailable=0, min_ready=0, strategy="RollingUpdate",
               image="nginx:1", extra_spec=None):
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "minReadySeconds": min_ready,
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": image}]}}}
    if strategy == "RollingUpdate":
        spec["strategy"] = {"type": strategy, "rollingUpdate": {"maxSurge": surge,
                                                                "maxUnavailable": unavailable}}
    else:
        spec["strategy"] = {"type": strategy}
    spec.update(extra_spec or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def apply(up, obj):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj))


class PodCeiling:
    """Polls the live pods of `app` in the background and records the most seen at once."""

    def __init__(self, up, app):
        self.up, self.app, self.most, self.stop = up, app, 0, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                self.most = max(self.most, len(live_pods(self.up, self.app)))
            except Exception:  # berth up restarting: the next poll counts
                pass
            time.sleep(0.1)

    def done(self):
        self.stop = True
        self.thread.join()
        return self.most


def check_create(up):
    up.kubectl(["create", "deployment", "web", "--image=nginx", "--replicas=3"])
    rollout_status(up, "web")
    sets = sets_of(up, "web")
    if len(sets) != 1:
        raise Fail("want one ReplicaSet, got %s" % list(sets))
    name, rs = next(iter(sets.items()))
    h = rs["metadata"]["labels"].get(HASH)
    if not h or name != "web-" + h or rs["spec"]["selector"]["matchLabels"].get(HASH) != h:
        raise Fail("ReplicaSet name/selector without the hash: %s" % rs["metadata"])
    if rs["metadata"]["annotations"].get(REVISION) != "1" or \
            rs["metadata"]["annotations"].get("deployment.kubernetes.io/desired-replicas") != "3":
        raise Fail("ReplicaSet annotations: %s" % rs["metadata"]["annotations"])
    pods = live_pods(up, "web")
    if len(pods) != 3 or any(p["metadata"]["labels"].get(HASH) != h or
                             p["status"].get("phase") != "Running" for p in pods):
        raise Fail("pods: %s" % [(p["metadata"]["name"], p["status"].get("phase")) for p in pods])
    d = get(up, "deployment", "web")
    st = d["status"]
    for f in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"):
        if st.get(f) != 3:
            raise Fail("status.%s = %r" % (f, st.get(f)))
    if st.get("observedGeneration") != d["metadata"]["generation"] or \
            d["metadata"]["annotations"].get(REVISION) != "1":
        raise Fail("observedGeneration / revision: %s %s" % (st, d["metadata"]))
    if cond(d, "Available").get("reason") != "MinimumReplicasAvailable" or \
            cond(d, "Progressing").get("reason") != "NewReplicaSetAvailable" or \
            cond(d, "Progressing").get("message") != 'ReplicaSet "%s" has successfully progressed.' % name:
        raise Fail("conditions: %s" % st.get("conditions"))


PY_CLIENT = """
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
d = client.AppsV1Api().read_namespaced_deployment_status("web", "default")
conds = {c.type: c.reason for c in d.status.conditions}
print(d.status.ready_replicas, d.status.available_replicas, d.status.updated_replicas,
      conds["Available"], conds["Progressing"])
"""


def check_python_client(up):
    out = run_python_client(up, PY_CLIENT, timeout=60)
    if out.split() != ["3", "3", "3", "MinimumReplicasAvailable", "NewReplicaSetAvailable"]:
        raise Fail("python client: %r" % out)


def check_rollout_history_undo(up):
    apply(up, deployment("roll", 4, surge=1, unavailable=0, min_ready=1))
    rollout_status(up, "roll")
    ceiling = PodCeiling(up, "roll")
    up.kubectl(["set", "image", "deploy/roll", "c=nginx:2"])
    rollout_status(up, "roll")
    most = ceiling.done()
    if most > 5:
        raise Fail("%d pods at once, more than replicas + maxSurge = 5" % most)
    hist = up.kubectl(["rollout", "history", "deploy/roll"])[1]
    revs = [line.split()[0] for line in hist.splitlines()[2:] if line.strip()]
    if revs != ["1", "2"]:
        raise Fail("history: %r" % hist)
    up.kubectl(["rollout", "undo", "deploy/roll"])
    rollout_status(up, "roll")
    d = get(up, "deployment", "roll")
    if d["spec"]["template"]["spec"]["containers"][0]["image"] != "nginx:1" or \
            d["metadata"]["annotations"][REVISION] != "3":
        raise Fail("undo: %s %s" % (d["spec"]["template"], d["metadata"]["annotations"]))
    sets = sets_of(up, "roll")
    by_rev = {s["metadata"]["annotations"][REVISION]: s for s in sets.values()}
    if sorted(by_rev) != ["2", "3"] or by_rev["3"]["spec"]["replicas"] != 4 or \
            by_rev["2"]["spec"]["replicas"] != 0:
        raise Fail("sets after undo: %s" % {k: v["spec"]["replicas"] for k, v in by_rev.items()})


def check_scale_pause_resume_restart(up):
    apply(up, deployment("pr", 2))
    rollout_status(up, "pr")
    up.kubectl(["scale", "deploy/pr", "--replicas=5"])
    rollout_status(up, "pr")
    if len(live_pods(up, "pr")) != 5:
        raise Fail("scale to 5: %d pods" % len(live_pods(up, "pr")))
    up.kubectl(["rollout", "pause", "deploy/pr"])
    up.kubectl(["set", "image", "deploy/pr", "c=nginx:9"])
    wait_for("DeploymentPaused", lambda: cond(get(up, "deployment", "pr"), "Progressing")
             .get("reason") == "DeploymentPaused", timeout=30)
    if len(sets_of(up, "pr")) != 1:
        raise Fail("a ReplicaSet was created while paused")
    up.kubectl(["rollout", "resume", "deploy/pr"])
    rollout_status(up, "pr")
    up.kubectl(["rollout", "restart", "deploy/pr"])
    rollout_status(up, "pr")
    sets = sets_of(up, "pr")
    active = [s for s in sets.values() if s["spec"]["replicas"] > 0]
    if len(sets) != 3 or len(active) != 1 or "kubectl.kubernetes.io/restartedAt" not in \
            active[0]["spec"]["template"]["metadata"].get("annotations", {}):
        raise Fail("after restart: %s" % {n: s["spec"]["replicas"] for n, s in sets.items()})


def check_recreate(up):
    apply(up, deployment("rec", 3, strategy="Recreate"))
    rollout_status(up, "rec")
    old = next(iter(sets_of(up, "rec")))
    ceiling = PodCeiling(up, "rec")
    up.kubectl(["set", "image", "deploy/rec", "c=nginx:2"])
    rollout_status(up, "rec")
    if ceiling.done() > 3:
        raise Fail("Recreate ran old and new pods together")
    if sets_of(up, "rec")[old]["spec"]["replicas"] != 0:
        raise Fail("old set not scaled down")


def check_history_limit_and_adoption(up):
    orphan = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": "hl-orphan", "namespace": "default",
                           "labels": {"app": "hl", "x": "y"}},
              "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "hl", "x": "y"}},
                       "template": {"metadata": {"labels": {"app": "hl", "x": "y"}},
                                    "spec": {"containers": [{"name": "c", "image": "old"}]}}}}
    apply(up, orphan)
    apply(up, deployment("hl", 1, extra_spec={"revisionHistoryLimit": 1}))
    rollout_status(up, "hl")
    uid = get(up, "deployment", "hl")["metadata"]["uid"]
    wait_for("adoption", lambda: any(r["uid"] == uid for r in get(up, "rs", "hl-orphan")
                                     .get("metadata", {}).get("ownerReferences", [])), timeout=30)
    for image in ("nginx:2", "nginx:3"):
        up.kubectl(["set", "image", "deploy/hl", "c=" + image])
        rollout_status(up, "hl")
    wait_for("old sets beyond the limit deleted", lambda: len(sets_of(up, "hl")) == 2, timeout=30)


def check_progress_deadline(up):
    # A node selector nothing matches keeps the pods Pending.
    apply(up, deployment("stuck", 1, extra_spec={"progressDeadlineSeconds": 2}))
    rollout_status(up, "stuck")
    d = deployment("stuck", 1, extra_spec={"progressDeadlineSeconds": 2})
    d["spec"]["template"]["spec"]["nodeSelector"] = {"nowhere": "true"}
    apply(up, d)
    wait_for("ProgressDeadlineExceeded", lambda: cond(get(up, "deployment", "stuck"), "Progressing")
             .get("reason") == "ProgressDeadlineExceeded", timeout=30)
    c = cond(get(up, "deployment", "stuck"), "Progressing")
    if c["status"] != "False" or "has timed out progressing" not in c["message"]:
        raise Fail("condition: %s" % c)
    rc, _, err = up.kubectl(["rollout", "status", "deploy/stuck", "--timeout=10s"], check=False)
    if rc == 0 or "exceeded its progress deadline" not in err:
        raise Fail("rollout status on a stuck rollout: rc %d %r" % (rc, err))


def check_kill9_mid_rollout(up):
    apply(up, deployment("k9", 6, surge=2, unavailable=0, min_ready=2))
    rollout_status(up, "k9", timeout="90s")
    ceiling = PodCeiling(up, "k9")
    up.kubectl(["set", "image", "deploy/k9", "c=nginx:2"])
    wait_for("rollout under way", lambda: get(up, "deployment", "k9")["status"]
             .get("updatedReplicas", 0) >= 2, timeout=30, interval=0.1)
    up.proc.send_signal(signal.SIGKILL)
    up.proc.wait()
    again = Up(up.berth, up.data_dir)
    try:
        ceiling.up = again
        rollout_status(again, "k9", timeout="120s")
        most = ceiling.done()
        if most > 8:
            raise Fail("%d pods at once, more than replicas + maxSurge = 8" % most)
        sets = sets_of(again, "k9")
        if sorted(s["spec"]["replicas"] for s in sets.values()) != [0, 6]:
            raise Fail("sets after the rollout: %s" % {n: s["spec"]["replicas"]
                                                       for n, s in sets.items()})
    finally:
        again.stop()


CHECKS = [check_create, check_python_client, check_rollout_history_undo,
          check_scale_pause_resume_restart, check_recreate, check_history_limit_and_adoption,
          check_progress_deadline, check_kill9_mid_rollout]


def main():
    run_against_up(CHECKS, "berth-deployment-e2e-")


if __name__ == "__main__":
    main()
