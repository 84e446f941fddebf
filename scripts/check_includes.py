#!/usr/bin/env python3
"""Checks that each module under src/ includes only what the build says it depends on.

Every directory under src/ is one module (berth_module() in CMakeLists.txt, with DEPS and
TEST_DEPS). A quoted include "dir/file.h" names the module of src/dir (or src/plugins/name for
"plugins/name/..."). This check fails when:
  - a library file includes a module that is neither itself nor among its DEPS, transitively;
  - a test file (*_test.cc) includes a module outside DEPS + TEST_DEPS, transitively;
  - the modules' library includes form a cycle between directories.
Headers of the public SDK ("berth/...", include/) are open to every module.

Usage: check_includes.py [repo root]   (exit status 1 with one line per violation)
"""
import os
import re
import sys

MODULE_CALL = re.compile(r"berth_module\(\s*([\w${}]+)\s+([\w/${}]+)(.*?)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def parse_modules(root):
    """Module target -> (directory relative to src/, deps, test deps), from CMakeLists.txt."""
    text = open(os.path.join(root, "CMakeLists.txt")).read()
    text = re.sub(r"#[^\n]*", "", text)
    modules = {}
    plugin_dirs = sorted(
        d for d in os.listdir(os.path.join(root, "src/plugins"))
        if os.path.isdir(os.path.join(root, "src/plugins", d)))
    for target, directory, rest in MODULE_CALL.findall(text):
        words = rest.split()
        deps, test_deps, current = [], [], None
        for w in words:
            if w in ("DEPS", "TEST_DEPS"):
                current = deps if w == "DEPS" else test_deps
            elif current is not None:
                current.append(w)
        if "${pname}" in target:  # the loop over src/plugins/*: one module per directory
            for p in plugin_dirs:
                modules["berth_plugin_" + p] = ("plugins/" + p, list(deps), list(test_deps))
            continue
        if "${plugin_targets}" in deps:
            deps = [d for d in deps if d != "${plugin_targets}"] + [
                "berth_plugin_" + p for p in plugin_dirs]
        modules[target] = (directory[len("src/"):], deps, test_deps)
    # A module given more dependencies after its berth_module call (one plugin's own library).
    for target, deps in re.findall(
            r"target_link_libraries\((berth_\w+)\s+PUBLIC\s+([^)]*)\)", text):
        if target in modules:
            modules[target][1].extend(d for d in deps.split() if d.startswith("berth_"))
    return modules


def closure(modules, start):
    seen, stack = set(), list(start)
    while stack:
        m = stack.pop()
        if m in seen or m not in modules:
            continue
        seen.add(m)
        stack.extend(modules[m][1])
    return seen


def module_of_include(path, by_dir):
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "plugins" and "plugins/" + parts[1] in by_dir:
        return by_dir["plugins/" + parts[1]]
    if len(parts) >= 2 and parts[0] in by_dir:
        return by_dir[parts[0]]
    return None


def find_cycle(edges):
    """A directory cycle in `edges` (dict of sets), as a list, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), ".."))
    modules = parse_modules(root)
    by_dir = {d: t for t, (d, _, _) in modules.items()}
    violations, edges = [], {}
    for target, (directory, deps, test_deps) in sorted(modules.items()):
        allowed = closure(modules, [target])
        allowed_tests = allowed | closure(modules, test_deps)
        full = os.path.join(root, "src", directory)
        if not os.path.isdir(full):
            continue
        for name in sorted(os.listdir(full)):
            if not name.endswith((".h", ".cc")):
                continue
            is_test = name.endswith("_test.cc") or name.endswith("_test_util.h")
            text = open(os.path.join(full, name), encoding="utf-8").read()
            for inc in INCLUDE.findall(text):
                other = module_of_include(inc, by_dir)
                if other is None or other == target:
                    continue
                if not is_test:
                    edges.setdefault(directory, set()).add(modules[other][0])
                if other not in (allowed_tests if is_test else allowed):
                    kind = "TEST_DEPS" if is_test else "DEPS"
                    violations.append(
                        f"src/{directory}/{name}: includes \"{inc}\" but {target} does not "
                        f"declare {other} in its {kind} (CMakeLists.txt)")
    # Plugins sit under src/plugins, whose own module (the registry) depends on them: a nested
    # directory is not a cycle with its parent.
    cycle = find_cycle(edges)
    if cycle:
        violations.append("directory cycle: " + " -> ".join("src/" + d for d in cycle))
    for v in violations:
        print(v)
    if violations:
        return 1
    print(f"{len(modules)} modules: every include is declared, no directory cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
