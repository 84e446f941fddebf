#!/usr/bin/env python3
"""`berth compare --replay` at scale: writes a recording of NODES nodes and POD_EVENTS pod
events (replay_workload.py) and replays it through the default configuration and a
MostAllocated bin-packing one; prints the wall and CPU time of the whole command, each
configuration's timed replay, and the peak RSS.

Usage: replay_bench.py BERTH [--nodes 10000] [--pod-events 100000] [--keep DIR]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The bin-packing configuration docs/compare.md uses, as a user runs it.
with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "compare", "binpack.yaml")) as _f:
    BINPACK = _f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("berth")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--pod-events", type=int, default=100000)
    ap.add_argument("--keep")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="berth-replay-bench-")
    recording = os.path.join(tmp, "history.jsonl")
    if not os.path.exists(recording):
        subprocess.run([sys.executable, os.path.join(HERE, "replay_workload.py"), recording,
                        "--nodes", str(a.nodes), "--pod-events", str(a.pod_events)], check=True)
    binpack = os.path.join(tmp, "binpack.yaml")
    with open(binpack, "w") as f:
        f.write(BINPACK)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([a.berth, "compare", "--config", "default", "--config", binpack,
                        "--replay", recording, "-o", "json"], capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("berth compare failed: " + p.stderr)
    r = json.loads(p.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{a.nodes} nodes, {r['events']} events, {r['pods']} pods, {r['differing']} differ")
    print(f"whole command: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {after.ru_maxrss // 1024} MB")
    for c in r["configurations"]:
        print(f"  {c['name']}: replay {c['seconds']:.1f} s wall, {c['cpuSeconds']:.1f} s CPU; "
              f"nodes used {c['nodesUsed']}, pending {c['pending']}")
    with open(os.path.join(tmp, "loadavg"), "w") as f:
        f.write(open("/proc/loadavg").read())
    print("load average after:", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
