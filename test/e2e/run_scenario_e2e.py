#!/usr/bin/env python3
"""`berth scenario run` end to end on examples/scenarios/node-failure.yaml: the failed node's pods
are evicted 300 simulated seconds after its taint (the default tolerations) and run elsewhere;
more than ten simulated minutes take a few seconds of wall time; the same seed twice gives
byte-identical JSON; a bad scenario fails naming the step and field; pods of a deleted node
are collected after the pod garbage collector's quarantine; a recording replays through the
same runner (--replay)."""
import json
import os
import subprocess
import sys
import tempfile
import time

BERTH = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIO = os.path.join(ROOT, "examples", "scenarios", "node-failure.yaml")

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args):
    started = time.monotonic()
    p = subprocess.run([BERTH, "scenario", "run", *args], capture_output=True, text=True,
                       timeout=300)
    return p, time.monotonic() - started


def seconds(entries, kind, obj=None):
    return [e["seconds"] for e in entries if e["kind"] == kind and (obj is None or e["object"] == obj)]


first, wall = run(SCENARIO, "--seed", "7", "-o", "json")
check(first.returncode == 0, f"the scenario runs (rc {first.returncode}): {first.stderr[-2000:]}")
report = json.loads(first.stdout)
timeline = report["timeline"]
print(f"wall time {wall:.1f}s for {report['simulated']} simulated")
check(report["end"]["seconds"] >= 600, "more than ten simulated minutes")
# A few seconds on an idle machine; the bound leaves room for a loaded one.
check(wall < 60, f"in seconds of wall time ({wall:.1f}s)")

# The node stops at 1m; NotReady after the 40 s grace period.
not_ready = seconds(timeline, "NodeNotReady", "node-002")
check(len(not_ready) == 1 and 100 <= not_ready[0] <= 110, f"node-002 NotReady at ~1m40s: {not_ready}")
# Its pods: evicted 300 s after the taint, not before.
running = report["checkpoints"][0]
on_failed = running["podsPerNode"]["node-002"]
check(on_failed > 0, f"node-002 ran pods before it failed ({on_failed})")
evicted = [e for e in timeline if e["kind"] == "PodEvicted"]
check(len(evicted) == on_failed, f"{on_failed} pods evicted: {[e['object'] for e in evicted]}")
check(all(e["detail"].startswith("from node-002") for e in evicted), "evicted from node-002")
if evicted and not_ready:
    delay = min(e["seconds"] for e in evicted) - not_ready[0]
    check(300 <= delay <= 306, f"evicted 300 s after the taint (after {delay} s)")
# Replacements scheduled elsewhere, after the evictions, and running at the checkpoint.
if evicted:
    t = min(e["seconds"] for e in evicted)
    later = [e for e in timeline if e["kind"] == "PodScheduled" and t <= e["seconds"] < 700]
    check(len(later) == on_failed and all(e["detail"] != "node-002" for e in later),
          f"replacements scheduled on other nodes: {[(e['object'], e['detail']) for e in later]}")
recovered = next(c for c in report["checkpoints"] if c["name"] == "recovered")
check(recovered["pods"]["byPhase"].get("Running") == 12 and recovered["pendingPods"] == [],
      f"12 running, none pending after the failure: {recovered['pods']}")
check(recovered["nodes"]["notReadyNodes"] == ["node-002"], "node-002 still NotReady then")
check(recovered["evictions"] == on_failed, "the checkpoint counts the evictions")
scaled = next(c for c in report["checkpoints"] if c["name"] == "scaled")
check(scaled["nodes"]["notReady"] == 0, "node-002 Ready again at the end")
check(scaled["podsPerNode"].get("node-002", 0) > 0, "the scale-up uses node-002 again")

# Determinism: the same seed, the same bytes.
second, _ = run(SCENARIO, "--seed", "7", "-o", "json")
check(second.returncode == 0 and second.stdout == first.stdout,
      "the same seed twice gives byte-identical JSON")
text, _ = run(SCENARIO, "--seed", "7")
check(text.returncode == 0 and "Checkpoint recovered at" in text.stdout and "PodEvicted" in text.stdout,
      "the text report")

# A bad scenario: the error names the step and the field.
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.yaml")
    with open(bad, "w") as f:
        f.write("apiVersion: berth.dev/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\n"
                "spec:\n  steps:\n  - checkpoint: {name: a}\n"
                "  - scale: {kind: Deployment, name: web, replicas: -1}\n")
    p, _ = run(bad)
    check(p.returncode == 1 and "steps[1].scale.replicas: must be >= 0" in p.stderr,
          f"a bad step is refused: {p.stderr.strip()}")
    # A wait that cannot hold: the run stops there, rc 1, the report says why.
    stuck = os.path.join(d, "stuck.yaml")
    with open(stuck, "w") as f:
        f.write("apiVersion: berth.dev/v1alpha1\nkind: Scenario\nmetadata: {name: stuck}\n"
                "spec:\n  cluster: {nodes: 1}\n  steps:\n"
                "  - wait: {for: NodeNotReady, node: node-001, timeout: 2m}\n")
    p, _ = run(stuck, "-o", "json")
    out = json.loads(p.stdout) if p.stdout else {}
    check(p.returncode == 1 and "steps[0].wait: timed out after 2m0s" in out.get("error", ""),
          f"a wait that times out stops the run: {out.get('error')}")
    check(out.get("end", {}).get("seconds") == 120, "at its timeout")

# A node deleted under its pods: the pod garbage collector quarantines it for 40 s, then marks
# its pods Failed and deletes them at a round (every 20 s) of simulated time.
with tempfile.TemporaryDirectory() as d:
    gone = os.path.join(d, "node-deleted.yaml")
    pinned = [{"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"pinned-{i}", "namespace": "default"},
               "spec": {"nodeName": "node-002", "containers": [{"name": "c", "image": "nginx"}]}}
              for i in range(2)]
    with open(gone, "w") as f:
        f.write(json.dumps({
            "apiVersion": "berth.dev/v1alpha1", "kind": "Scenario",
            "metadata": {"name": "node-deleted"},
            "spec": {"cluster": {"nodes": 3},
                     "steps": [{"at": "0s", "apply": {"objects": pinned}},
                               {"wait": {"for": "PodsRunning", "selector": "", "count": 2,
                                         "timeout": "1m"}},
                               {"at": "1m", "delete": {"object": {
                                   "apiVersion": "v1", "kind": "Node",
                                   "metadata": {"name": "node-002"}}}},
                               {"at": "1m39s", "checkpoint": {"name": "quarantined"}},
                               {"at": "3m", "checkpoint": {"name": "collected"}}]}}))
    p, _ = run(gone, "-o", "json")
    check(p.returncode == 0, f"the node-deleted scenario runs (rc {p.returncode}): {p.stderr[-1000:]}")
    rep = json.loads(p.stdout) if p.returncode == 0 else {"timeline": [], "checkpoints": []}
    points = {c["name"]: c["pods"]["total"] for c in rep["checkpoints"]}
    check(points == {"quarantined": 2, "collected": 0},
          f"the pods stay through the quarantine and go after it: {points}")
    deleted = [e["seconds"] for e in rep["timeline"] if e["kind"] == "PodDeleted"]
    failed = [e["seconds"] for e in rep["timeline"] if e["kind"] == "PodFailed"]
    check(len(deleted) == 2 and all(100 <= t <= 120 for t in deleted),
          f"deleted 40 to 60 s after their node: {deleted}")
    check(len(failed) == 2, f"marked Failed first: {failed}")

# A recording (berth record's lines) replayed through the scenario runner: nodes and pods
# created at their recorded times, pending pods scheduled here, deletions replayed.
def recorded_node(name):
    alloc = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": alloc, "allocatable": alloc}}


def recorded_pod(name, node=None):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "uid": "uid-" + name},
           "spec": {"containers": [{"name": "c", "image": "i",
                                    "resources": {"requests": {"cpu": "500m"}}}]}}
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def at(seconds):
    return f"2026-11-01T12:{seconds // 60:02d}:{seconds % 60:02d}Z"


lines = [{"time": at(0), "event": "Add", "resource": recorded_node(n)} for n in ("n1", "n2", "n3")]
lines += [{"time": at(5), "event": "Add", "resource": recorded_pod(f"p{i}")} for i in range(4)]
lines.append({"time": at(6), "event": "Update", "resource": recorded_pod("p0", "n1")})  # its binding
lines += [{"time": at(30), "event": "Add", "resource": recorded_pod(f"p{i}")} for i in range(4, 8)]
lines.append({"time": at(120), "event": "Delete", "resource": recorded_pod("p1")})
with tempfile.TemporaryDirectory() as d:
    recording = os.path.join(d, "history.jsonl")
    with open(recording, "w") as f:
        f.write("".join(json.dumps(l) + "\n" for l in lines))
    p, _ = run("--replay", recording, "-o", "json")
    check(p.returncode == 0, f"a recording replays (rc {p.returncode}): {p.stderr[-1000:]}")
    rep = json.loads(p.stdout) if p.returncode == 0 else {"timeline": [], "end": {}}
    scheduled = {e["object"]: e["seconds"] for e in rep["timeline"] if e["kind"] == "PodScheduled"}
    check(len(scheduled) == 8, f"every recorded pod scheduled here: {sorted(scheduled)}")
    check(scheduled.get("default/p4") == 30, f"at its recorded time (30 s): {scheduled.get('default/p4')}")
    deleted = [e["seconds"] for e in rep["timeline"] if e["kind"] == "PodDeleted" and e["object"] == "default/p1"]
    check(deleted == [120], f"the recorded deletion at 2m: {deleted}")
    check(rep["end"].get("seconds") == 120 and len(rep["end"].get("podsPerNode", {})) == 3,
          "three nodes, to the last recorded change")
    again, _ = run("--replay", recording, "-o", "json")
    same = again.stdout == p.stdout
    if not same:
        import difflib
        print("".join(list(difflib.unified_diff(p.stdout.splitlines(True), again.stdout.splitlines(True)))[:60]))
    check(same, "a replay twice gives byte-identical JSON")

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("all passed")
