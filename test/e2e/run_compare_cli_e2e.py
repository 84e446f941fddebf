#!/usr/bin/env python3
"""`berth compare` end to end: default vs MostAllocated bin packing on a cluster file, checked
against two separate `berth simulate` runs; exit codes; the HTML report opened in headless
Chromium."""
import json
import os
import re
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


def render(tmp, path):
    """The page's DOM after headless Chromium ran its scripts."""
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp)
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--user-data-dir=" + profile, "--virtual-time-budget=5000", "--dump-dom",
                        "file://" + path], capture_output=True, text=True, timeout=120)
    return p.stdout


def element(dom, tag, element_id):
    """The markup of the <tag id=element_id> element (tags of that kind are not nested)."""
    m = re.search(r'<%s\b[^>]*\bid="%s".*?</%s>' % (tag, element_id, tag), dom, re.S)
    return m.group(0) if m else ""


def attr(markup, name):
    m = re.search(r'\b%s="([^"]*)"' % name, markup)
    return m.group(1) if m else None


def plain(markup):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup))


def check_page_in_browser(tmp, html_path, report, want):
    dom = render(tmp, html_path)
    title = plain(element(dom, "h2", "timeline-title")).strip()
    check(title == "Comparison of 2 configurations", f"the browser draws the comparison ({title!r})")
    confs = report["configurations"]
    table = element(dom, "table", "compare-table")
    check(all(c["name"] in plain(table) for c in confs), "the outcomes table names each configuration")
    used = re.search(r"Nodes used\s*</td>(.*?)</tr>", table, re.S)
    check(used is not None and re.findall(r"\d+/\d+", plain(used.group(1))) ==
          [f"{c['nodesUsed']}/{c['nodes']}" for c in confs], "nodes used per configuration")
    for plot, groups in (("compare-per-node", 8), ("compare-per-zone", 3)):
        svg = element(dom, "svg", plot)
        check(attr(svg, "data-groups") == str(groups) and svg.count('class="column"') == 2 * groups,
              f"{plot}: a bar per configuration for each of {groups} groups")
    node_bars = re.findall(r'<rect class="column"[^>]*>\s*<title>([^<]*)</title>',
                           element(dom, "svg", "compare-per-node"))
    for c in confs:
        for node, n in c["perNode"].items():
            if f"{node}: {n} pods ({c['name']})" not in node_bars:
                check(False, f"a bar says {node} holds {n} pods under {c['name']}")
    where = element(dom, "svg", "compare-where")
    check(where.count('class="diff"') == len(want), "the where plot has a dot per differing pod")
    diffs = element(dom, "table", "compare-differences")
    check(attr(diffs, "data-rows") == str(len(want)), "the differences table counts every pod")
    rows = re.findall(r'<tr data-pod="([^"]*)"', diffs)
    check(rows == [d["pod"] for d in report["differences"]][:50], "a row per differing pod, in order")
    first = report["differences"][0]
    row = re.search(r'<tr data-pod="%s">(.*?)</tr>' % re.escape(first["pod"]), diffs, re.S)
    cells = re.findall(r"<td class=\"decision\">(.*?)</td>", row.group(1), re.S) if row else []
    ok = len(cells) == 2
    for cell, conf in zip(cells, first["configurations"]):
        ok &= conf["node"] in plain(re.search(r'<b class="outcome">(.*?)</b>', cell).group(1))
        for t in conf["tippedBy"]:
            ok &= f"{t['plugin']} +{t['points']}" in plain(cell)
        for node, view in conf["nodes"].items():
            if view["state"] == "scored":
                li = re.search(r'<li[^>]*data-node="%s">(.*?)</li>' % re.escape(node), cell, re.S)
                ok &= li is not None and f"{node} : {view['total']}" in plain(li.group(1)).strip()
                ok &= all(f"{p}={v}" in li.group(1) for p, v in view["plugins"].items())
    check(ok, "the first differing pod shows each configuration's node, scores and what tipped it")
    shown = plain(element(dom, "main", "timeline-view"))
    check(not re.search(r"\b(null|undefined|NaN)\b", shown), "no empty value drawn as text")
    shot = os.path.join(tmp, "report.png")
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=tmp),
                    "--screenshot=" + shot, "--window-size=1200,1400", "file://" + html_path],
                   capture_output=True, timeout=120)
    check(os.path.exists(shot) and os.path.getsize(shot) > 10000, "the page renders to a screenshot")


def check_pages_of_differences(tmp, binpack):
    """Over 50 differing pods: the table shows 50 at a time, and its pager turns the page (a
    click in a headless Chromium driven over DevTools)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "ui"))
    from run_ui_e2e import DevTools, wait_for
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:02d}"},
             "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
            for i in range(12)]
    docs += [{"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": f"p{i:03d}", "namespace": "default"},
              "spec": {"containers": [{"name": "c", "resources": {
                  "requests": {"cpu": "200m", "memory": "256Mi"}}}]}} for i in range(90)]
    cluster = os.path.join(tmp, "many.yaml")
    with open(cluster, "w") as f:
        f.write("\n---\n".join(json.dumps(d) for d in docs))
    args = ["compare", "--config", "default", "--config", binpack, "-f", cluster]
    report = json.loads(run(*args, "-o", "json").stdout)
    pods = [d["pod"] for d in report["differences"]]
    check(len(pods) > 50, f"{len(pods)} pods placed differently (more than a page)")
    path = os.path.join(tmp, "many.html")
    with open(path, "w") as f:
        f.write(run(*args, "-o", "html").stdout)
    browser = DevTools()
    try:
        browser.call("Page.navigate", url="file://" + path)
        rows = "[...document.querySelectorAll('#compare-differences tbody tr')].map(r => r.dataset.pod)"
        first = wait_for("the differences table", lambda: browser.evaluate(rows), timeout=30)
        pager = browser.evaluate("document.querySelector('.pager').textContent")
        check(first == pods[:50] and pager == f"‹1 / {-(-len(pods) // 50)}›",
              f"the first page: 50 rows of {len(pods)} ({pager})")
        browser.evaluate("document.querySelectorAll('.pager button')[1].click()")
        second = wait_for("the second page", lambda: (lambda r: r if r != first else None)(
            browser.evaluate(rows)), timeout=30)
        check(second == pods[50:100], "the pager turns to the next rows")
    finally:
        browser.close()


def recording_lines():
    """Two nodes that hold four pods each, ten pods (two wait), then a third node for those two;
    a high-priority pod that fits only by evicting one of those; half the first pods end."""
    def at(s):
        return f"2026-11-01T12:{s // 60:02d}:{s % 60:02d}Z"

    def node(name):
        alloc = {"cpu": "2", "memory": "8Gi", "pods": "110"}
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                "status": {"capacity": alloc, "allocatable": alloc}}

    def pod(name, cpu, memory, priority=None):
        spec = {"containers": [{"name": "c", "image": "i",
                                "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
        if priority is not None:
            spec["priority"] = priority
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                "spec": spec}
    lines = [{"time": at(0), "event": "Add", "resource": node(n)} for n in ("n1", "n2")]
    # CPU and memory in the nodes' proportion: only the scoring strategy tells nodes apart.
    for i in range(10):
        lines.append({"time": at(5), "event": "Add", "resource": pod(f"p{i}", "500m", "2Gi")})
    lines.append({"time": at(60), "event": "Add", "resource": node("n3")})
    lines.append({"time": at(90), "event": "Add", "resource": pod("urgent", "1500m", "1Gi", 1000)})
    # The default configuration spread p0-p3 over n1 and n2, bin packing put them on one node.
    for i in range(4):
        lines.append({"time": at(120), "event": "Delete", "resource": {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}}})
    return lines


def check_series_plot(dom, plot_id, key, report):
    """A replay's time-series plot against the JSON: one line per configuration, every point of
    the first configuration's series, and each legend's "now" value the series' last."""
    confs = report["configurations"]
    plot = element(dom, "svg", plot_id)
    names = re.findall(r'<path class="series[^"]*"[^>]*data-name="([^"]*)"', plot)
    check(names == [c["name"] for c in confs], f"{plot_id}: one line per configuration ({names})")
    check(attr(plot, "data-points") == str(len(confs[0][key])),
          f"{plot_id}: draws every point of the first configuration's {key}")
    figure = re.search(r'<svg\b[^>]*\bid="%s".*?</figure>' % plot_id, dom, re.S)
    legend = plain(figure.group(0)) if figure else ""
    want = [f"{c['name']} (now {c[key][-1][1]})" for c in confs]
    check(all(w in legend for w in want), f"{plot_id}: the legend's values are the series' last ({want})")


def check_replay_page_in_browser(tmp, binpack):
    recording = os.path.join(tmp, "history.jsonl")
    with open(recording, "w") as f:
        f.write("".join(json.dumps(line) + "\n" for line in recording_lines()))
    args = ["compare", "--config", "default", "--config", binpack, "--replay", recording]
    j = run(*args, "-o", "json")
    page = run(*args, "-o", "html")
    text = run(*args)
    check(j.returncode == 0 and page.returncode == 0, f"compare --replay -o json/html ({page.stderr[-500:]})")
    if j.returncode or page.returncode:
        return
    report = json.loads(j.stdout)
    confs = report["configurations"]
    path = os.path.join(tmp, "replay.html")
    with open(path, "w") as f:
        f.write(page.stdout)
    pending = [v for _, v in confs[0]["pendingOverTime"]]
    check(max(pending) == 2 and pending[-1] == 0, f"two pods wait for the third node ({pending})")
    for c in confs:
        times = [[t for t, _ in c[k]] for k in ("pendingOverTime", "nodesInUseOverTime",
                                                 "preemptionsOverTime")]
        check(times[0] == times[1] == times[2], f"{c['name']}: the three series share their times")
        nodes = [v for _, v in c["nodesInUseOverTime"]]
        victims = [v for _, v in c["preemptionsOverTime"]]
        check(nodes[-1] == c["nodesUsed"] and max(nodes) == 3,
              f"{c['name']}: nodes in use reach 3 and end at nodes used ({nodes})")
        check(victims[-1] == c["victims"] == 1 and victims == sorted(victims),
              f"{c['name']}: the urgent pod's one victim, counted from then on ({victims})")
    check([c["nodesUsed"] for c in confs] == [3, 2],
          "when half the first pods end, bin packing frees a node and spreading does not")
    check(text.returncode == 0 and re.search(r"peak nodes in use +3 at ", text.stdout) is not None,
          "the text output has the peak of nodes in use")
    dom = render(tmp, path)
    check_series_plot(dom, "compare-pending", "pendingOverTime", report)
    check_series_plot(dom, "compare-nodes-in-use", "nodesInUseOverTime", report)
    check_series_plot(dom, "compare-preemptions", "preemptionsOverTime", report)


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
    check(page.returncode == 0, f"compare -o html exits 0 ({page.stderr.strip()[-500:]})")
    with open(html_path, "w") as f:
        f.write(page.stdout)
    check(not re.search(r'(src|href)="(?!data:)', page.stdout), "the page fetches nothing")
    embedded = re.search(r'<script id="berth-timeline" type="application/json">(.*?)</script>',
                         page.stdout, re.S)
    def untimed(doc):  # the scheduling times differ from run to run
        for c in doc["configurations"]:
            c.pop("seconds"), c.pop("cpuSeconds")
        return doc
    check(embedded is not None and untimed(json.loads(embedded.group(1))) ==
          untimed(json.loads(json.dumps(report))), "the page embeds the -o json document")
    if not os.path.exists(CHROMIUM):
        print("SKIP the browser checks: no chromium")
    else:
        check_page_in_browser(tmp, html_path, report, want)
        check_replay_page_in_browser(tmp, binpack)
        check_pages_of_differences(tmp, binpack)

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all passed")
