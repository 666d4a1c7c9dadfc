#!/usr/bin/env python3
"""The architecture's rules on includes (docs/architecture.md, "Components"):
no include cycle among the project's headers; libmri includes none of
libmonitor's headers; libmonitor's core includes no backend's header
(measurement sources reach the core through libmonitor/sdk/ only, and a
source outside libmonitor includes nothing of libmonitor but sdk/).
Reads the tracked sources as text; exit status 1 with one line per broken
rule."""
import collections
import os
import re
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
SOURCES = (".h", ".hpp", ".cpp", ".c")
try:
    files = subprocess.check_output(["git", "-C", root, "ls-files", *("*" + e for e in SOURCES)], text=True,
                                    stderr=subprocess.DEVNULL).split()
except (OSError, subprocess.CalledProcessError):  # not a git checkout: every source below root but build trees
    files = [os.path.relpath(os.path.join(d, n), root) for d, dirs, names in os.walk(root)
             for n in names if n.endswith(SOURCES)
             if not os.path.relpath(d, root).split(os.sep)[0].startswith("build")]
if not files:
    sys.exit(f"structure: no source file under {root}")
by_name = collections.defaultdict(list)
for f in files:
    by_name[os.path.basename(f)].append(f)


def includes(f):
    with open(os.path.join(root, f), errors="replace") as text:
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text.read(), re.M):
            yield from by_name.get(os.path.basename(name), [])


problems = []
graph = {f: [t for t in includes(f) if t.endswith((".h", ".hpp"))] for f in files}
for f, targets in graph.items():
    tests = "/tests/" in f or f.startswith("tests/")
    for t in targets:
        if f.startswith("libmri/") and t.startswith("libmonitor/"):
            problems.append(f"{f} includes libmonitor's {t}")
        if f.startswith("libmonitor/") and not tests and t.startswith("backends/"):
            problems.append(f"libmonitor's {f} includes the backend header {t}")
        if (f.startswith("backends/") and not tests and t.startswith("libmonitor/")
                and not t.startswith("libmonitor/sdk/")):
            problems.append(f"{f} includes libmonitor's {t} (sources use libmonitor/sdk/ only)")

state = {}


def visit(node, path):
    state[node] = 1
    path.append(node)
    for nxt in graph.get(node, []):
        if state.get(nxt) == 1:
            problems.append("include cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
        elif nxt not in state:
            visit(nxt, path)
    path.pop()
    state[node] = 2


for node in [f for f in files if f.endswith((".h", ".hpp"))]:
    if node not in state:
        visit(node, [])
for p in problems:
    print(p)
print(f"structure: {len(files)} files, {len(problems)} problems")
sys.exit(1 if problems else 0)
