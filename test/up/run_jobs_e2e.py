#!/usr/bin/env python3
"""End-to-end tests of the Job, CronJob and ttl-after-finished controllers of `berth up`, with
the real kubectl and the official Python client.

Usage: run_jobs_e2e.py BERTH [CHECK ...]

* an Indexed Job applied with kubectl runs each index once (pods <job>-<index>-xxxxx, hostname
  <job>-<index>) and `kubectl wait --for=condition=complete` returns; status.completedIndexes;
* a Job from `kubectl create job` completes; its pods carry the job-name / controller-uid
  labels and a controller ownerReference;
* pods exiting non-zero fail the Job with BackoffLimitExceeded after upstream's back-off;
  restartPolicy OnFailure restarts in place and counts restarts against backoffLimit;
* activeDeadlineSeconds fails a running Job with DeadlineExceeded and stops its pods;
* ttlSecondsAfterFinished deletes the finished Job, and its pods with it;
* a CronJob `* * * * *` creates <cronjob>-<minutes> within about 70 s, records
  lastScheduleTime / lastSuccessfulTime; `kubectl create job --from=cronjob/...` runs;
* the Python client (BatchV1Api) reads a Job's status.
Prints one line per check and "N passed, M failed".
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_up_e2e import Fail, run_against_up, wait_for, run_python_client  # noqa: E402

RUN = "berth.dev/run-seconds"
EXIT = "berth.dev/exit-code"
INDEX = "batch.kubernetes.io/job-completion-index"


def job(name, annotations, restart="Never", **spec):
    body = {"template": {"metadata": {"annotations": annotations},
                         "spec": {"restartPolicy": restart,
                                  "containers": [{"name": "c", "image": "busybox"}]}}}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"}, "spec": body}


def apply(up, obj):
    up.kubectl(["apply", "-f", "-"], stdin=json.dumps(obj))


def get(up, kind, name):
    rc, out, _ = up.kubectl(["get", kind, name, "-o", "json"], check=False)
    return json.loads(out) if rc == 0 else None


def job_pods(up, name):
    out = up.kubectl(["get", "pods", "-l", "batch.kubernetes.io/job-name=" + name, "-o",
                      "json"])[1]
    return json.loads(out)["items"]


def condition(obj, type_):
    for c in (obj or {}).get("status", {}).get("conditions", []):
        if c["type"] == type_ and c["status"] == "True":
            return c
    return None


def wait_condition(up, name, cond, timeout=90):
    up.kubectl(["wait", "--for=condition=" + cond, "job/" + name, "--timeout=%ds" % timeout],
               timeout=timeout + 30)
    return get(up, "job", name)


# ---------------------------------------------------------------- checks

def check_indexed_job_completes(up):
    apply(up, job("idx", {RUN: "1"}, completions=3, parallelism=2, completionMode="Indexed"))
    j = wait_condition(up, "idx", "complete")
    st = j["status"]
    if st.get("succeeded") != 3 or st.get("completedIndexes") != "0-2" or st.get("active", 0):
        raise Fail("status: %s" % st)
    if not condition(j, "SuccessCriteriaMet") or not st.get("completionTime"):
        raise Fail("conditions: %s" % st)
    pods = job_pods(up, "idx")
    seen = sorted(p["metadata"]["annotations"][INDEX] for p in pods)
    if seen != ["0", "1", "2"]:
        raise Fail("indexes: %s" % seen)
    for p in pods:
        ix = p["metadata"]["annotations"][INDEX]
        if not p["metadata"]["name"].startswith("idx-%s-" % ix) or \
                p["spec"].get("hostname") != "idx-" + ix or \
                p["metadata"]["labels"].get(INDEX) != ix or \
                p["status"]["phase"] != "Succeeded":
            raise Fail("pod %s: %s" % (p["metadata"]["name"], p["spec"].get("hostname")))


def check_kubectl_create_job(up):
    # kubectl create job cannot annotate the template: through --dry-run, as a user would.
    out = up.kubectl(["create", "job", "hello", "--image=busybox", "--dry-run=client", "-o",
                      "json", "--", "true"])[1]
    obj = json.loads(out)
    obj["spec"]["template"].setdefault("metadata", {})["annotations"] = {RUN: "0.5"}
    up.kubectl(["create", "-f", "-"], stdin=json.dumps(obj))
    j = wait_condition(up, "hello", "complete")
    uid = j["metadata"]["uid"]
    pods = job_pods(up, "hello")
    if len(pods) != 1:
        raise Fail("%d pods" % len(pods))
    p = pods[0]
    labels = p["metadata"]["labels"]
    refs = p["metadata"].get("ownerReferences", [])
    if labels.get("batch.kubernetes.io/controller-uid") != uid or labels.get("job-name") != \
            "hello" or not refs or refs[0]["uid"] != uid or not refs[0].get("controller"):
        raise Fail("pod metadata: %s" % p["metadata"])
    table = up.kubectl(["get", "job", "hello"])[1]
    if "1/1" not in table:
        raise Fail("kubectl get job:\n" + table)


def check_backoff_limit_exceeded(up):
    t = time.time()
    apply(up, job("fails", {RUN: "0.2", EXIT: "3"}, backoffLimit=1))
    j = wait_condition(up, "fails", "failed")
    took = time.time() - t
    failed = condition(j, "Failed")
    if failed["reason"] != "BackoffLimitExceeded" or j["status"].get("failed") != 2:
        raise Fail("status: %s" % j["status"])
    if not condition(j, "FailureTarget"):
        raise Fail("no FailureTarget: %s" % j["status"])
    # The replacement waited upstream's 10 s back-off.
    if took < 10:
        raise Fail("failed after %.1f s, before the 10 s back-off" % took)
    if len(job_pods(up, "fails")) != 2:
        raise Fail("pods: %d" % len(job_pods(up, "fails")))


def check_on_failure_restarts_in_place(up):
    apply(up, job("flaky", {RUN: "0.3", EXIT: "1"}, restart="OnFailure", backoffLimit=2))
    names, restarts = set(), 0

    def failed():
        nonlocal restarts
        for p in job_pods(up, "flaky"):
            names.add(p["metadata"]["name"])
            for c in p["status"].get("containerStatuses", []):
                restarts = max(restarts, c.get("restartCount", 0))
        return condition(get(up, "job", "flaky"), "Failed")
    c = wait_for("the OnFailure Job to fail", failed, timeout=60)
    if c["reason"] != "BackoffLimitExceeded":
        raise Fail("condition: %s" % c)
    # One pod, restarted in place by the kubelet, then stopped with the Job.
    if len(names) != 1 or restarts < 1:
        raise Fail("pods %s, most restarts %d" % (sorted(names), restarts))
    wait_for("the failed Job's pod to go", lambda: not job_pods(up, "flaky"), timeout=30)


def check_active_deadline(up):
    apply(up, job("slow", {}, parallelism=2, completions=2, activeDeadlineSeconds=3))
    j = wait_condition(up, "slow", "failed", timeout=60)
    if condition(j, "Failed")["reason"] != "DeadlineExceeded" or j["status"].get("active", 0):
        raise Fail("status: %s" % j["status"])
    wait_for("the deadline's pods to go", lambda: not job_pods(up, "slow"), timeout=30)


def check_ttl_after_finished(up):
    apply(up, job("brief", {RUN: "0.2"}, ttlSecondsAfterFinished=2))
    wait_condition(up, "brief", "complete")
    wait_for("the finished Job to be deleted", lambda: get(up, "job", "brief") is None,
             timeout=30)
    wait_for("its pods to be collected", lambda: not job_pods(up, "brief"), timeout=30)


def check_cronjob_fires(up):
    cj = {"apiVersion": "batch/v1", "kind": "CronJob",
          "metadata": {"name": "every", "namespace": "default"},
          "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid",
                   "jobTemplate": {"spec": job("x", {RUN: "0.5"})["spec"]}}}
    apply(up, cj)
    created = get(up, "cronjob", "every")["metadata"]["creationTimestamp"]

    def fired():
        out = up.kubectl(["get", "jobs", "-o", "json"])[1]
        return [j for j in json.loads(out)["items"]
                if j["metadata"]["name"].startswith("every-")]
    jobs = wait_for("the CronJob's first Job", fired, timeout=75)
    name = jobs[0]["metadata"]["name"]
    minutes = int(name.split("-")[1])
    ref = jobs[0]["metadata"]["ownerReferences"][0]
    if ref["kind"] != "CronJob" or minutes * 60 < time.mktime(
            time.strptime(created, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone:
        raise Fail("job %s (created %s) ref %s" % (name, created, ref))
    table = up.kubectl(["get", "jobs"])[1]
    if name not in table:
        raise Fail("kubectl get jobs:\n" + table)
    wait_condition(up, name, "complete")
    st = wait_for("lastSuccessfulTime",
                  lambda: get(up, "cronjob", "every")["status"].get("lastSuccessfulTime") and
                  get(up, "cronjob", "every")["status"], timeout=30)
    if not st.get("lastScheduleTime"):
        raise Fail("status: %s" % st)
    up.kubectl(["create", "job", "manual", "--from=cronjob/every"])
    m = wait_condition(up, "manual", "complete")
    if m["metadata"]["annotations"].get("cronjob.kubernetes.io/instantiate") != "manual":
        raise Fail("manual job: %s" % m["metadata"])
    up.kubectl(["patch", "cronjob", "every", "-p", '{"spec":{"suspend":true}}'])


PY_CLIENT = """
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
j = client.BatchV1Api().read_namespaced_job_status("idx", "default")
print(j.status.succeeded, j.status.completed_indexes, j.status.active or 0,
      ",".join(c.type for c in j.status.conditions), j.status.completion_time is not None)
"""


def check_python_client(up):
    out = run_python_client(up, PY_CLIENT, timeout=60)
    if out.split() != ["3", "0-2", "0", "SuccessCriteriaMet,Complete", "True"]:
        raise Fail("python client: %r" % out)


CHECKS = [check_indexed_job_completes, check_python_client, check_kubectl_create_job,
          check_backoff_limit_exceeded, check_on_failure_restarts_in_place, check_active_deadline,
          check_ttl_after_finished, check_cronjob_fires]


def main():
    run_against_up(CHECKS, "berth-jobs-e2e-")


if __name__ == "__main__":
    main()
