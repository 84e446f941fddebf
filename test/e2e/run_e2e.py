#!/usr/bin/env python3
"""End-to-end tests of the berth binary.

Usage: run_e2e.py BERTH CASES_DIR

Each directory under CASES_DIR is one case of one of two kinds:

* Simulation case: config.yaml (optional), cluster.yaml (or *.yaml manifests listed in
  case.json "files"), expect.json. Runs `berth simulate --output json --seed N` and checks every
  expected pod entry: result, node, nodeIn, feasible, filter (plugin + reasons per rejected
  node; reasonsOneOf accepts any listed alternative), scores (plugin scores per node), total
  (per node), message, messageOneOf (any listed text), messageContains,
  nominatedNode, victims, preFilterPlugin.
* Command case: case.json with "args" (berth arguments; "{case}" expands to the case
  directory), "exit" (expected exit code), and optional "stdoutContains", "stderrContains",
  "stderrLines" (exact number of stderr lines), "sameOutputTwice" (a second run must print the
  same).

Prints one line per case and a final "N passed, M failed" line; exits non-zero on failure.
"""
import json
import os
import subprocess
import sys


class Fail(Exception):
    pass


def run(berth, args, cwd):
    p = subprocess.run([berth] + args, cwd=cwd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check_pod(exp, got):
    pod = exp["pod"]

    def want(key, actual, expected):
        if actual != expected:
            raise Fail("%s: %s is %r, expected %r" % (pod, key, actual, expected))

    if "result" in exp:
        want("result", got.get("result"), exp["result"])
    if "node" in exp:
        want("node", got.get("node"), exp["node"])
    if "nodeIn" in exp:
        if not exp["nodeIn"] and got.get("node"):
            raise Fail("%s: bound to %r, expected no node" % (pod, got.get("node")))
        if exp["nodeIn"] and got.get("node") not in exp["nodeIn"]:
            raise Fail("%s: node %r not in %r" % (pod, got.get("node"), exp["nodeIn"]))
    if "feasible" in exp:
        score = got.get("score") or {}
        feasible = set(score) if score else ({got["node"]} if got.get("node") else set())
        want("feasible set", sorted(feasible), sorted(exp["feasible"]))
    if "filter" in exp:
        f = got.get("filter") or {}
        want("rejected nodes", sorted(f), sorted(exp["filter"]))
        for node, w in exp["filter"].items():
            want("filter[%s].plugin" % node, f[node]["plugin"], w["plugin"])
            if "reasons" in w:
                want("filter[%s].reasons" % node, sorted(f[node]["reasons"]), sorted(w["reasons"]))
            if "reasonsOneOf" in w:
                got_reasons = sorted(f[node]["reasons"])
                if got_reasons not in [sorted(r) for r in w["reasonsOneOf"]]:
                    raise Fail("%s: filter[%s].reasons is %r, expected one of %r"
                               % (pod, node, got_reasons, w["reasonsOneOf"]))
            if "code" in w:
                want("filter[%s].code" % node, f[node]["code"], w["code"])
    if "scores" in exp:
        s = got.get("score") or {}
        for node, plugins in exp["scores"].items():
            if node not in s:
                raise Fail("%s: no score for node %s" % (pod, node))
            for plugin, value in plugins.items():
                want("score[%s].%s" % (node, plugin), s[node]["plugins"].get(plugin), value)
    if "total" in exp:
        s = got.get("score") or {}
        for node, value in exp["total"].items():
            want("score[%s].total" % node, (s.get(node) or {}).get("total"), value)
    if "message" in exp:
        want("message", got.get("message"), exp["message"])
    if "messageOneOf" in exp and got.get("message") not in exp["messageOneOf"]:
        raise Fail("%s: message is %r, expected one of %r" % (pod, got.get("message"), exp["messageOneOf"]))
    for sub in exp.get("messageContains", []):
        if sub not in (got.get("message") or ""):
            raise Fail("%s: message %r lacks %r" % (pod, got.get("message"), sub))
    if "nominatedNode" in exp:
        want("nominatedNode", got.get("nominatedNode"), exp["nominatedNode"])
    if "victims" in exp:
        want("victims", sorted(got.get("victims") or []), sorted(exp["victims"]))
    if "preFilterPlugin" in exp:
        want("preFilter.plugin", (got.get("preFilter") or {}).get("plugin"), exp["preFilterPlugin"])


def run_simulation_case(berth, d, spec):
    args = ["simulate", "--output", "json", "--seed", str(spec.get("seed", 1))]
    if os.path.exists(os.path.join(d, "config.yaml")):
        args += ["--config", "config.yaml"]
    for f in spec.get("files", ["cluster.yaml"]):
        args += ["-f", f]
    code, out, err = run(berth, args, d)
    if code != 0:
        raise Fail("exit %d: %s" % (code, err.strip()))
    doc = json.loads(out)
    by_pod = {r["pod"]: r for r in doc["results"]}
    with open(os.path.join(d, "expect.json")) as fh:
        expect = json.load(fh)
    for exp in expect["pods"]:
        if exp["pod"] not in by_pod:
            raise Fail("%s: not in results" % exp["pod"])
        check_pod(exp, by_pod[exp["pod"]])
    if "results" in expect:
        want = expect["results"]
        got = [r["pod"] for r in doc["results"]]
        if got != want:
            raise Fail("result order %r, expected %r" % (got, want))


def run_command_case(berth, d, spec):
    args = [a.replace("{case}", d) for a in spec["args"]]
    code, out, err = run(berth, args, d)
    if spec.get("sameOutputTwice"):
        code2, out2, _ = run(berth, args, d)
        if (code2, out2) != (code, out):
            raise Fail("a second run printed something else")
    if code != spec.get("exit", 0):
        raise Fail("exit %d, expected %d (stderr: %s)" % (code, spec.get("exit", 0), err.strip()))
    for sub in spec.get("stdoutContains", []):
        if sub not in out:
            raise Fail("stdout lacks %r: %s" % (sub, out[:500]))
    for sub in spec.get("stderrContains", []):
        if sub not in err:
            raise Fail("stderr lacks %r: %s" % (sub, err.strip()))
    if "stderrLines" in spec:
        n = len([l for l in err.splitlines() if l.strip()])
        if n != spec["stderrLines"]:
            raise Fail("stderr has %d lines, expected %d: %s" % (n, spec["stderrLines"], err))


def main():
    berth, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    passed = failed = 0
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if not os.path.isdir(d):
            continue
        spec = {}
        if os.path.exists(os.path.join(d, "case.json")):
            with open(os.path.join(d, "case.json")) as fh:
                spec = json.load(fh)
        try:
            if "args" in spec:
                run_command_case(berth, d, spec)
            else:
                run_simulation_case(berth, d, spec)
            print("PASS", name)
            passed += 1
        except (Fail, ValueError, KeyError, subprocess.TimeoutExpired) as e:
            print("FAIL %s: %s" % (name, e))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
