#!/usr/bin/env python3
"""The .deb: `cpack -G DEB` in the build directory, the package extracted with dpkg-deb -x into
a staging directory (as a user with the package alone has it), then:
  * the package holds the berth binary, the SDK's headers and the CMake package, and depends on
    nlohmann-json (the SDK's headers include it);
  * examples/out-of-tree-plugin is built with find_package(Berth) against the staging /usr
    (Berth::sdk only) and its library is loaded by the packaged berth with --plugin-library.

Usage: run_deb_e2e.py BUILD_DIR SOURCE_DIR
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_install_e2e import run, simulate_with_tonodename  # noqa: E402


def main():
    build, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="berth-deb-")
    try:
        run(["cpack", "-G", "DEB", "-B", os.path.join(tmp, "pkg"),
             "--config", os.path.join(build, "CPackConfig.cmake")], cwd=build)
        debs = glob.glob(os.path.join(tmp, "pkg", "berth_*.deb"))
        if len(debs) != 1:
            print("FAIL cpack made %r, not one berth_*.deb" % debs)
            return 1
        deb = debs[0]
        print("%s: %.1f MB" % (os.path.basename(deb), os.path.getsize(deb) / 1e6))
        depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout
        # libprotobuf: the runtime library protobuf request bodies are read with (shlibdeps).
        if any(d not in depends for d in ("nlohmann-json3-dev", "libc6", "libprotobuf")):
            print("FAIL the package's Depends lacks nlohmann-json3-dev, libc6 or libprotobuf: "
                  + depends)
            return 1
        root = os.path.join(tmp, "root")
        run(["dpkg-deb", "-x", deb, root])
        usr = os.path.join(root, "usr")
        for f in ("bin/berth", "include/berth/framework/plugin_library.h",
                  "include/berth/export.h", "lib/cmake/Berth/BerthConfig.cmake",
                  "lib/cmake/Berth/BerthConfigVersion.cmake",
                  "lib/cmake/Berth/BerthTargets.cmake"):
            if not os.path.exists(os.path.join(usr, f)):
                print("FAIL the package lacks /usr/" + f)
                return 1
        # The archives of Berth::testing and Berth::main are for `cmake --install`, not the package.
        if glob.glob(os.path.join(usr, "lib", "*.a")):
            print("FAIL the package holds static archives")
            return 1

        oot = os.path.join(tmp, "oot")
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        if shutil.which("ccache"):
            gen.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        run(["cmake", "-S", os.path.join(source, "examples/out-of-tree-plugin"), "-B", oot,
             "-DCMAKE_PREFIX_PATH=" + usr, "-DBERTH_OOT_TEST=OFF"] + gen)
        run(["cmake", "--build", oot, "-j", "2"])
        lib = os.path.join(oot, "libtonodename_oot.so")
        _, _, node = simulate_with_tonodename(os.path.join(usr, "bin/berth"), lib, tmp)
        if node != "piworknode001":
            print("FAIL the plugin built against the package did not decide: %r" % node)
            return 1
        print("PASS .deb: a plugin built with find_package(Berth) against the extracted package "
              "loads into the packaged berth and decides")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
