#!/usr/bin/env python3
"""End-to-end test of the web view's Timeline, rendered by headless Chromium.

Usage: run_timeline_e2e.py BERTH EXAMPLES_DIR

* `berth scenario run examples/scenarios/node-failure.yaml -o html`: the page, opened from a
  file with no server, draws as many points as the JSON report's series has, labels each
  checkpoint, lists every timeline entry and each checkpoint's row; it loads nothing.
* `berth up` (four demo nodes, a pod that fits, one that fits nowhere, a Preempted event):
  /ui/api/timeline needs the token and counts them; the page's Timeline tab (#tab=timeline)
  plots them and lists the preemption.
* A preemption by the scheduler (a low-priority pod on a one-CPU node, then a high-priority
  one): its Preempted event is in the timeline.
* The file picker (driven over the DevTools protocol): the same scenario's JSON report and a
  `berth compare -o json` report, opened in the live page and read in the browser, then back to
  the cluster's own timeline.
Chromium is required (/usr/bin/chromium). Prints one line per check and "N passed, M failed".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ui_e2e  # noqa: E402
from run_ui_e2e import CHROMIUM, DevTools, Fail, Up, pod, render, section, text  # noqa: E402
from run_ui_e2e import run_checks, wait_for  # noqa: E402

BERTH = EXAMPLES = WORK = None


def berth(*args):
    p = subprocess.run([BERTH, *args], capture_output=True, text=True, timeout=300)
    return p


def scenario_reports():
    """The node-failure scenario's JSON and HTML reports (run once, kept for the checks)."""
    if not hasattr(scenario_reports, "cached"):
        path = os.path.join(EXAMPLES, "scenarios", "node-failure.yaml")
        j = berth("scenario", "run", path, "-o", "json")
        if j.returncode != 0:
            raise Fail("scenario -o json: rc %d %s" % (j.returncode, j.stderr[-1500:]))
        h = berth("scenario", "run", path, "-o", "html")
        if h.returncode != 0:
            raise Fail("scenario -o html: rc %d %s" % (h.returncode, h.stderr[-1500:]))
        json_path = os.path.join(WORK, "node-failure.json")
        html_path = os.path.join(WORK, "node-failure.html")
        open(json_path, "w").write(j.stdout)
        open(html_path, "w").write(h.stdout)
        scenario_reports.cached = (json.loads(j.stdout), json_path, h.stdout, html_path)
    return scenario_reports.cached


def checkpoint_labels(plot):
    return re.findall(r'class="marker-label checkpoint-label"[^>]*>([^<]*)<', plot)


def attr(markup, name):
    m = re.search(r'\b%s="([^"]*)"' % name, markup)
    if not m:
        raise Fail("no %s in %s" % (name, markup[:300]))
    return m.group(1)


# ---------------------------------------------------------------- checks

def check_scenario_html_page(up):
    report, _, page, html_path = scenario_reports()
    if re.search(r'(src|href)="(?!data:)', page):
        raise Fail("the page loads something: %s" % re.findall(r'(?:src|href)="[^"]*"', page))
    dom = render(up, "", url="file://" + html_path)
    title = text(section(dom, "timeline-title")).strip()
    if title != "Scenario node-failure (seed 1)":
        raise Fail("title %r" % title)
    pods = section(dom, "timeline-pods")
    points = len(report["series"]["points"])
    if points < 5 or attr(pods, "data-points") != str(points):
        raise Fail("pods plot draws %s points, the report has %d" % (attr(pods, "data-points"),
                                                                     points))
    names = [c["name"] for c in report["checkpoints"]]
    if names != ["running", "node-down", "recovered", "scaled"] or checkpoint_labels(pods) != names:
        raise Fail("checkpoint labels %s, report %s" % (checkpoint_labels(pods), names))
    events = section(dom, "timeline-events")
    if attr(events, "data-rows") != str(len(report["timeline"])):
        raise Fail("events table has %s rows, the timeline %d" % (attr(events, "data-rows"),
                                                                 len(report["timeline"])))
    if "PodEvicted" not in text(events) or "steps[3]" not in text(events):
        raise Fail("events table: %s" % text(events)[:1500])
    table = text(section(dom, "timeline-checkpoints"))
    for name in names + ["end"]:
        if name not in table:
            raise Fail("no checkpoint %s in %s" % (name, table))
    running = report["end"]["pods"]["byPhase"]["Running"]
    if "Running (now %d)" % running not in text(dom):
        raise Fail("the legend does not say Running (now %d): %s" % (running, text(dom)[:1500]))
    nodes = section(dom, "timeline-nodes")
    # node-002 went NotReady and came back: the not-ready line reaches 1 and returns to 0.
    not_ready = [p["nodesNotReady"] for p in report["series"]["points"]]
    if max(not_ready) != 1 or not_ready[-1] != 0 or "Not ready (now 0)" not in text(dom):
        raise Fail("nodes plot: %s / %s" % (not_ready, text(dom)[-300:]))
    if attr(nodes, "data-points") != str(points) or 'data-name="Not ready"' not in nodes:
        raise Fail("nodes plot: %s" % nodes[:500])


def check_timeline_endpoint_needs_the_token(up):
    status, _, _ = up.request("GET", "/ui/api/timeline", auth=False)
    if status != 401:
        raise Fail("without a token: %d" % status)
    status, _, _ = up.request("GET", "/ui/api/timeline", token="not-the-token")
    if status != 401:
        raise Fail("with a wrong token: %d" % status)
    status, headers, body = up.request("GET", "/ui/api/timeline")
    if status != 200 or "application/json" not in headers.get("Content-Type", ""):
        raise Fail("timeline: %d %s" % (status, body[:300]))
    j = json.loads(body)
    last = j["points"][-1]
    # web is bound (no kubelet runs it here), huge pending; the four demo nodes.
    got = (last["pending"], last["scheduled"], last["nodesReady"] + last["nodesNotReady"])
    if got != (1, 1, 4):
        raise Fail("last point %s" % last)
    if j["maxBuckets"] != 480 or not j["startedAt"].endswith("Z"):
        raise Fail("timeline: %s" % {k: j[k] for k in ("maxBuckets", "startedAt")})
    if j["totals"]["preemptions"] != 1 or j["events"][-1]["object"] != "default/victim":
        raise Fail("the Preempted event is not counted: %s" % j["events"])


def check_live_timeline_tab(up):
    dom = render(up, "#token=%s&tab=timeline" % up.token)
    if not re.search(r'<main id="cluster-view"[^>]*hidden', dom):
        raise Fail("the cluster view is still shown")
    title = text(section(dom, "timeline-title")).strip()
    if title != "This cluster since it started":
        raise Fail("title %r" % title)
    pods = section(dom, "timeline-pods")
    if int(attr(pods, "data-points")) < 1:
        raise Fail("no points drawn")
    shown = text(section(dom, "timeline-view"))
    for want in ("Pending (now 1)", "Scheduled (bound) (now 1)", "Preempted", "default/victim",
                 "Preemptions 1"):
        if want not in shown:
            raise Fail("the Timeline tab does not show %r: %s" % (want, shown[:2000]))


def open_report(browser, path):
    doc = browser.call("DOM.getDocument")
    node = browser.call("DOM.querySelector", nodeId=doc["root"]["nodeId"], selector="#timeline-file")
    browser.call("DOM.setFileInputFiles", files=[path], nodeId=node["nodeId"])


def title_is(browser, want):
    return wait_for("the title " + want, lambda: browser.evaluate(
        "(document.getElementById('timeline-title') || {}).textContent === %s" % json.dumps(want)),
        timeout=30)


def check_file_picker_opens_reports(up):
    report, json_path, _, _ = scenario_reports()
    compare_path = os.path.join(WORK, "compare.json")
    out = berth("compare", "--config", "default", "--config",
                os.path.join(EXAMPLES, "compare", "binpack.yaml"), "-f",
                os.path.join(EXAMPLES, "simulate", "cluster.yaml"), "-o", "json")
    if out.returncode != 0:
        raise Fail("compare: rc %d %s" % (out.returncode, out.stderr[-1500:]))
    open(compare_path, "w").write(out.stdout)
    compared = json.loads(out.stdout)
    browser = DevTools()
    try:
        browser.call("Page.navigate", url=up.url + "/ui/#token=%s&tab=timeline" % up.token)
        title_is(browser, "This cluster since it started")
        browser.call("DOM.enable")
        open_report(browser, json_path)
        title_is(browser, "Scenario node-failure (seed 1)")
        labels = browser.evaluate(
            "[...document.querySelectorAll('#timeline-pods .checkpoint-label')].map(e => e.textContent)")
        if labels != [c["name"] for c in report["checkpoints"]]:
            raise Fail("checkpoint labels %s" % labels)
        drawn = browser.evaluate("document.getElementById('timeline-pods').dataset.points")
        if drawn != str(len(report["series"]["points"])):
            raise Fail("points %s" % drawn)
        open_report(browser, compare_path)
        title_is(browser, "Comparison of 2 configurations")
        head = browser.evaluate("document.querySelector('#compare-table thead').textContent")
        for c in compared["configurations"]:
            if c["name"] not in head:
                raise Fail("compare table header %r lacks %s" % (head, c["name"]))
        nodes = browser.evaluate("document.getElementById('compare-per-node').dataset.groups")
        if nodes != str(len(compared["configurations"][0]["perNode"])):
            raise Fail("per-node bars for %s nodes" % nodes)
        browser.evaluate("document.getElementById('timeline-live').click()")
        title_is(browser, "This cluster since it started")
        bad = os.path.join(WORK, "bad.json")
        open(bad, "w").write('{"kind": "Something"}')
        open_report(browser, bad)
        wait_for("the error", lambda: browser.evaluate(
            "(document.getElementById('timeline-error') || {}).textContent || ''").find(
                "not a report") >= 0, timeout=30)
    finally:
        browser.close()


def create(up, path, body):
    status, _, text_ = up.request("POST", path, body=body)
    if status != 201:
        raise Fail("create %s: %d %s" % (path, status, text_[:500]))


def timeline(up):
    status, _, body = up.request("GET", "/ui/api/timeline")
    if status != 200:
        raise Fail("timeline: %d %s" % (status, body[:300]))
    return json.loads(body)


def check_scheduler_preemption_is_counted(up):
    """A real preemption: the scheduler's Preempted event reaches the timeline."""
    before = timeline(up)["totals"]["preemptions"]
    create(up, "/api/v1/nodes", {
        "metadata": {"name": "tiny", "labels": {"kubernetes.io/hostname": "tiny"}},
        "status": {"capacity": {"cpu": "1", "memory": "4Gi", "pods": "10"},
                   "allocatable": {"cpu": "1", "memory": "4Gi", "pods": "10"},
                   "conditions": [{"type": "Ready", "status": "True"}]}})
    create(up, "/apis/scheduling.k8s.io/v1/priorityclasses",
           {"metadata": {"name": "high"}, "value": 1000})
    pin = {"kubernetes.io/hostname": "tiny"}
    low = pod("low", "800m")
    low["spec"]["nodeSelector"] = pin
    create(up, "/api/v1/namespaces/default/pods", low)
    wait_for("low bound", lambda: run_ui_e2e.get_pod(up, "low")["spec"].get("nodeName"))
    high = pod("high", "800m")
    high["spec"].update(nodeSelector=pin, priorityClassName="high")
    create(up, "/api/v1/namespaces/default/pods", high)
    # No kubelet runs here: the victim stays Terminating, and high waits, nominated to tiny.
    j = wait_for("the preemption in the timeline",
                 lambda: (lambda t: t if t["totals"]["preemptions"] == before + 1 else None)(
                     timeline(up)), timeout=30)
    if not any(e["kind"] == "Preempted" and e["object"] == "default/low" for e in j["events"]):
        raise Fail("no Preempted event for default/low: %s" % j["events"])
    if j["points"][-1]["nodesReady"] != 5:
        raise Fail("the new node is not counted: %s" % j["points"][-1])
    # The victim leaves the scheduled count (Terminating, waiting for a kubelet, or gone); a
    # preemption is not an eviction.
    j = wait_for("the victim no longer scheduled", lambda: (
        lambda t: t if t["points"][-1]["scheduled"] == 1 else None)(timeline(up)), timeout=30)
    if j["totals"]["evictions"] != 0:
        raise Fail("the preemption counted as an eviction: %s" % j["totals"])


CHECKS = [check_scenario_html_page, check_timeline_endpoint_needs_the_token,
          check_live_timeline_tab, check_file_picker_opens_reports,
          check_scheduler_preemption_is_counted]


def main():
    global BERTH, EXAMPLES, WORK
    BERTH = os.path.abspath(sys.argv[1])
    EXAMPLES = os.path.abspath(sys.argv[2])
    if not os.path.exists(CHROMIUM):
        print("FAIL %s is missing: install Debian's chromium" % CHROMIUM)
        sys.exit(1)
    data_dir = tempfile.mkdtemp(prefix="berth-timeline-e2e-")
    WORK = tempfile.mkdtemp(prefix="berth-timeline-files-")
    passed = failed = 0
    up = None
    try:
        up = Up(BERTH, data_dir)
        for name, cpu in (("web", "1"), ("huge", "100")):
            status, _, body = up.request("POST", "/api/v1/namespaces/default/pods",
                                         body=pod(name, cpu))
            if status != 201:
                raise Fail("create %s: %d %s" % (name, status, body))
        wait_for("web bound", lambda: run_ui_e2e.get_pod(up, "web")["spec"].get("nodeName"))
        status, _, body = up.request("POST", "/api/v1/namespaces/default/events", body={
            "metadata": {"name": "victim.preempted"}, "reason": "Preempted", "type": "Normal",
            "message": "Preempted by pod 1234 on node demo-1",
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "victim"}})
        if status != 201:
            raise Fail("create the event: %d %s" % (status, body))
        ok, bad = run_checks(CHECKS, up)
        passed += ok
        failed += bad
    except Fail as e:
        failed += 1
        print("FAIL startup: %s" % e)
    finally:
        if up:
            up.stop()
        if failed:
            print("berth up log (tail):\n" + open(os.path.join(data_dir, "up.log")).read()[-4000:])
        shutil.rmtree(data_dir, ignore_errors=True)
        shutil.rmtree(WORK, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
