#!/usr/bin/env python3
"""How long a project's policy files take to compile, with the release build of mapc: the first
compile (an empty cache), a changed policy, and an unchanged one (loaded from the cache), each the
wall-clock time of `mapc check` on the shipped UnCloudNotes example, whose v3 -> v4 step has a
policy (policies/). Best of 3 for each; the cache is a fresh folder.

  Benchmarks/policy-compile.py
"""
import os, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAPC = os.path.join(ROOT, ".build", "release", "mapc")
subprocess.run(["swift", "build", "-c", "release", "--product", "mapc", "--package-path", ROOT], check=True, stdout=subprocess.DEVNULL)

base = tempfile.mkdtemp(prefix="mapc-policy-compile-")
try:
    project = os.path.join(base, "project")
    for sub in ("schemas", "mappings"):
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(project, sub))
    os.makedirs(os.path.join(project, "policies"))
    for name in os.listdir(os.path.join(ROOT, "policies")):
        shutil.copyfile(os.path.join(ROOT, "policies", name), os.path.join(project, "policies", name))
    lines = sum(len(open(os.path.join(project, "policies", name)).readlines()) for name in os.listdir(os.path.join(project, "policies")))

    def check(cache):
        start = time.monotonic()
        done = subprocess.run([MAPC, "check"], cwd=project, env=dict(os.environ, MAPC_CACHE=cache), capture_output=True, text=True)
        seconds = time.monotonic() - start
        if done.returncode != 0:
            sys.exit(f"mapc check failed: {done.stderr}")
        return seconds

    first = []
    for round in range(3):
        first.append(check(os.path.join(base, f"cache-{round}")))
    changed = []
    cache = os.path.join(base, "cache-0")
    for round in range(3):
        with open(os.path.join(project, "policies", "UnCloudNotesPolicies.swift"), "a") as handle:
            handle.write(f"// change {round}\n")
        changed.append(check(cache))
    unchanged = [check(cache) for _ in range(3)]
    print(f"{len(os.listdir(os.path.join(project, 'policies')))} policy files, {lines} lines; `mapc check` wall-clock, best of 3:")
    print(f"  first compile (empty cache): {min(first):.2f} s")
    print(f"  changed policy:              {min(changed):.2f} s")
    print(f"  unchanged (from the cache):  {min(unchanged):.3f} s")
finally:
    shutil.rmtree(base, ignore_errors=True)
