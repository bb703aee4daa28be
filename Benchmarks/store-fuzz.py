#!/usr/bin/env python3
"""Every mapc command on mutated copies of a real store: none may crash.

A v3 UnCloudNotes store is built with mapc, then copied N times with damage: bytes flipped, the
file cut short, or (through SQLite) cells replaced by values of other types, rows of unknown
entities, tables or metadata removed. On each copy the commands users run (status, dump, eval,
plan, run --dry-run, run, load) are started; each must end with one of mapc's documented exit
statuses (0, 1, 2, 3), never a signal. Counts are printed; the exit status is 1 if any crashed.

Usage: Benchmarks/store-fuzz.py [--mapc PATH] [--copies N] [--seed S]
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = ["NULL", "x'00ff'", "x''", "'text'", "''", "-1", "0", "9223372036854775807", "1e308", "9e999", "-9e999", "0.5",
           "'2024-01-01'", "char(0)", "'💥'", "x'ffffffff'", "'n1'", "'Note'", "'Bogus'", "'NaN'", "'1e400'", "randomblob(64)"]
COMMANDS = [["status", "store.db"], ["status", "--format", "json", "store.db"], ["dump", "store.db"],
            ["eval", "--store", "store.db", "--entity", "Note", "attachments.@count"],
            ["eval", "--store", "store.db", "--entity", "Attachment", "$source.note.body"],
            ["plan", "store.db"], ["run", "--dry-run", "--quiet", "store.db"], ["run", "--quiet", "store.db"],
            ["load", "extra.json", "store.db"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mapc", default=os.path.join(ROOT, ".build", "release", "mapc"))
    parser.add_argument("--copies", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261122)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    base = tempfile.mkdtemp(prefix="mapc-store-fuzz-")
    try:
        for sub in ("schemas", "mappings"):
            shutil.copytree(os.path.join(ROOT, sub), os.path.join(base, sub))
        notes, attachments = [], []
        for i in range(30):
            note = {"id": f"n{i}", "title": f"Note {i}", "body": f"Body {i}", "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": i}
            if i % 2 == 0:
                note["attachments"] = [f"a{i}"]
                attachments.append({"id": f"a{i}", "image": "iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA=", "dateCreated": "2024-05-01T10:00:00Z"})
            notes.append(note)
        with open(os.path.join(base, "v3.json"), "w") as handle:
            json.dump({"version": "v3", "objects": {"Note": notes, "Attachment": attachments}}, handle)
        with open(os.path.join(base, "extra.json"), "w") as handle:
            json.dump({"version": "v3", "objects": {"Note": [{"id": "x1", "title": "x", "body": "y", "dateCreated": "2024-05-01", "displayIndex": 99}]}}, handle)
        subprocess.run([options.mapc, "load", "v3.json", "pristine.db"], cwd=base, check=True, capture_output=True)
        pristine = open(os.path.join(base, "pristine.db"), "rb").read()
        connection = sqlite3.connect(os.path.join(base, "pristine.db"))
        tables = [(name, [c[1] for c in connection.execute(f'PRAGMA table_info("{name}")')])
                  for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        connection.close()
        statuses, crashes = {}, []
        store = os.path.join(base, "store.db")
        for copy in range(options.copies):
            for command in COMMANDS:
                for suffix in ("", "-wal", "-shm", "-journal"):
                    if os.path.exists(store + suffix):
                        os.remove(store + suffix)
                damaged = bytearray(pristine)
                kind = copy % 4
                if kind == 0:
                    for _ in range(rng.randint(1, 24)):
                        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
                elif kind == 1:
                    damaged = damaged[:rng.randrange(len(damaged))]
                with open(store, "wb") as handle:
                    handle.write(damaged)
                if kind >= 2:
                    db = sqlite3.connect(store)
                    for _ in range(rng.randint(1, 3)):
                        table, columns = rng.choice(tables)
                        action = rng.randrange(10)
                        try:
                            if action == 0:
                                db.execute(f'DROP TABLE "{table}"')
                            elif action == 1:
                                db.execute(f'DELETE FROM "{table}" WHERE rowid IN (SELECT rowid FROM "{table}" LIMIT 1)')
                            else:
                                db.execute(f'UPDATE "{table}" SET "{rng.choice(columns)}" = {rng.choice(HOSTILE)} '
                                           f'WHERE rowid IN (SELECT rowid FROM "{table}" ORDER BY random() LIMIT 2)')
                        except sqlite3.Error:
                            pass
                    db.commit()
                    db.close()
                try:
                    result = subprocess.run([options.mapc] + command, cwd=base, capture_output=True, text=True, timeout=60)
                    code = result.returncode
                except subprocess.TimeoutExpired:
                    code = "timeout"
                statuses[code] = statuses.get(code, 0) + 1
                if code not in (0, 1, 2, 3):
                    crashes.append(f"copy {copy} ({['bytes', 'cut', 'cells', 'cells'][kind]}), {' '.join(command)}: exit {code}")
        runs = sum(statuses.values())
        print(f"{options.copies} damaged copies x {len(COMMANDS)} commands = {runs} runs; exit statuses: "
              + ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items(), key=lambda item: str(item[0]))))
        for line in crashes[:20]:
            print("  CRASH " + line)
        print(f"{len(crashes)} crashed")
        sys.exit(1 if crashes else 0)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
