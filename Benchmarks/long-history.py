#!/usr/bin/env python3
"""A long model history: VERSIONS schema versions of ENTITIES entities (18 attributes and two
relationships each, a third of them sub-entities; each version adds one attribute, as a real app's
history grows), then times what a user runs on it with the release binary: `diff` of two
neighbouring versions, `check` of the folder, `plan` of a store at the first version through every
step, and `diff` in a folder holding only those two versions (the floor).

  Benchmarks/long-history.py            # 117 versions of 60 entities
  Benchmarks/long-history.py 60 40
"""
import os, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAPC = os.path.join(ROOT, ".build", "release", "mapc")
versions = int(sys.argv[1]) if len(sys.argv) > 1 else 117
entities = int(sys.argv[2]) if len(sys.argv) > 2 else 60
subprocess.run(["swift", "build", "-c", "release", "--product", "mapc", "--package-path", ROOT], check=True, stdout=subprocess.DEVNULL)


def schema(version):
    lines = ["model: Long", f"version: Model {version}", "entities:"]
    for e in range(entities):
        lines.append(f"  Entity{e}:")
        if e % 3 == 2:
            lines.append(f"    parent: Entity{e - 1}")
        lines.append("    attributes:")
        count = 18 + (version if e == 0 else 0)
        for a in range(count):
            kind = ["string?", "{ type: int64, default: 0 }", "double?", "date?", "{ type: bool, default: false }"][a % 5]
            lines.append(f"      e{e}attr{a}: {kind}")
        lines.append("    relationships:")
        lines.append(f"      next{e}: {{ destination: Entity{(e + 1) % entities}, inverse: previous{(e + 1) % entities}, optional: true }}")
        lines.append(f"      previous{e}: {{ destination: Entity{(e - 1) % entities}, inverse: next{(e - 1) % entities}, optional: true, toMany: true }}")
    return "\n".join(lines) + "\n"


def timed(arguments, cwd):
    start = time.monotonic()
    done = subprocess.run([MAPC] + arguments, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"mapc {' '.join(arguments)} failed ({done.returncode}): {done.stderr[:2000]}")
    return seconds


folder = tempfile.mkdtemp(prefix="mapc-history-")
try:
    schemas = os.path.join(folder, "schemas")
    os.makedirs(schemas)
    for v in range(1, versions + 1):
        with open(os.path.join(schemas, f"Model {v}.yaml"), "w") as f:
            f.write(schema(v))
    with open(os.path.join(schemas, "versions.yaml"), "w") as f:
        f.write("versions: [" + ", ".join(f'"Model {v}"' for v in range(1, versions + 1)) + "]\n")
    size = sum(os.path.getsize(os.path.join(schemas, name)) for name in os.listdir(schemas))
    timed(["init", "--schema", "Model 1", "store.sqlite"], folder)
    middle = versions // 2
    two = os.path.join(folder, "two")
    os.makedirs(os.path.join(two, "schemas"))
    for v in (middle, middle + 1):
        shutil.copy(os.path.join(schemas, f"Model {v}.yaml"), os.path.join(two, "schemas"))
    print(f"{versions} versions of {entities} entities ({size / 1e6:.1f} MB of YAML)")
    for label, arguments, cwd in [
        (f"diff 'Model {middle}' 'Model {middle + 1}'", ["diff", f"Model {middle}", f"Model {middle + 1}"], folder),
        ("check (the schemas folder)", ["check"], folder),
        (f"plan (a store at Model 1, {versions - 1} inferred steps taken as one)", ["plan", "store.sqlite"], folder),
        (f"plan --every-version (the same, {versions - 1} steps)", ["plan", "--every-version", "store.sqlite"], folder),
        ("diff, a folder of those two versions only", ["diff", f"Model {middle}", f"Model {middle + 1}"], two),
    ]:
        best = min(timed(arguments, cwd) for _ in range(3))
        print(f"  {label}: {best:.2f} s (best of 3)")
finally:
    shutil.rmtree(folder, ignore_errors=True) if not os.environ.get("KEEP") else print(folder)
