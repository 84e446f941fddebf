#!/usr/bin/env python3
"""The installed SDK: `cmake --install` Berth into a temporary prefix, then, against it with
find_package(Berth):
  * build examples/out-of-tree-plugin: a plugin library (Berth::sdk only: the public headers;
    its args decoded by the SDK's TypedArgs), loaded into the installed berth with
    --plugin-library, and a GoogleTest unit test of the same plugin (the SDK's builders and fake
    handle, linked against Berth::testing), run;
  * build examples/custom-scheduler: a scheduler binary with the plugin compiled in (Berth::main),
    run with `simulate` without --plugin-library.

Usage: run_install_e2e.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
    if p.returncode != 0:
        print("FAIL %s:\n%s%s" % (" ".join(args), p.stdout[-2000:], p.stderr[-2000:]))
        sys.exit(1)
    return p


def simulate_with_tonodename(berth, lib, tmp):
    """Runs `berth simulate` with the ToNodeName plugin library `lib` enabled on two nodes and
    one pod; returns (the config file, the objects file, the node the pod went to)."""
    cfg = os.path.join(tmp, "cfg.yaml")
    with open(cfg, "w") as f:
        f.write("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: ToNodeName, weight: 10}]
""")
    objs = os.path.join(tmp, "objs.json")
    with open(objs, "w") as f:
        for n in ("node-a", "piworknode001"):
            f.write(json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
                                "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                                           "pods": "110"}}}) + "\n")
        f.write(json.dumps({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "p", "namespace": "default"},
                            "spec": {"containers": [{"name": "c", "image": "pause"}]}}) + "\n")
    p = run([berth, "simulate", "--plugin-library", lib, "--config", cfg, "-f", objs,
             "-o", "json"])
    return cfg, objs, json.loads(p.stdout)["results"][0].get("node")


def main():
    build, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="berth-install-")
    try:
        prefix = os.path.join(tmp, "prefix")
        run(["cmake", "--install", build, "--prefix", prefix])
        for f in ("bin/berth", "include/berth/framework/plugin_library.h",
                  "include/berth/framework/typed_args.h", "include/berth/testing/builders.h",
                  "include/berth/testing/fake_handle.h", "include/berth/main.h",
                  "lib/libberth_testing.a", "lib/libberth_main.a",
                  "lib/cmake/Berth/BerthConfig.cmake"):
            if not os.path.exists(os.path.join(prefix, f)):
                print("FAIL installed tree lacks " + f)
                return 1
        # Installed archives carry no debug sections (the build's -g1 tables stay in the build).
        main_a = os.path.join(prefix, "lib/libberth_main.a")
        size_mb = os.path.getsize(main_a) / 1e6
        sections = subprocess.run(["objdump", "-h", main_a], capture_output=True, text=True).stdout
        if ".debug_line" in sections or ".debug_info" in sections:
            print("FAIL the installed libberth_main.a (%.0f MB) keeps debug sections" % size_mb)
            return 1
        print("installed libberth_main.a: %.0f MB" % size_mb)
        oot = os.path.join(tmp, "oot")
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        if shutil.which("ccache"):
            gen.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        run(["cmake", "-S", os.path.join(source, "examples/out-of-tree-plugin"), "-B", oot,
             "-DCMAKE_PREFIX_PATH=" + prefix] + gen)
        # -j2: the machine that runs the tests is small and shared.
        run(["cmake", "--build", oot, "-j", "2"])
        # The plugin's unit test, linked against the installed Berth::testing.
        p = run([os.path.join(oot, "tonodename_test")])
        if "[  PASSED  ] 4 tests" not in p.stdout:
            print("FAIL the out-of-tree unit test did not run its 4 tests:\n" + p.stdout[-2000:])
            return 1
        lib = os.path.join(oot, "libtonodename_oot.so")
        cfg, objs, node = simulate_with_tonodename(
            os.path.join(prefix, "bin/berth"), lib, tmp)
        if node != "piworknode001":
            print("FAIL the out-of-tree plugin did not decide: %r" % node)
            return 1
        # Its args are decoded by the installed TypedArgs: a wrong type names the YAML path.
        open(cfg, "a").write("""  pluginConfig:
  - name: ToNodeName
    args: {nodeName: 3}
""")
        p = subprocess.run([os.path.join(prefix, "bin/berth"), "simulate", "--plugin-library",
                            lib, "--config", cfg, "-f", objs, "-o", "json"],
                           capture_output=True, text=True, timeout=60)
        want = "profiles[0].pluginConfig[0].args.nodeName: expected a string, got a number"
        if p.returncode == 0 or want not in p.stderr + p.stdout:
            print("FAIL bad args through the installed SDK: rc=%d %s" % (p.returncode,
                                                                         p.stderr[-1000:]))
            return 1
        # A binary of one's own with the plugin compiled in: berth's command line, the plugin
        # known without --plugin-library (the installed berth refuses the same configuration).
        custom = os.path.join(tmp, "custom")
        run(["cmake", "-S", os.path.join(source, "examples/custom-scheduler"), "-B", custom,
             "-DCMAKE_PREFIX_PATH=" + prefix] + gen)
        run(["cmake", "--build", custom, "-j", "2"])
        without_bad_args = open(cfg).read().split("  pluginConfig:")[0]
        open(cfg, "w").write(without_bad_args)
        with open(objs, "a") as f:
            for i in range(5):
                f.write(json.dumps({"apiVersion": "v1", "kind": "Pod",
                                    "metadata": {"name": "q%d" % i, "namespace": "default"},
                                    "spec": {"containers": [{"name": "c", "image": "pause"}]}})
                        + "\n")
        p = run([os.path.join(custom, "my-scheduler"), "simulate", "--config", cfg, "-f", objs,
                 "-o", "json"])
        nodes = [r.get("node") for r in json.loads(p.stdout)["results"]]
        if nodes != ["piworknode001"] * 6:
            print("FAIL the compiled-in plugin did not decide: %r" % nodes)
            return 1
        p = subprocess.run([os.path.join(prefix, "bin/berth"), "simulate", "--config", cfg,
                            "-f", objs, "-o", "json"], capture_output=True, text=True, timeout=60)
        if p.returncode == 0 or "ToNodeName" not in p.stderr + p.stdout:
            print("FAIL the installed berth accepted ToNodeName without the plugin: rc=%d %s"
                  % (p.returncode, p.stderr[-1000:]))
            return 1
        print("PASS installed SDK: an out-of-tree plugin built with find_package(Berth) loads, "
              "its unit test passes, and a binary with it compiled in schedules with it")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
