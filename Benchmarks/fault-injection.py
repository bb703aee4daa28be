#!/usr/bin/env python3
"""Deterministic crash and I/O-error testing of mapc, in the manner of SQLite's own crash tests.

mapc numbers every file operation it performs (SQLite's writes, truncates, deletes and syncs, and
its own renames, links and syncs) when MAPC_FAULT is set: `count` reports how many there were,
`crash@N` kills the process at the N-th (as kill -9 would), `fail@N` makes the N-th fail with an
I/O error. This script walks N over every point of each scenario below, in both modes, and after
each checks that:

  - the store is either exactly as before (its dump equals the old dump) or fully done (its dump
    equals what an uninterrupted command produces), never anything in between;
  - SQLite's integrity_check says ok;
  - the next uninterrupted command succeeds and gives the expected result (leftovers are cleaned up).

Scenarios: `run` on a rollback-journal store and on a WAL store (a two-step UnCloudNotes
migration v2 -> v4 with its custom policy), `run --keep-backup` (the original kept under a second
name before the store is replaced), `load` into an existing store, `load` creating a new
store, `run --layout` converting a store at the version asked for in place, `run --output` into a new file (the two steps, and a store already at the version asked
for, which is copied; the store itself must stay as it was), and `check --update-hashes`
rewriting a mapping file.

Usage: Benchmarks/fault-injection.py [--mapc PATH] [--notes N] [--every K] [--scenario NAME]
Prints one line per scenario and a total; exits 1 if any point broke the promise.
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNG = "iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA="


def run(mapc, args, cwd, fault=None, log=None):
    env = dict(os.environ)
    env.pop("MAPC_FAULT", None)
    if fault:
        env["MAPC_FAULT"] = fault
    if log:
        env["MAPC_FAULT_LOG"] = log
    return subprocess.run([mapc] + args, cwd=cwd, env=env, capture_output=True, text=True)


def count_points(mapc, args, cwd, prepare):
    prepare()
    log = os.path.join(cwd, "count.log")
    if os.path.exists(log):
        os.remove(log)
    result = run(mapc, args, cwd, fault="count", log=log)
    if result.returncode != 0:
        sys.exit(f"the uninterrupted command failed: {' '.join(args)}\n{result.stderr}")
    with open(log) as handle:
        return int(handle.read().split()[-1])


def dump(mapc, cwd, store):
    result = run(mapc, ["dump", store], cwd)
    return result.stdout if result.returncode == 0 else None


def integrity(path):
    if not os.path.exists(path):
        return "ok"
    connection = sqlite3.connect(path)
    try:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        connection.close()


def notes_json(version, start, count, images):
    notes = []
    for i in range(start, start + count):
        note = {"id": f"n{i}", "title": f"Note {i}", "body": f"Body of note {i}, long enough to be a caption. " * 2,
                "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": i}
        if images:
            note["image"] = PNG if i % 3 == 0 else None
        notes.append(note)
    return json.dumps({"version": version, "objects": {"Note": notes}})


class Scenario:
    """One command walked over all its fault points."""

    def __init__(self, name, folder, mapc):
        self.name, self.folder, self.mapc = name, folder, mapc

    def path(self, name):
        return os.path.join(self.folder, name)


def store_scenarios(mapc, base, notes):
    """Yields (name, folder, args, prepare, check) for each scenario."""
    # A v2 store, kept pristine; each point starts from a copy.
    os.makedirs(base, exist_ok=True)
    # The example's policy files too (links to their source: copied as files).
    for sub in ("schemas", "mappings", "policies"):
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(base, sub), dirs_exist_ok=True)
    with open(os.path.join(base, "v2.json"), "w") as handle:
        handle.write(notes_json("v2", 0, notes, True))
    with open(os.path.join(base, "more.json"), "w") as handle:
        handle.write(notes_json("v2", notes, max(5, notes // 4), True))
    pristine = os.path.join(base, "pristine.db")
    result = run(mapc, ["load", "v2.json", "pristine.db"], base)
    if result.returncode != 0:
        sys.exit(result.stderr)
    wal = os.path.join(base, "pristine-wal.db")
    shutil.copy(pristine, wal)
    connection = sqlite3.connect(wal)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.close()

    def reset(store, source):
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(store + suffix):
                os.remove(store + suffix)
        for name in os.listdir(base):
            if name.startswith(".store.db.mapc-") or name.startswith(".new.db.mapc-") or name.startswith("store.db.backup-"):
                os.remove(os.path.join(base, name))
        if source:
            shutil.copy(source, store)

    # The same store at the current version, for a run with nothing to migrate.
    current = os.path.join(base, "pristine-v4.db")
    shutil.copy(pristine, current)
    result = run(mapc, ["run", "--quiet", "pristine-v4.db"], base)
    if result.returncode != 0:
        sys.exit(result.stderr)

    store = os.path.join(base, "store.db")
    for name, source, args in (("run (rollback journal)", pristine, ["run", "--quiet", "store.db"]),
                               ("run (WAL store)", wal, ["run", "--quiet", "store.db"]),
                               # The original kept under a second name before the store is replaced.
                               ("run --keep-backup", pristine, ["run", "--quiet", "--keep-backup", "store.db"]),
                               ("load into an existing store", pristine, ["load", "more.json", "store.db"]),
                               ("run --layout (a conversion in place)", current, ["run", "--quiet", "--layout", "core-data", "store.db"])):
        yield name, args, (lambda source=source: reset(store, source)), "store.db", None
    yield "load creating a store", ["load", "v2.json", "store.db"], (lambda: reset(store, None)), "store.db", None
    # Into another file: the output is absent or complete, and the store is never written.
    output = os.path.join(base, "new.db")
    for name, source in (("run --output (two steps)", pristine), ("run --output (a copy)", current)):
        yield (name, ["run", "--quiet", "--output", "new.db", "store.db"],
               (lambda source=source: (reset(output, None), reset(store, source))), "new.db", "store.db")
    # A Core Data store with external values (files in .store_SUPPORT): the output takes a copy
    # of the folder, put in place before the store; a killed run's copy is replaced by the next.
    core_data = os.path.join(base, "pristine-cd.db")
    result = run(mapc, ["load", "--layout", "core-data", "v2.json", "pristine-cd.db"], base)
    if result.returncode != 0:
        sys.exit(result.stderr)

    def with_external_values():
        reset(output, None)
        reset(store, core_data)
        for folder in (".store_SUPPORT", ".new_SUPPORT"):
            shutil.rmtree(os.path.join(base, folder), ignore_errors=True)
        for name in os.listdir(base):
            if name.startswith(".new.db.mapc-"):
                shutil.rmtree(os.path.join(base, name), ignore_errors=True)
        values = os.path.join(base, ".store_SUPPORT", "_EXTERNAL_DATA")
        os.makedirs(values)
        for index in range(3):
            with open(os.path.join(values, f"0B7C2D43-9A7E-4F4C-8E0D-6F2B3C1A5D2{index}"), "wb") as handle:
                handle.write(bytes([index]) * 4096)
    yield ("run --output (Core Data, external values)", ["run", "--quiet", "--output", "new.db", "store.db"],
           with_external_values, "new.db", "store.db")


def walk(mapc, base, name, args, prepare, store, untouched, every):
    """Every point of a command that writes `store`, which must end old or new; `untouched`, when
    given, is a store the command reads only, which must end as it began."""
    prepare()
    before = dump(mapc, base, store) if os.path.exists(os.path.join(base, store)) else None
    read_only = dump(mapc, base, untouched) if untouched else None
    total = count_points(mapc, args, base, prepare)
    after = dump(mapc, base, store)
    checked, broken = 0, []
    for mode in ("crash", "fail"):
        for point in range(1, total + 1, every):
            prepare()
            result = run(mapc, args, base, fault=f"{mode}@{point}")
            path = os.path.join(base, store)
            state = dump(mapc, base, store) if os.path.exists(path) else None
            verdict = integrity(path)
            if verdict != "ok":
                broken.append(f"{mode}@{point}: integrity_check says {verdict}")
            elif untouched and dump(mapc, base, untouched) != read_only:
                broken.append(f"{mode}@{point}: {untouched}, which the command only reads, changed")
            elif state is not None and os.path.isdir(os.path.join(base, ".store_SUPPORT")) and \
                    sorted(os.listdir(os.path.join(base, ".new_SUPPORT", "_EXTERNAL_DATA")) if os.path.isdir(os.path.join(base, ".new_SUPPORT", "_EXTERNAL_DATA")) else []) \
                    != sorted(os.listdir(os.path.join(base, ".store_SUPPORT", "_EXTERNAL_DATA"))):
                broken.append(f"{mode}@{point}: the new store is there without all of its external values")
            elif state not in (before, after):
                broken.append(f"{mode}@{point}: the store is neither old nor new (exit {result.returncode}): {result.stderr.strip()[:200]}")
            elif mode == "fail" and result.returncode == 0 and state != after:
                broken.append(f"{mode}@{point}: exit 0 but the command's work is missing")
            else:
                # The next uninterrupted command cleans up and completes.
                if state != after:
                    again = run(mapc, args, base)
                    if again.returncode != 0 or dump(mapc, base, store) != after:
                        broken.append(f"{mode}@{point}: the command did not succeed afterwards: {again.stderr.strip()[:200]}")
            checked += 1
    return total, checked, broken


def update_hashes(mapc, base, every):
    folder = os.path.join(base, "hashes")
    os.makedirs(folder, exist_ok=True)
    shutil.copytree(os.path.join(ROOT, "schemas"), os.path.join(folder, "schemas"), dirs_exist_ok=True)
    original = open(os.path.join(ROOT, "mappings", "mapping_v2_to_v3.yaml")).read()
    # Without recorded hashes, so that --update-hashes rewrites the file.
    stripped = "\n".join(line for line in original.split("\n") if "Hash:" not in line) + "\n"
    target = os.path.join(folder, "m.yaml")

    def prepare():
        for name in os.listdir(folder):
            if name.startswith(".m.yaml.mapc-"):
                os.remove(os.path.join(folder, name))
        with open(target, "w") as handle:
            handle.write(stripped)

    args = ["check", "--update-hashes", "m.yaml"]
    total = count_points(mapc, args, folder, prepare)
    updated = open(target).read()
    checked, broken = 0, []
    for mode in ("crash", "fail"):
        for point in range(1, total + 1, every):
            prepare()
            run(mapc, args, folder, fault=f"{mode}@{point}")
            text = open(target).read()
            if text not in (stripped, updated):
                broken.append(f"{mode}@{point}: the mapping file is neither old nor new")
            checked += 1
    return total, checked, broken


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mapc", default=os.path.join(ROOT, ".build", "release", "mapc"))
    parser.add_argument("--notes", type=int, default=1500, help="notes in the store (more notes, more points)")
    parser.add_argument("--every", type=int, default=1, help="test every K-th point only")
    parser.add_argument("--scenario", default=None, help="run only scenarios whose name contains this")
    options = parser.parse_args()
    if not os.path.exists(options.mapc):
        subprocess.run(["swift", "build", "-c", "release", "--product", "mapc"], cwd=ROOT, check=True)
    base = tempfile.mkdtemp(prefix="mapc-faults-")
    grand, failures = 0, 0
    try:
        results = []
        for name, args, prepare, store, untouched in store_scenarios(options.mapc, base, options.notes):
            if options.scenario and options.scenario not in name:
                continue
            results.append((name,) + walk(options.mapc, base, name, args, prepare, store, untouched, options.every))
        if not options.scenario or options.scenario in "check --update-hashes":
            results.append(("check --update-hashes",) + update_hashes(options.mapc, base, options.every))
        for name, total, checked, broken in results:
            grand += checked
            failures += len(broken)
            print(f"{name:32} {total:5} fault points, {checked:5} runs (crash and fail), {len(broken)} broken")
            for line in broken[:10]:
                print(f"    {line}")
        print(f"{'total':32} {grand:5} injected faults, {failures} broke the old-or-new promise")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
