#!/usr/bin/env python3
"""`berth cluster` and `berth scheduler` against a real kube-apiserver v1.23 and etcd, started by
../shared/upstream/cluster.sh (relative to the repository's parent; or $UPSTREAM_SCRIPTS).

Usage: run_cluster_upstream_e2e.py BERTH

Prints "SKIP ..." and exits 0 (ctest reports it skipped) when the upstream binaries are absent:
build them first with ../shared/upstream/build.sh (see its README), which puts kube-apiserver in
$UPSTREAM_WORK/bin (default ${TMPDIR:-/tmp}/k8s-upstream/bin); etcd comes from Debian's
etcd-server package. Then: ctest -R e2e_cluster_upstream --output-on-failure.

Checks: the 3 nodes `berth cluster` creates become Ready (their simulated kubelets renew
Leases and post status), a ReplicaSet's 4 pods are created by Berth's ReplicaSet controller,
bound by `berth scheduler` and Running on them; `berth record` writes that history from
kube-apiserver (noting the kinds v1.23 does not serve), and `berth compare --replay` of it
under the default configuration and bin packing reports exactly the pods two `berth simulate
--replay` runs place differently.
"""
import json
import signal
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
# ../shared/upstream beside the repository (or beside the directory of its worktrees).
SCRIPTS = os.environ.get("UPSTREAM_SCRIPTS") or next(
    (p for p in (os.path.join(REPO, "..", "shared", "upstream"),
                 os.path.join(REPO, "..", "..", "shared", "upstream"))
     if os.path.exists(os.path.join(p, "cluster.sh"))),
    os.path.join(REPO, "..", "shared", "upstream"))
WORK = os.environ.get("UPSTREAM_WORK") or os.path.join(
    os.environ.get("TMPDIR", "/tmp"), "k8s-upstream")
BIN = os.environ.get("UPSTREAM_BIN") or os.path.join(WORK, "bin")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stop_processes(procs):
    """Stops (process, log file) pairs: SIGTERM, SIGKILL after 30 s, then closes each log."""
    for proc, log in procs:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def wait_for(what, fn, timeout=90):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.5)
    raise RuntimeError("timed out waiting for %s (last: %r)" % (what, last))


def check_replay(berth, work, history, rc, err):
    """The recording is in the recorder's format, says which kinds are not served, and its
    replay under two configurations differs on exactly the pods two simulate runs place
    differently."""
    if rc != 0 or "changes written" not in err:
        raise RuntimeError("berth record exited %d: %s" % (rc, err))
    if "not served" not in err or "ResourceClaim" not in err:
        raise RuntimeError("the kinds v1.23 does not serve are not named: %s" % err)
    lines = [json.loads(l) for l in open(history) if l.strip()]
    if any(set(l) != {"time", "event", "resource"} for l in lines):
        raise RuntimeError("not recorder lines")
    pods = {l["resource"]["metadata"]["name"] for l in lines if l["resource"]["kind"] == "Pod"}
    if len([p for p in pods if p.startswith("replay-")]) != 8:
        raise RuntimeError("recorded pods: %s" % sorted(pods))
    binpack = os.path.join(REPO, "examples", "compare", "binpack.yaml")
    out = subprocess.run([berth, "compare", "--config", "default", "--config", binpack,
                          "--replay", history, "-o", "json"], capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise RuntimeError("compare --replay: %s" % out.stderr)
    sims = []
    for cfg in ([], ["--config", binpack]):
        s = subprocess.run([berth, "simulate", *cfg, "--replay", history, "-o", "json"],
                           capture_output=True, text=True, timeout=300)
        if s.returncode != 0:
            raise RuntimeError("simulate --replay: %s" % s.stderr)
        sims.append({r["pod"]: r.get("node") for r in json.loads(s.stdout)["results"]})
    want = sorted(p for p in sims[0] if sims[0][p] != sims[1].get(p))
    got = sorted(d["pod"] for d in json.loads(out.stdout)["differences"])
    if not want or got != want:
        raise RuntimeError("compare differs on %s, simulate runs on %s" % (got, want))


def main():
    berth = os.path.abspath(sys.argv[1])
    cluster_sh = os.path.join(SCRIPTS, "cluster.sh")
    missing = [p for p in (cluster_sh, os.path.join(BIN, "kube-apiserver")) if not os.path.exists(p)]
    if not shutil.which("etcd"):
        missing.append("etcd (Debian package etcd-server)")
    if missing or not os.path.exists(KUBECTL):
        print("SKIP: upstream control plane not available (missing: %s)"
              % ", ".join(missing or ["kubectl"]))
        return 0
    work = tempfile.mkdtemp(prefix="berth-upstream-e2e-")
    env = dict(os.environ, UPSTREAM_BIN=BIN, CLUSTER_DIR=work,
               CLUSTER_ETCD_PORT=str(free_port()), APISERVER_PORT=str(free_port()))
    kubeconfig = os.path.join(work, "kubeconfig")
    procs = []
    ok = False
    try:
        subprocess.run([cluster_sh, "start"], env=env, check=True, timeout=180)

        def kubectl(args, stdin=None):
            return subprocess.run([KUBECTL, "--kubeconfig", kubeconfig] + args, input=stdin,
                                  capture_output=True, text=True, check=True, timeout=60).stdout
        for name, args in (
                ("cluster", ["cluster", "--kubeconfig", kubeconfig, "--nodes", "3",
                             "--controllers", "replicaset,nodelifecycle,taint-eviction-controller",
                             "--node-lease-renew-interval", "2s", "--pod-start-delay", "200ms"]),
                ("scheduler", ["scheduler", "--kubeconfig", kubeconfig, "--leader-elect=false",
                               "--secure-port", "0"])):
            log = open(os.path.join(work, name + ".log"), "w")
            procs.append((subprocess.Popen([berth] + args, stdout=log, stderr=subprocess.STDOUT),
                          log))

        def nodes_ready():
            nodes = json.loads(kubectl(["get", "nodes", "-o", "json"]))["items"]
            ready = [n for n in nodes if any(c["type"] == "Ready" and c["status"] == "True"
                                             for c in n["status"].get("conditions", []))]
            return len(ready) == 3
        wait_for("3 nodes Ready", nodes_ready)
        print("PASS nodes Ready", flush=True)
        history = os.path.join(work, "history.jsonl")
        record = subprocess.Popen([berth, "record", "--kubeconfig", kubeconfig, "-o", history],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append((record, open(os.devnull, "w")))  # stopped there if a check fails first
        wait_for("the recording's initial list", lambda: os.path.exists(history) and any(
            json.loads(l)["resource"]["kind"] == "Node" for l in open(history) if l.strip()))
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
        kubectl(["apply", "-f", "-"], stdin=json.dumps(rs))

        def running():
            pods = json.loads(kubectl(["get", "pods", "-l", "app=web", "-o", "json"]))["items"]
            return len([p for p in pods if p["spec"].get("nodeName")
                        and p["status"].get("phase") == "Running"]) == 4
        wait_for("4 pods Running", running)
        print("PASS ReplicaSet pods bound and Running", flush=True)
        for i in range(8):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "replay-%d" % i, "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "pause", "resources": {
                       "requests": {"cpu": "500m", "memory": "256Mi"}}}]}}
            kubectl(["apply", "-f", "-"], stdin=json.dumps(pod))
        wait_for("the pods bound", lambda: all(
            p["spec"].get("nodeName") for p in json.loads(kubectl(
                ["get", "pods", "-o", "json"]))["items"]))
        time.sleep(2)  # the recording catches up with the last binds
        record.send_signal(signal.SIGINT)
        _, err = record.communicate(timeout=30)
        check_replay(berth, work, history, record.returncode, err)
        print("PASS berth record of kube-apiserver, replayed by compare as by simulate", flush=True)
        ok = True
    except Exception as e:  # noqa: BLE001 - report whatever failed, then the logs
        print("FAIL: %s" % e)
        for name in ("cluster.log", "scheduler.log"):
            path = os.path.join(work, name)
            if os.path.exists(path):
                print("%s (tail):\n%s" % (name, open(path).read()[-3000:]))
    finally:
        stop_processes(procs)
        subprocess.run([cluster_sh, "stop"], env=env, timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
