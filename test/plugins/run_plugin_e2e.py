#!/usr/bin/env python3
"""Plugins loaded from shared libraries (--plugin-library), end to end.

Usage: run_plugin_e2e.py BERTH LIBDIR [CUSTOM_BINARY]

  * simulate: the ToNodeName example library sends every pod of a 10-replica batch to its node
    while it fits, and logs each node's normalized score;
  * berth up --plugin-library: the same through the embedded API server and the real client;
  * the scheduling-framework tutorial's configuration and 10-replica Deployment, unchanged, in
    berth up: ten Running pods on the plugin's node;
  * refused libraries (missing file, no entry point, another SDK version, another toolchain,
    a taken plugin name) give one line naming the library and the problem.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "up"))
from run_up_e2e import Fail, Up, create, pod_manifest, wait_for  # noqa: E402

def profile_with(plugin, weight=None, args=None):
    """A v1 configuration whose default profile also runs `plugin` (with `args`)."""
    entry = "{name: %s%s}" % (plugin, ", weight: %d" % weight if weight else "")
    cfg = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
           "leaderElection: {leaderElect: false}\nprofiles:\n"
           "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
           "      enabled: [%s]\n" % entry)
    if args:
        cfg += "  pluginConfig:\n  - name: %s\n    args: %s\n" % (plugin, args)
    return cfg


def tonodename_config(node_name):
    return profile_with("ToNodeName", 10, "{nodeName: %s}" % node_name)


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def check_simulate(berth, lib, tmp):
    cfg = os.path.join(tmp, "sim.yaml")
    open(cfg, "w").write(tonodename_config("piworknode001"))
    manifests = os.path.join(tmp, "cluster.json")
    with open(manifests, "w") as f:
        for o in [node("node-a"), node("piworknode001"), node("node-b")]:
            f.write(json.dumps(o) + "\n")
        for i in range(10):
            p = pod_manifest("batch-%d" % i, cpu="300m")
            p["metadata"]["namespace"] = "default"
            p["metadata"]["creationTimestamp"] = "2024-01-01T00:00:%02dZ" % i
            f.write(json.dumps(p) + "\n")
    p = subprocess.run([berth, "simulate", "--plugin-library", lib, "--config", cfg, "-f",
                        manifests, "-o", "json"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Fail("simulate: " + p.stderr)
    nodes = {r["pod"]: r.get("node") for r in json.loads(p.stdout)["results"]}
    if set(nodes.values()) != {"piworknode001"} or len(nodes) != 10:
        raise Fail("not all on piworknode001: %r" % nodes)
    if "节点: piworknode001, Score: 100 Pod: default/batch-0" not in p.stderr:
        raise Fail("normalized scores not logged: %r" % p.stderr[:300])


def check_up(berth, lib, tmp):
    cfg = os.path.join(tmp, "up.yaml")
    open(cfg, "w").write(tonodename_config("demo-node-003"))
    data = os.path.join(tmp, "up")
    os.makedirs(data)
    up = Up(berth, data, demo_nodes=4, extra=["--config", cfg, "--plugin-library", lib])
    try:
        create(up, [pod_manifest("lib-%d" % i, labels={"batch": "lib"}) for i in range(5)])
        def placed():
            pods = json.loads(up.kubectl(["get", "pods", "-l", "batch=lib", "-o", "json"])[1])
            names = [p["spec"].get("nodeName") for p in pods["items"]]
            return names if all(names) else None
        names = wait_for("pods bound", placed)
        if set(names) != {"demo-node-003"}:
            raise Fail("bound to %r" % names)
    finally:
        up.stop()


def simulate(berth, libs, cfg_text, objs, tmp):
    cfg = os.path.join(tmp, "cfg.yaml")
    open(cfg, "w").write(cfg_text)
    manifests = os.path.join(tmp, "objs.json")
    with open(manifests, "w") as f:
        for o in objs:
            f.write(json.dumps(o) + "\n")
    args = [berth, "simulate", "--config", cfg, "-f", manifests, "-o", "json"]
    for lib in libs:
        args += ["--plugin-library", lib]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Fail("simulate: " + p.stderr)
    return {r["pod"]: r for r in json.loads(p.stdout)["results"]}


def check_helloworld_v1beta1(berth, libdir, tmp):
    """The v1beta1 fixture: every default score plugin off, HelloWorldPlugin with typed args."""
    cfg = """apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: HelloWorldPlugin}]
  pluginConfig:
  - name: HelloWorldPlugin
    args: {xxx: "xxx", yyy: "123", zzz: 3}
"""
    p = pod_manifest("hello")
    p["metadata"]["namespace"] = "default"
    res = simulate(berth, [os.path.join(libdir, "libhelloworld.so")], cfg,
                   [node("box"), node("node-a"), p], tmp)["default/hello"]
    scores = {n: s["plugins"] for n, s in res.get("score", {}).items()}
    # "box" has one x: 3 + 1; "node-a" none: 3. Only HelloWorldPlugin scores.
    if res.get("node") != "box" or scores["box"] != {"HelloWorldPlugin": 4}:
        raise Fail("hello: %r %r" % (res.get("node"), scores))
    # The library's typed args reject a bad value, naming its YAML path.
    try:
        simulate(berth, [os.path.join(libdir, "libhelloworld.so")],
                 cfg.replace("zzz: 3", "zzz: three"), [node("box"), p], tmp)
    except Fail as e:
        if "profiles[0].pluginConfig[0].args.zzz" not in str(e):
            raise Fail("bad args error does not name the path: %s" % e)
    else:
        raise Fail("bad args accepted")


def check_gang(berth, libdir, tmp):
    """A full group binds together; an incomplete one is rejected after its timeout."""
    cfg = profile_with("GangPermit", args="{timeoutSeconds: 5}")
    objs = [node("n1"), node("n2")]
    for group, n in (("full", 3), ("partial", 2)):
        for i in range(n):
            p = pod_manifest("%s-%d" % (group, i), cpu="100m",
                             labels={"gang": group, "gang-min": "3"})
            p["metadata"]["namespace"] = "default"
            objs.append(p)
    res = simulate(berth, [os.path.join(libdir, "libgang_permit.so")], cfg, objs, tmp)
    full = [res["default/full-%d" % i]["result"] for i in range(3)]
    partial = [res["default/partial-%d" % i]["result"] for i in range(2)]
    if full != ["Scheduled"] * 3:
        raise Fail("full gang: %r" % full)
    if "Scheduled" in partial:
        raise Fail("partial gang bound: %r" % [res["default/partial-%d" % i] for i in range(2)])


def check_multipoint(berth, libdir, tmp):
    """Reserve and PreBind of one plugin talk through CycleState: my-test-pod is refused."""
    cfg = profile_with("MultipointCommunicating")
    objs = [node("n1")]
    for name in ("my-test-pod", "other-pod"):
        p = pod_manifest(name)
        p["metadata"]["namespace"] = "default"
        objs.append(p)
    res = simulate(berth, [os.path.join(libdir, "libmultipoint.so")], cfg, objs, tmp)
    mine, other = res["default/my-test-pod"], res["default/other-pod"]
    if mine["result"] == "Scheduled" or "pod is not permitted" not in mine.get("message", ""):
        raise Fail("my-test-pod: %r" % mine)
    if other["result"] != "Scheduled":
        raise Fail("other-pod: %r" % other)


def check_compiled_in(berth, libdir, tmp):
    """examples/custom-scheduler: berth::Main with ToNodeName compiled in, no library flag."""
    if len(sys.argv) < 4:
        raise Fail("no custom binary given")
    custom = os.path.abspath(sys.argv[3])
    p = pod_manifest("p")
    p["metadata"]["namespace"] = "default"
    res = simulate(custom, [], tonodename_config("piworknode001"),
                   [node("node-a"), node("piworknode001"), p], tmp)["default/p"]
    if res.get("node") != "piworknode001":
        raise Fail("compiled-in ToNodeName: %r" % res)
    # The plain berth binary does not know the plugin.
    r = subprocess.run([berth, "simulate", "--config", os.path.join(tmp, "cfg.yaml"), "-f",
                        os.path.join(tmp, "objs.json")], capture_output=True, text=True)
    if r.returncode == 0 or "ToNodeName" not in r.stderr:
        raise Fail("berth without the plugin: rc %d %r" % (r.returncode, r.stderr))


def check_tutorial_names(berth, libdir, tmp):
    """The scheduling-framework tutorial's configuration, unchanged, with the examples' plugins
    under the tutorial's names: validated, and its ten replicas all on piworknode001."""
    cfg = os.path.join(REPO, "examples", "tutorial-framework", "scheduler-config.yaml")
    lib = os.path.join(libdir, "libtonodename.so")
    p = subprocess.run([berth, "config", "validate", "--plugin-library", lib, cfg],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0 or "valid" not in p.stdout:
        raise Fail("config validate --plugin-library: rc %d %r" % (p.returncode, p.stderr))
    p = subprocess.run([berth, "config", "validate", cfg], capture_output=True, text=True,
                       timeout=30)
    if p.returncode == 0 or "tonodename-scoring-plugin" not in p.stderr:
        raise Fail("config validate without the library: rc %d %r" % (p.returncode, p.stderr))
    objs = [node("node-a"), node("piworknode001"), node("node-b")]
    for i in range(10):
        pod = pod_manifest("test-scheduler-%d" % i, scheduler="sample-scheduler",
                           labels={"app": "test-scheduler"})
        pod["metadata"]["namespace"] = "default"
        objs.append(pod)
    res = simulate(berth, [lib], open(cfg).read(), objs, tmp)
    nodes = {k: r.get("node") for k, r in res.items()}
    if set(nodes.values()) != {"piworknode001"} or len(nodes) != 10:
        raise Fail("tutorial replicas not all on piworknode001: %r" % nodes)
    # multipoint-communicating-plugin under its tutorial name, at Reserve and PreBind.
    mp = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    reserve:
      enabled: [{name: multipoint-communicating-plugin}]
    preBind:
      enabled: [{name: multipoint-communicating-plugin}]
"""
    objs = [node("n1")]
    for name in ("my-test-pod", "other-pod"):
        pod = pod_manifest(name)
        pod["metadata"]["namespace"] = "default"
        objs.append(pod)
    res = simulate(berth, [os.path.join(libdir, "libmultipoint.so")], mp, objs, tmp)
    if res["default/my-test-pod"]["result"] == "Scheduled" or \
            res["default/other-pod"]["result"] != "Scheduled":
        raise Fail("multipoint-communicating-plugin: %r" % res)


def check_tutorial_up(berth, libdir, tmp):
    """The tutorial's check as it runs it: its configuration and test Deployment unchanged, the
    plugin loaded into berth up, ten Running replicas on the plugin's node."""
    cfg = os.path.join(REPO, "examples", "tutorial-framework", "scheduler-config.yaml")
    deployment = os.path.join(REPO, "examples", "tutorial-framework", "test-deployment.yaml")
    data = os.path.join(tmp, "up")
    os.makedirs(data)
    up = Up(berth, data, demo_nodes=3,
            extra=["--config", cfg, "--plugin-library", os.path.join(libdir, "libtonodename.so")])
    try:
        # The node as docs/plugin-authoring.md creates it: its simulated kubelet fills its status.
        up.kubectl(["apply", "-f", "-"], stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "piworknode001"}}))
        up.kubectl(["apply", "-f", deployment])

        def running():
            pods = json.loads(up.kubectl(["get", "pods", "-l", "app=test-scheduler", "-o",
                                          "json"])[1])["items"]
            done = [p for p in pods if p["status"].get("phase") == "Running"]
            return pods if len(done) == 10 and len(pods) == 10 else None
        pods = wait_for("10 Running replicas", running, timeout=90)
        nodes = {p["spec"]["nodeName"] for p in pods}
        if nodes != {"piworknode001"}:
            raise Fail("replicas on %r" % nodes)
        table = up.kubectl(["get", "pod"])[1].splitlines()
        rows = [r for r in table[1:] if r.startswith("test-scheduler-")]
        if len(rows) != 10 or not all("1/1" in r and "Running" in r for r in rows):
            raise Fail("kubectl get pod:\n%s" % "\n".join(table))
        status = json.loads(up.kubectl(["get", "deployment", "test-scheduler", "-o",
                                        "json"])[1])["status"]
        if status.get("readyReplicas") != 10:
            raise Fail("deployment status %r" % status)
    finally:
        up.stop()


def check_refused(berth, libdir, tmp):
    cases = [(os.path.join(libdir, "missing.so"), "no such file"),
             (os.path.join(libdir, "libbad_plugin_noentry.so"), "no entry point"),
             (os.path.join(libdir, "libbad_plugin_version.so"), "built for SDK version"),
             (os.path.join(libdir, "libbad_plugin_abi.so"), "built with othercc 99.1"),
             (os.path.join(libdir, "libbad_plugin_clash.so"), 'plugin "NodeName" is already registered')]
    for lib, want in cases:
        for cmd in (["simulate", "-f", "/dev/null"], ["scheduler", "--secure-port=0"]):
            p = subprocess.run([berth] + cmd + ["--plugin-library", lib], capture_output=True,
                               text=True, timeout=30)
            err = p.stderr.strip()
            if p.returncode == 0 or want not in err or lib not in err or "\n" in err:
                raise Fail("%s %s: rc %d %r" % (cmd[0], lib, p.returncode, err))


def main():
    berth = os.path.abspath(sys.argv[1])
    libdir = os.path.abspath(sys.argv[2])
    lib = os.path.join(libdir, "libtonodename.so")
    passed = failed = 0
    for check in (check_simulate, check_up, check_helloworld_v1beta1, check_gang,
                  check_multipoint, check_tutorial_names, check_tutorial_up, check_compiled_in,
                  check_refused):
        tmp = tempfile.mkdtemp(prefix="berth-plugin-e2e-")
        try:
            check(berth, lib if check in (check_simulate, check_up) else libdir, tmp)
            passed += 1
            print("PASS %s" % check.__name__, flush=True)
        except (Fail, subprocess.TimeoutExpired, KeyError, ValueError) as e:
            failed += 1
            print("FAIL %s: %s" % (check.__name__, e), flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
