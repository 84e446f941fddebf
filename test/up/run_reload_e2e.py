#!/usr/bin/env python3
"""End-to-end test of the live configuration reload of `berth up --config FILE`, with the real
kubectl.

Usage: run_reload_e2e.py BERTH [CHECK ...]

Under a steady trickle of pods (one every 250 ms, none may be lost):
* with the default configuration (LeastAllocated) a workload spreads over the nodes;
* the file is replaced (renamed over, as an editor saves) by examples/compare/binpack.yaml
  (MostAllocated): the reload is logged with its duration and counted in
  berth_config_reloads_total{result="success"}; new pods pack onto one node while the earlier
  ones stay where they are;
* an invalid file (bad plugin args) is refused: a ConfigReloadFailed line naming the field,
  berth_config_reloads_total{result="failure"}, and pods keep packing under the previous
  configuration;
* a valid file again (written in place, then SIGHUP): new pods avoid the packed node;
  berth_config_info carries the file's SHA-256;
* every trickle pod ends bound.
Prints one line per check and "N passed, M failed".
"""
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, create, pod_manifest, pods_json, run_against_up, wait_for  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
DEFAULT = HEADER + "profiles:\n- schedulerName: default-scheduler\n"
INVALID = HEADER + """profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocatedPlease
"""
CONFIG_DIR = tempfile.mkdtemp(prefix="berth-reload-config-")
CONFIG = os.path.join(CONFIG_DIR, "scheduler.yaml")


def write_renamed(text):
    tmp = CONFIG + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, CONFIG)


def write_in_place(text):
    with open(CONFIG, "w") as f:
        f.write(text)


def sha256(text):
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def log_text(up):
    up.log.flush()
    with open(os.path.join(up.data_dir, "up.log")) as f:
        return f.read()


def metric(up, pattern):
    out = up.kubectl(["get", "--raw", "/metrics"])[1]
    m = re.search(pattern, out, re.M)
    return m.group(1) if m else None


def reloads(up, result):
    v = metric(up, r'^berth_config_reloads_total\{result="%s"\} (\d+)$' % result)
    return int(v) if v else 0


class Trickle:
    """Creates a pod every 250 ms on a thread of its own until stopped."""

    def __init__(self, up):
        self.up, self.names, self.errors = up, [], []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        i = 0
        while not self.stop_event.is_set():
            name = "trickle-%04d" % i
            try:
                create(self.up, [pod_manifest(name, cpu="20m", memory="16Mi",
                                              labels={"app": "trickle"})])
                self.names.append(name)
            except Fail as e:
                self.errors.append(str(e))
            i += 1
            self.stop_event.wait(0.25)

    def stop(self):
        self.stop_event.set()
        self.thread.join()


def bound_nodes(up, selector):
    pods = pods_json(up, selector=selector)
    return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods}


def create_batch(up, app, count):
    create(up, [pod_manifest("%s-%d" % (app, i), cpu="200m", memory="128Mi",
                             labels={"app": app}) for i in range(count)])

    def all_bound():
        nodes = bound_nodes(up, "app=" + app)
        return nodes if len(nodes) == count and all(nodes.values()) else None
    return wait_for("%s pods bound" % app, all_bound)


def check_reload_under_load(up):
    """Spread, pack after a reload, an invalid file refused, a valid one again; no pod lost."""
    trickle = Trickle(up)
    try:
        old = create_batch(up, "old", 8)
        if len(set(old.values())) < 3:
            raise Fail("LeastAllocated should spread 8 pods over 4 nodes: %r" % old)

        with open(os.path.join(REPO, "examples", "compare", "binpack.yaml")) as f:
            binpack = f.read()
        write_renamed(binpack)
        wait_for("the bin-packing reload", lambda: reloads(up, "success") == 1, timeout=30)
        line = wait_for("the reload's log line", lambda: re.search(
            r'"Configuration reloaded".*reason="ConfigReloaded".*hash="%s".*'
            r'duration="([0-9.]+)ms"' % re.escape(sha256(binpack)), log_text(up)))
        print("  reload applied in %s ms" % line.group(1))
        new = create_batch(up, "new", 8)
        if len(set(new.values())) != 1:
            raise Fail("MostAllocated should pack the new pods onto one node: %r" % new)
        packed = next(iter(new.values()))
        if bound_nodes(up, "app=old") != old:
            raise Fail("the earlier pods moved")

        write_renamed(INVALID)
        wait_for("the refused reload", lambda: reloads(up, "failure") == 1, timeout=30)
        refused = wait_for("the refusal's log line", lambda: re.search(
            r'"Configuration reload failed; the previous configuration keeps running".*'
            r'reason="ConfigReloadFailed".*err=".*scoringStrategy\.type', log_text(up)))
        if not refused:
            raise Fail("no ConfigReloadFailed line")
        during = create_batch(up, "during", 4)
        if set(during.values()) != {packed}:
            raise Fail("under the previous (bin-packing) configuration the pods should join %s: %r"
                       % (packed, during))
        if metric(up, r'^berth_config_info\{hash="([^"]+)"\} 1$') != sha256(binpack):
            raise Fail("berth_config_info should still name the bin-packing file")

        write_in_place(DEFAULT)
        up.proc.send_signal(signal.SIGHUP)
        wait_for("the reload back to LeastAllocated", lambda: reloads(up, "success") == 2,
                 timeout=30)
        if metric(up, r'^berth_config_info\{hash="([^"]+)"\} 1$') != sha256(DEFAULT):
            raise Fail("berth_config_info does not name the file in use")
        back = create_batch(up, "back", 6)
        if packed in back.values():
            raise Fail("LeastAllocated should avoid the packed node %s: %r" % (packed, back))
        if up.proc.poll() is not None:
            raise Fail("berth up exited")
    finally:
        trickle.stop()
    if trickle.errors:
        raise Fail("creating trickle pods failed: %s" % trickle.errors[:3])
    names = set(trickle.names)

    def trickle_bound():
        nodes = bound_nodes(up, "app=trickle")
        unbound = [n for n in names if not nodes.get(n)]
        return not unbound or None
    wait_for("every trickle pod bound", trickle_bound, timeout=60)
    print("  %d trickle pods, all bound" % len(names))


CHECKS = [check_reload_under_load]


def main():
    try:
        with open(CONFIG, "w") as f:
            f.write(DEFAULT)
        run_against_up(CHECKS, "berth-reload-e2e-", demo_nodes=4,
                       extra=["--config", CONFIG, "--demo-node-cpu", "4",
                              "--demo-node-memory", "8Gi"])
    finally:
        shutil.rmtree(CONFIG_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
