#!/usr/bin/env python3
"""Tests of check_includes.py on small trees: it must catch an undeclared include and a cycle."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_includes.py")

CMAKE = """
berth_module(berth_a src/a DEPS fmt::fmt)
berth_module(berth_b src/b DEPS berth_a TEST_DEPS berth_c)
berth_module(berth_c src/c DEPS berth_b)
"""


def tree(files):
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, "src/plugins"))
    with open(os.path.join(root, "CMakeLists.txt"), "w") as f:
        f.write(CMAKE)
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


def run(root):
    p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
    return p.returncode, p.stdout


class CheckIncludesTest(unittest.TestCase):
    def test_declared_includes_pass(self):
        root = tree({"src/a/a.h": "", "src/b/b.cc": '#include "a/a.h"\n#include "berth/x.h"\n',
                     "src/c/c.cc": '#include "a/a.h"\n',  # transitive through berth_b
                     "src/b/b_test.cc": '#include "c/c.h"\n'})  # a TEST_DEPS
        code, out = run(root)
        self.assertEqual(code, 0, out)

    def test_undeclared_include_fails_naming_file_and_module(self):
        root = tree({"src/a/a.cc": '#include "b/b.h"\n', "src/b/b.h": ""})
        code, out = run(root)
        self.assertEqual(code, 1)
        self.assertIn('src/a/a.cc: includes "b/b.h" but berth_a does not declare berth_b', out)

    def test_test_deps_are_not_open_to_library_files(self):
        root = tree({"src/b/b.cc": '#include "c/c.h"\n'})
        code, out = run(root)
        self.assertEqual(code, 1)
        self.assertIn("src/b/b.cc", out)

    def test_directory_cycle_fails(self):
        # c may include b (declared), and b including c is undeclared and a cycle.
        root = tree({"src/c/c.cc": '#include "b/b.h"\n', "src/b/b.cc": '#include "c/c.h"\n'})
        code, out = run(root)
        self.assertEqual(code, 1)
        self.assertIn("directory cycle: src/b -> src/c -> src/b", out)


if __name__ == "__main__":
    unittest.main()
