#!/usr/bin/env python3
"""`berth compare` end to end: default vs MostAllocated bin packing on a cluster file, checked
against two separate `berth simulate` runs; exit codes; the HTML report opened in headless
Chromium."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BERTH = sys.argv[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# The bin-packing configuration docs/compare.md uses, as a user runs it.
with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples", "compare", "binpack.yaml")) as _f:
    BINPACK = _f.read()

BAD = BINPACK.replace("MostAllocated", "Mostly")

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def cluster_docs():
    docs = []
    for i in range(8):
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"node-{i}",
                                  "labels": {"topology.kubernetes.io/zone": f"zone-{i % 3}"}},
                     "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
    docs.append({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "running", "namespace": "default"},
                 "spec": {"nodeName": "node-0", "containers": [
                     {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}})
    for i in range(30):
        cpu = ["250m", "500m", "1"][i % 3]
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"web-{i}", "namespace": "default",
                                  "creationTimestamp": f"2026-01-01T00:00:{i:02d}Z"},
                     "spec": {"containers": [
                         {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}})
    docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge", "namespace": "default"},
                 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "64"}}}]}})
    return docs


def run(*args):
    return subprocess.run([BERTH, *args], capture_output=True, text=True, timeout=300)


with tempfile.TemporaryDirectory() as tmp:
    cluster = os.path.join(tmp, "cluster.yaml")
    with open(cluster, "w") as f:
        f.write("\n---\n".join(json.dumps(d) for d in cluster_docs()))
    default = os.path.join(tmp, "default.yaml")
    with open(default, "w") as f:
        f.write(run("config", "print-defaults").stdout)
    binpack = os.path.join(tmp, "binpack.yaml")
    with open(binpack, "w") as f:
        f.write(BINPACK)
    bad = os.path.join(tmp, "bad.yaml")
    with open(bad, "w") as f:
        f.write(BAD)

    out = run("compare", "--config", default, "--config", binpack, "-f", cluster, "-o", "json")
    check(out.returncode == 0, f"compare -o json exits 0 ({out.stderr.strip()})")
    report = json.loads(out.stdout)
    sims = []
    for cfg in (default, binpack):
        s = run("simulate", "--config", cfg, "-f", cluster, "-o", "json")
        check(s.returncode == 0, f"simulate --config {os.path.basename(cfg)}")
        sims.append({r["pod"]: r for r in json.loads(s.stdout)["results"]})
    want = sorted(p for p in sims[0] if sims[0][p].get("node") != sims[1][p].get("node"))
    got = sorted(d["pod"] for d in report["differences"])
    check(len(want) > 0, f"default and bin packing place {len(want)} pods differently")
    check(got == want, "the reported pods are those the two simulate runs place differently")
    check(report["differing"] == len(want), "differing counts them")
    for d in report["differences"]:
        for c, conf in enumerate(d["configurations"]):
            sim = sims[c][d["pod"]]
            if conf.get("node") != sim.get("node"):
                check(False, f"{d['pod']}: node under configuration {c} is simulate's")
            if not conf["explained"]:
                continue
            # Each scored candidate's per-plugin scores are simulate's, times the weights.
            for node, view in conf["nodes"].items():
                if view["state"] != "scored":
                    continue
                score = sim["score"].get(node)
                if score is None or score["total"] != view["total"]:
                    check(False, f"{d['pod']} {node}: total matches simulate's score record")
    check(not [f for f in failures if "matches" in f or "is simulate's" in f],
          "every node and every explained total matches simulate")
    first = report["differences"][0]["configurations"]
    check(all(c["explained"] and c["tippedBy"] for c in first),
          "the first difference is explained with the plugins that tipped it")
    confs = report["configurations"]
    check(confs[1]["nodesUsed"] < confs[0]["nodesUsed"], "bin packing uses fewer nodes")
    check(confs[0]["pending"] == 1 and confs[0]["pendingPods"] == ["default/huge"],
          "the pod that fits nowhere is pending")
    check(report["shape"]["requests"] == "cpu=500m,memory=1Gi", "the shape is the median pending pod")
    check(all("shapeFit" in c and "zoneSpread" in c and c["seconds"] >= 0 for c in confs),
          "fragmentation, zone spread and time per configuration")

    shaped = run("compare", "--config", "default", "--config", binpack, "-f", cluster,
                 "--shape", "cpu=2,memory=1Gi", "-o", "json")
    check(json.loads(shaped.stdout)["shape"]["requests"] == "cpu=2,memory=1Gi", "--shape is used")

    text = run("compare", "--config", default, "--config", binpack, "-f", cluster)
    check(text.returncode == 0 and "placed differently" in text.stdout and "tipped by" in text.stdout,
          "text output")

    bad_run = run("compare", "--config", default, "--config", bad, "-f", cluster)
    check(bad_run.returncode == 1 and "scoringStrategy.type" in bad_run.stderr,
          f"an invalid configuration exits 1 naming the field ({bad_run.stderr.strip()})")
    one = run("compare", "--config", default, "-f", cluster)
    check(one.returncode == 2, "one configuration is a usage error (2)")
    none = run("compare", "--config", default, "--config", binpack)
    check(none.returncode == 2, "no input is a usage error (2)")

    html_path = os.path.join(tmp, "report.html")
    page = run("compare", "--config", default, "--config", binpack, "-f", cluster, "-o", "html")
    check(page.returncode == 0, "compare -o html exits 0")
    with open(html_path, "w") as f:
        f.write(page.stdout)
    check("<script" not in page.stdout and "http://" not in page.stdout.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""), "the page fetches nothing")
    if not os.path.exists(CHROMIUM):
        print("SKIP the browser checks: no chromium")
    else:
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                              "--dump-dom", "file://" + html_path],
                             capture_output=True, text=True, timeout=120).stdout
        for plot in ("per-node", "per-zone", "differences"):
            check(f'id="{plot}"' in dom, f"the browser shows the {plot} plot")
        check(dom.count('class="diff"') == len(want), "one dot per differing pod")
        check(dom.count('class="bar"') == 2 * 8 + 2 * 3, "a bar per node and per zone per configuration")
        shot = os.path.join(tmp, "report.png")
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--screenshot=" + shot, "--window-size=1200,1400", "file://" + html_path],
                       capture_output=True, timeout=120)
        check(os.path.exists(shot) and os.path.getsize(shot) > 10000, "the page renders to a screenshot")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all passed")
