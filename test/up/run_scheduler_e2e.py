#!/usr/bin/env python3
"""End-to-end tests of `berth scheduler` against the API server of `berth up --no-scheduler`.

Usage: run_scheduler_e2e.py BERTH

* two schedulers with leader election: only the leader binds; after the leader is killed
  (SIGKILL) the other takes over within the lease duration;
* `--master` through `kubectl proxy`, no credentials;
* bad input: unknown context, unreadable kubeconfig, unreachable server, wrong CA.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import KUBECTL, Fail, Up, create, free_port, pod_manifest, wait_for  # noqa: E402


class Scheduler:
    def __init__(self, berth, args, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen([berth, "scheduler"] + args, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def bound_count(up, selector):
    pods = json.loads(up.kubectl(["get", "pods", "-l", selector, "-o", "json"])[1])["items"]
    return sum(1 for p in pods if p["spec"].get("nodeName")), len(pods)


def check_leader_election(berth, up, tmp):
    common = ["--kubeconfig", up.kubeconfig, "--leader-elect=true",
              "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
              "--leader-elect-retry-period=500ms", "--secure-port=0", "-v=2"]
    a = Scheduler(berth, common, os.path.join(tmp, "a.log"))
    time.sleep(1.5)
    b = Scheduler(berth, common, os.path.join(tmp, "b.log"))
    try:
        create(up, [pod_manifest("le-a-%d" % i, labels={"batch": "a"}) for i in range(20)])
        wait_for("batch a bound", lambda: bound_count(up, "batch=a") == (20, 20), timeout=60)
        if "Successfully bound" in b.text():
            raise Fail("the follower bound pods while the leader was alive")
        lease = json.loads(up.kubectl(["get", "lease", "-n", "kube-system", "kube-scheduler",
                                       "-o", "json"])[1])
        if not lease["spec"].get("holderIdentity"):
            raise Fail("no lease holder")
        a.stop(signal.SIGKILL)
        killed = time.time()
        create(up, [pod_manifest("le-b-%d" % i, labels={"batch": "b"}) for i in range(20)])
        wait_for("batch b bound by the follower", lambda: bound_count(up, "batch=b") == (20, 20),
                 timeout=30)
        took = time.time() - killed
        if took > 15:
            raise Fail("takeover took %.1fs" % took)
        # The follower logs each bind after the API server has applied it: on a loaded machine
        # the pods can show as bound a moment before the lines are written.
        deadline = time.time() + 10
        while "Successfully bound" not in b.text() and time.time() < deadline:
            time.sleep(0.2)
        if "Successfully bound" not in b.text():
            raise Fail("the follower did not bind after the leader died:\n" + b.text()[-2000:])
    finally:
        a.stop()
        rc = b.stop(signal.SIGTERM)
    if rc != 0:
        raise Fail("scheduler exited with %d on SIGTERM:\n%s" % (rc, b.text()[-2000:]))
    lease = json.loads(up.kubectl(["get", "lease", "-n", "kube-system", "kube-scheduler",
                                   "-o", "json"])[1])
    if lease["spec"].get("holderIdentity"):
        raise Fail("the lease was not released on SIGTERM: %r" % lease["spec"])


def check_master_through_proxy(berth, up, tmp):
    port = free_port()
    proxy = subprocess.Popen([KUBECTL, "proxy", "--port", str(port)], env=up.env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)
    s = None
    try:
        time.sleep(1)
        s = Scheduler(berth, ["--master", "http://127.0.0.1:%d" % port, "--leader-elect=false",
                              "--secure-port=0"], os.path.join(tmp, "proxy.log"))
        create(up, [pod_manifest("proxied-%d" % i, labels={"batch": "proxy"}) for i in range(5)])
        wait_for("pods bound through kubectl proxy",
                 lambda: bound_count(up, "batch=proxy") == (5, 5), timeout=60)
    finally:
        if s:
            s.stop()
        proxy.terminate()
        proxy.wait()


def check_bad_input(berth, up, tmp):
    def run(args, env_extra=None):
        env = dict(os.environ)
        env.pop("KUBECONFIG", None)
        env.update(env_extra or {})
        p = subprocess.run([berth, "scheduler", "--secure-port=0", "--leader-elect=false"] + args,
                           capture_output=True, text=True, timeout=60, env=env)
        return p.returncode, p.stderr

    rc, err = run(["--kubeconfig", "/nonexistent/kubeconfig"])
    if rc == 0 or "/nonexistent/kubeconfig" not in err:
        raise Fail("unreadable kubeconfig: rc %d %r" % (rc, err))
    ctx = os.path.join(tmp, "ctx.yaml")
    with open(up.kubeconfig) as f:
        text = f.read().replace('"current-context": "berth"', '"current-context": "nope"')
    with open(ctx, "w") as f:
        f.write(text)
    rc, err = run(["--kubeconfig", ctx])
    if rc == 0 or 'context "nope" not found' not in err:
        raise Fail("unknown context: rc %d %r" % (rc, err))
    rc, err = run(["--master", "http://127.0.0.1:%d" % free_port()])
    if rc == 0 or "cannot reach the API server" not in err:
        raise Fail("unreachable server: rc %d %r" % (rc, err))
    # A CA that did not sign the server's certificate.
    key, crt = os.path.join(tmp, "other.key"), os.path.join(tmp, "other.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=other-ca", "-days", "1",
                    "-keyout", key, "-out", crt], check=True, capture_output=True)
    cfg = json.load(open(up.kubeconfig))
    del cfg["clusters"][0]["cluster"]["certificate-authority-data"]
    cfg["clusters"][0]["cluster"]["certificate-authority"] = crt
    wrong_ca = os.path.join(tmp, "wrongca.yaml")
    json.dump(cfg, open(wrong_ca, "w"))
    rc, err = run(["--kubeconfig", wrong_ca])
    if rc == 0 or "TLS handshake failed" not in err or err.count("\n") != 1:
        raise Fail("wrong CA: rc %d %r" % (rc, err))


def check_endpoints_and_write_config(berth, up, tmp):
    port = free_port()
    s = Scheduler(berth, ["--kubeconfig", up.kubeconfig, "--leader-elect=false",
                          "--secure-port=%d" % port, "--bind-address=127.0.0.1",
                          "--authentication-skip-lookup", "--some-future-flag=1"],
                  os.path.join(tmp, "ep.log"))
    try:
        def get(path):
            p = subprocess.run(["curl", "-sk", "https://127.0.0.1:%d%s" % (port, path)],
                               capture_output=True, text=True, timeout=10)
            return p.stdout
        wait_for("readyz", lambda: get("/readyz") == "ok", timeout=30)
        if get("/healthz") != "ok":
            raise Fail("healthz")
        create(up, [pod_manifest("metered-%d" % i, labels={"batch": "metrics"}) for i in range(3)])
        wait_for("metered pods bound", lambda: bound_count(up, "batch=metrics") == (3, 3))
        text = wait_for("attempts in /metrics", lambda: (lambda t: t if 'result="scheduled"' in t
                                                        else None)(get("/metrics")))
        for name in ["scheduler_schedule_attempts_total", "scheduler_pending_pods",
                     "scheduler_scheduling_attempt_duration_seconds_bucket",
                     "scheduler_pod_scheduling_sli_duration_seconds_bucket",
                     "scheduler_pod_scheduling_attempts_bucket",
                     'scheduler_cache_size{type="nodes"}', 'scheduler_cache_size{type="pods"}',
                     'scheduler_cache_size{type="assumed_pods"} 0',
                     'scheduler_goroutines{operation="binding"}',
                     'scheduler_framework_extension_point_duration_seconds_bucket{'
                     'extension_point="Bind",status="Success",profile="default-scheduler"',
                     'scheduler_framework_extension_point_duration_seconds_count{'
                     'extension_point="PreFilter",status="Success",profile="default-scheduler"}',
                     'scheduler_queue_incoming_pods_total{queue="active",event="PodAdd"}',
                     "# TYPE scheduler_unschedulable_pods gauge",
                     'scheduler_plugin_evaluation_total{plugin="NodeResourcesFit",'
                     'extension_point="Filter",profile="default-scheduler"}',
                     'scheduler_plugin_evaluation_total{plugin="TaintToleration",'
                     'extension_point="Score",profile="default-scheduler"}',
                     'scheduler_event_handling_duration_seconds_bucket{event="NodeAdd",le="0.0001"}',
                     'scheduler_event_handling_duration_seconds_count{event="UnscheduledPodAdd"}',
                     'scheduler_event_handling_duration_seconds_count{event="AssignedPodAdd"}',
                     "# TYPE scheduler_plugin_execution_duration_seconds histogram",
                     "# TYPE scheduler_permit_wait_duration_seconds histogram",
                     "# TYPE scheduler_queueing_hint_execution_duration_seconds histogram"]:
            if name not in text:
                raise Fail("%s missing from /metrics" % name)
        # Plugin durations are taken in a random tenth of the cycles: more pods until one was.
        timed = ('scheduler_plugin_execution_duration_seconds_bucket{plugin="NodeResourcesFit",'
                 'extension_point="PreFilter",status="Success",le="1e-05"}')
        for batch in range(10):
            if timed in get("/metrics"):
                break
            create(up, [pod_manifest("sampled-%d-%d" % (batch, i), cpu="10m", memory="8Mi",
                                     labels={"batch": "sampled"}) for i in range(20)])
            n = 20 * (batch + 1)
            wait_for("sampled pods bound", lambda: bound_count(up, "batch=sampled") == (n, n))
        text = get("/metrics")
        for name in [timed, 'scheduler_plugin_execution_duration_seconds_count{'
                            'plugin="DefaultBinder",extension_point="Bind",status="Success"}']:
            if name not in text:
                raise Fail("%s missing from /metrics" % name)
        cfg = json.loads(get("/configz"))
        if "componentconfig" not in cfg:
            raise Fail("configz: %r" % cfg)
        log = s.text()
        if "--some-future-flag" not in log or "--authentication-skip-lookup" not in log:
            raise Fail("ignored flags were not reported:\n" + log[-1500:])
    finally:
        s.stop()
    out = os.path.join(tmp, "written.yaml")
    p = subprocess.run([berth, "scheduler", "--write-config-to", out, "--kube-api-qps=7"],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0 or "kind: KubeSchedulerConfiguration" not in open(out).read() or \
            "qps: 7" not in open(out).read():
        raise Fail("--write-config-to: rc %d %s" % (p.returncode, p.stderr))


def nodes_of(up, selector):
    pods = json.loads(up.kubectl(["get", "pods", "-l", selector, "-o", "json"])[1])["items"]
    return {p["spec"].get("nodeName") for p in pods}


def check_legacy_policy(berth, up, tmp):
    """A legacy Policy from a file and from a ConfigMap: MostRequestedPriority packs pods."""
    policy = {"kind": "Policy", "apiVersion": "v1",
              "predicates": [{"name": "PodFitsResources"}, {"name": "HostName"}],
              "priorities": [{"name": "MostRequestedPriority", "weight": 1}]}
    path = os.path.join(tmp, "policy.json")
    json.dump(policy, open(path, "w"))
    for source, args in (("file", ["--policy-config-file", path]),
                         ("configmap", ["--policy-configmap", "sched-policy"])):
        if source == "configmap":
            up.kubectl(["create", "configmap", "sched-policy", "-n", "kube-system",
                        "--from-file=policy.cfg=" + path])
        s = Scheduler(berth, ["--kubeconfig", up.kubeconfig, "--leader-elect=false",
                              "--secure-port=0"] + args, os.path.join(tmp, source + ".log"))
        try:
            label = "batch=policy-" + source
            create(up, [pod_manifest("policy-%s-%d" % (source, i), cpu="500m",
                                     labels={"batch": "policy-" + source}) for i in range(4)])
            wait_for("pods bound under the %s policy" % source,
                     lambda: bound_count(up, label) == (4, 4), timeout=60)
            if len(nodes_of(up, label)) != 1:
                raise Fail("MostRequestedPriority did not pack: %r" % nodes_of(up, label))
        finally:
            s.stop()
    up.kubectl(["create", "configmap", "no-policy", "-n", "kube-system", "--from-literal=x=y"])
    p = subprocess.run([berth, "scheduler", "--kubeconfig", up.kubeconfig, "--secure-port=0",
                        "--leader-elect=false", "--policy-configmap", "no-policy"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode == 0 or 'no data key "policy.cfg"' not in p.stderr:
        raise Fail("configmap without policy.cfg: rc %d %r" % (p.returncode, p.stderr))
    bad = os.path.join(tmp, "bad-policy.json")
    json.dump({"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "Nope"}]},
              open(bad, "w"))
    p = subprocess.run([berth, "scheduler", "--kubeconfig", up.kubeconfig, "--secure-port=0",
                        "--leader-elect=false", "--policy-config-file", bad],
                       capture_output=True, text=True, timeout=60)
    if p.returncode == 0 or 'unknown predicate "Nope"' not in p.stderr:
        raise Fail("unknown predicate: rc %d %r" % (p.returncode, p.stderr))


def check_simulator_shapes(annotations, prefix):
    """Each record decodes into the Go type kube-scheduler-simulator marshals it from."""
    def strings(m):
        return isinstance(m, dict) and all(isinstance(v, str) for v in m.values())
    shapes = {
        "prefilter-result-status": strings, "prescore-result": strings,
        "reserve-result": strings, "permit-result": strings, "permit-result-timeout": strings,
        "prebind-result": strings, "bind-result": strings,
        "prefilter-result": lambda m: isinstance(m, dict) and all(
            isinstance(v, list) and all(isinstance(n, str) for n in v) for v in m.values()),
    }
    for key in ("filter-result", "postfilter-result", "score-result", "finalscore-result"):
        shapes[key] = lambda m: isinstance(m, dict) and all(strings(v) for v in m.values())
    for key, ok in shapes.items():
        if prefix + key not in annotations or not ok(json.loads(annotations[prefix + key])):
            raise Fail("%s: not in the simulator's shape: %r" % (key, annotations.get(prefix + key)))
    if not isinstance(annotations.get(prefix + "selected-node"), str):
        raise Fail("selected-node missing")
    history = json.loads(annotations[prefix + "result-history"])
    if not isinstance(history, list) or not all(strings(e) for e in history):
        raise Fail("result-history: %r" % history)


def check_record_decisions(berth, up, tmp):
    """--record-decisions: kube-scheduler-simulator's annotations, written once per decision."""
    prefix = "kube-scheduler-simulator.sigs.k8s.io/"
    s = Scheduler(berth, ["--kubeconfig", up.kubeconfig, "--leader-elect=false",
                          "--secure-port=0", "--record-decisions"],
                  os.path.join(tmp, "records.log"))
    try:
        create(up, [pod_manifest("recorded"), pod_manifest("recorded-huge", cpu="500")])

        def pod(name):
            return json.loads(up.kubectl(["get", "pod", name, "-o", "json"])[1])
        def annotated(name, key):
            return (pod(name)["metadata"].get("annotations") or {}).get(prefix + key)
        wait_for("selected-node", lambda: annotated("recorded", "selected-node"))
        p = pod("recorded")
        if annotated("recorded", "selected-node") != p["spec"]["nodeName"]:
            raise Fail("selected-node differs from the binding")
        filt = json.loads(annotated("recorded", "filter-result"))
        if filt.get(p["spec"]["nodeName"], {}).get("NodeResourcesFit") != "passed":
            raise Fail("filter-result: %r" % filt)
        check_simulator_shapes(p["metadata"]["annotations"], prefix)
        if json.loads(annotated("recorded", "bind-result")) != {"DefaultBinder": "success"}:
            raise Fail("bind-result: %r" % annotated("recorded", "bind-result"))
        history = json.loads(annotated("recorded", "result-history"))
        if not history or history[-1].get(prefix + "selected-node") != p["spec"]["nodeName"]:
            raise Fail("result-history: %r" % history)
        huge = wait_for("filter-result of the unschedulable pod",
                        lambda: annotated("recorded-huge", "filter-result"))
        if "Insufficient cpu" not in huge or annotated("recorded-huge", "selected-node"):
            raise Fail("unschedulable record: %r" % huge)
        check_simulator_shapes(pod("recorded-huge")["metadata"]["annotations"], prefix)
        # Identical decisions are not written again (an annotation change retries the pod): once
        # the writes of the first attempt have landed, the pod stays unchanged.
        def settled():
            rv = pod("recorded-huge")["metadata"]["resourceVersion"]
            time.sleep(1.5)
            return pod("recorded-huge")["metadata"]["resourceVersion"] == rv and rv
        rv = wait_for("the unschedulable pod to settle", settled, timeout=20)
        time.sleep(3)
        if pod("recorded-huge")["metadata"]["resourceVersion"] != rv:
            raise Fail("the unschedulable pod keeps being rewritten")
    finally:
        s.stop()
        up.kubectl(["delete", "pod", "recorded-huge", "--wait=false"], check=False)


def check_every_verbosity(berth, up, tmp):
    """Each documented -v level (0..10) schedules pods and stops cleanly; -v 10 logs scores."""
    for v in range(11):
        log = os.path.join(tmp, "v%d.log" % v)
        s = Scheduler(berth, ["--kubeconfig", up.kubeconfig, "--leader-elect=false",
                              "--secure-port=0", "-v=%d" % v], log)
        label = {"batch": "v%d" % v}
        prefer = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In",
                 "values": ["zone-a"]}]}}]}}}
        try:
            # A plain pod (most Score plugins' PreScore skips it) and one they all score.
            create(up, [pod_manifest("verbosity-%d-plain" % v, labels=label),
                        pod_manifest("verbosity-%d-prefer" % v, labels=label, extra_spec=prefer),
                        pod_manifest("verbosity-%d-third" % v, labels=label)])
            wait_for("pods bound at -v %d" % v,
                     lambda: s.proc.poll() is not None or
                     bound_count(up, "batch=v%d" % v) == (3, 3), timeout=60)
            if s.proc.poll() is not None:
                raise Fail("berth scheduler -v %d exited with %d:\n%s" %
                           (v, s.proc.returncode, s.text()[-2000:]))
        finally:
            rc = s.stop()
        if rc != 0:
            raise Fail("berth scheduler -v %d exited with %d on SIGTERM:\n%s" %
                       (v, rc, s.text()[-2000:]))
        text = s.text()
        if v >= 10 and "Plugin scored node for pod" not in text:
            raise Fail("-v 10 logged no per-node scores:\n" + text[-2000:])
        if v < 10 and "Plugin scored node for pod" in text:
            raise Fail("-v %d logged per-node scores" % v)
        if v >= 2 and "Successfully bound pod to node" not in text:
            raise Fail("-v %d did not log the binds" % v)


def check_up_at_verbosity_10(berth, up, tmp):
    """`berth up -v 10` (scheduler in process) schedules a pod and keeps serving."""
    data = tempfile.mkdtemp(prefix="berth-up-v10-")
    up10 = Up(berth, data, demo_nodes=3, extra=["-v", "10"])
    try:
        up10.kubectl(["run", "v1", "--image=nginx"])
        wait_for("pod v1 bound under berth up -v 10",
                 lambda: up10.proc.poll() is not None or json.loads(up10.kubectl(
                     ["get", "pod", "v1", "-o", "json"])[1])["spec"].get("nodeName"))
        if up10.proc.poll() is not None:
            raise Fail("berth up -v 10 exited with %d: %s" % (up10.proc.returncode, up10.tail()))
        up10.kubectl(["get", "nodes"])
        up10.log.flush()
        with open(os.path.join(data, "up.log")) as f:
            if "Plugin scored node for pod" not in f.read():
                raise Fail("berth up -v 10 logged no per-node scores")
    finally:
        up10.stop()
        shutil.rmtree(data, ignore_errors=True)


def check_stop_with_a_backlog(berth, up, tmp):
    """SIGTERM with hundreds of pods assumed and events queued behind a slow client: the
    scheduler forgets what it has not bound and stops within seconds (the kubelet kills it at
    30 s), and the pods it left are bound by the next scheduler."""
    create(up, [pod_manifest("backlog-%03d" % i, cpu="10m", labels={"batch": "backlog"})
                for i in range(300)])
    log = os.path.join(tmp, "backlog.log")
    # 20 requests a second: binding all 300 and writing their events would take 30 s.
    s = Scheduler(berth, ["--kubeconfig", up.kubeconfig, "--leader-elect=false",
                          "--secure-port=0", "--kube-api-qps=20", "--kube-api-burst=20"], log)
    try:
        wait_for("the first binds", lambda: bound_count(up, "batch=backlog")[0] >= 20, timeout=60)
        t = time.time()
        rc = s.stop(signal.SIGTERM)
        took = time.time() - t
    finally:
        s.stop(signal.SIGKILL)
    if rc != 0:
        raise Fail("exit %d on SIGTERM:\n%s" % (rc, s.text()[-2000:]))
    if took > 15:
        raise Fail("stopping took %.1f s" % took)
    bound, total = bound_count(up, "batch=backlog")
    if bound == total:
        raise Fail("every pod was bound before the stop: the check proves nothing")
    # Nothing is stranded: another scheduler binds the rest.
    s2 = Scheduler(berth, ["--kubeconfig", up.kubeconfig, "--leader-elect=false",
                           "--secure-port=0"], os.path.join(tmp, "backlog2.log"))
    try:
        wait_for("the rest bound by the next scheduler",
                 lambda: bound_count(up, "batch=backlog") == (300, 300), timeout=240)
    finally:
        s2.stop()
    up.kubectl(["delete", "pods", "-l", "batch=backlog", "--wait=false"])


CHECKS = [check_leader_election, check_master_through_proxy, check_bad_input,
          check_endpoints_and_write_config, check_legacy_policy, check_record_decisions,
          check_every_verbosity, check_up_at_verbosity_10, check_stop_with_a_backlog]


def main():
    berth = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="berth-sched-e2e-")
    passed = failed = 0
    up = None
    try:
        up = Up(berth, tmp, demo_nodes=4, extra=["--no-scheduler"])
        for check in CHECKS:
            t = time.time()
            try:
                check(berth, up, tmp)
                passed += 1
                print("PASS %s (%.1fs)" % (check.__name__, time.time() - t), flush=True)
            except (Fail, subprocess.TimeoutExpired, KeyError, ValueError) as e:
                failed += 1
                print("FAIL %s: %s" % (check.__name__, e), flush=True)
    except Fail as e:
        failed += 1
        print("FAIL startup: %s" % e)
    finally:
        if up:
            up.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
