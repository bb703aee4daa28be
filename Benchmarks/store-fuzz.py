#!/usr/bin/env python3
"""Every mapc command on damaged copies of a store, in both formats: none may crash, none may run
over 10 s or use over 1 GiB.

Two stores are built with mapc: a v3 UnCloudNotes store (mapc's format), and a store of a small
model with a many-to-many relationship, sub-entities and every attribute type in Core Data's
format. Each is copied N times with damage: bytes flipped, the file cut short, or (through
SQLite) cells replaced by values of other types, rows deleted, tables dropped; and for Core Data
the store's own bookkeeping: metadata property lists with shared references (a 12 KB list that
stands for 1000^12 objects), wrong types, huge values and garbage; Z_PRIMARYKEY rows removed,
counters of -1, text or 2^63-1; rows of an unknown Z_ENT; text in TIMESTAMP columns; join tables
dropped or their columns renamed. On each copy the commands users run (status, dump, eval, plan,
run --dry-run, run, load) are started under a 1 GiB address-space limit and a 60 s timeout; each
must end with one of mapc's documented exit statuses (0, 1, 2, 3), never a signal. Counts, the
slowest run and the largest memory are printed; the exit status is 1 if any crashed or ran over
the bounds.

Usage: Benchmarks/store-fuzz.py [--mapc PATH] [--copies N] [--seed S] [--layout mapc|core-data|both]
"""
import argparse
import json
import os
import plistlib
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = ["NULL", "x'00ff'", "x''", "'text'", "''", "-1", "0", "9223372036854775807", "1e308", "9e999", "-9e999", "0.5",
           "'2024-01-01'", "char(0)", "'💥'", "x'ffffffff'", "'n1'", "'Note'", "'Bogus'", "'NaN'", "'1e400'", "randomblob(64)",
           "CAST(x'c328ff' AS TEXT)", "'abc' || char(0) || 'def'", "1e300", "-1e18", "2", "-9223372036854775808"]
MEMORY_LIMIT = 1 << 30
TIME_LIMIT = 10.0

NOTES_COMMANDS = [["status", "store.db"], ["status", "--format", "json", "store.db"], ["dump", "store.db"],
                  ["eval", "--store", "store.db", "--entity", "Note", "attachments.@count"],
                  ["eval", "--store", "store.db", "--entity", "Attachment", "$source.note.body"],
                  ["plan", "store.db"], ["run", "--dry-run", "--quiet", "store.db"], ["run", "--quiet", "store.db"],
                  ["load", "extra.json", "store.db"]]
SHELF_COMMANDS = [["status", "store.db"], ["status", "--format", "json", "store.db"], ["dump", "store.db"],
                  ["eval", "--store", "store.db", "--entity", "Book", "tags.@count"],
                  ["eval", "--store", "store.db", "--entity", "Tag", "books.title"],
                  ["plan", "store.db"], ["run", "--dry-run", "--quiet", "store.db"], ["run", "--quiet", "store.db"],
                  ["run", "--quiet", "--interpret", "store.db"], ["load", "extra.json", "store.db"]]

SHELF_V1 = """model: Shelf
version: s1
entities:
  Item:
    attributes:
      title: string
      added: date?
      rating: float?
      price: decimal?
      count: int16?
      done: bool?
      code: uuid?
      link: uri?
      cover: binary?
    relationships:
      tags: { destination: Tag, toMany: true, inverse: books, optional: true }
      owner: { destination: Person, inverse: items, optional: true }
  Book:
    parent: Item
    attributes:
      pages: int32?
  Magazine:
    parent: Item
    attributes:
      issue: int64?
  Tag:
    attributes:
      name: string
    relationships:
      books: { destination: Item, toMany: true, inverse: tags, optional: true }
  Person:
    attributes:
      name: string
    relationships:
      items: { destination: Item, toMany: true, inverse: owner, optional: true }
"""


def limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def bomb(levels=12, width=1000):
    """A binary property list of arrays, each holding `width` references to the next."""
    objects = [bytes([0x10, 1])]
    for _ in range(levels):
        previous = len(objects) - 1
        count = bytes([0xAF, 0x11]) + width.to_bytes(2, "big")
        objects.append(count + previous.to_bytes(2, "big") * width)
    data, offsets = bytearray(b"bplist00"), []
    for item in objects:
        offsets.append(len(data))
        data += item
    table = len(data)
    for offset in offsets:
        data += offset.to_bytes(4, "big")
    data += bytes([0, 0, 0, 0, 0, 0, 4, 2]) + len(objects).to_bytes(8, "big") + (len(objects) - 1).to_bytes(8, "big") + table.to_bytes(8, "big")
    return bytes(data)


def damage_core_data(db, rng, tables):
    """One piece of damage to a Core Data store's own bookkeeping."""
    action = rng.randrange(9)
    if action <= 2:
        (blob,) = db.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()
        try:
            plist = plistlib.loads(blob)
        except Exception:
            plist = {}
        if not isinstance(plist, dict):
            plist = {}
        choice = rng.randrange(6)
        if choice == 0:
            # The bomb on its own, or as an extra key's value beside the store's real metadata
            # (plistlib writes one shared list once and refers to it).
            shared = [1]
            for _ in range(12):
                shared = [shared] * 1000
            plist["Extra"] = shared
            data = bomb() if rng.random() < 0.3 else plistlib.dumps(plist, fmt=plistlib.FMT_BINARY)
            db.execute("UPDATE Z_METADATA SET Z_PLIST = ?", (data,))
            return
        if choice == 1:
            plist["NSStoreModelVersionHashes"] = rng.choice(["text", 7, [b"x"], {"Item": "not data"}])
        elif choice == 2:
            plist["Huge"] = b"x" * rng.choice([1 << 20, 8 << 20, 40 << 20])
        elif choice == 3:
            plist[rng.choice(["NSStoreModelVersionIdentifiers", "NSStoreType", "mapc.history"])] = rng.choice([[1, 2], "x" * 100000, {"a": b"b"}, "[{\"from\": 7}]"])
        elif choice == 4:
            db.execute("UPDATE Z_METADATA SET Z_PLIST = ?", (bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))),))
            return
        else:
            raw = bytearray(blob)
            for _ in range(rng.randint(1, 8)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            db.execute("UPDATE Z_METADATA SET Z_PLIST = ?", (bytes(raw),))
            return
        try:
            data = plistlib.dumps(plist, fmt=plistlib.FMT_BINARY)
        except (TypeError, ValueError, OverflowError):
            # An earlier damage left keys plistlib cannot write back (data among text keys): keep that damage.
            return
        db.execute("UPDATE Z_METADATA SET Z_PLIST = ?", (data,))
    elif action == 3:
        counter = rng.choice(["-1", "'text'", "9223372036854775807", "NULL", "0"])
        db.execute(f"UPDATE Z_PRIMARYKEY SET Z_MAX = {counter} WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY ORDER BY random() LIMIT 1)")
    elif action == 4:
        db.execute("DELETE FROM Z_PRIMARYKEY WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY ORDER BY random() LIMIT 1)")
    elif action == 5:
        table = rng.choice([name for name, columns in tables if "Z_ENT" in columns])
        db.execute(f'UPDATE "{table}" SET Z_ENT = {rng.choice(["99", "0", "-1", "NULL", "3"])} WHERE rowid IN (SELECT rowid FROM "{table}" ORDER BY random() LIMIT 1)')
    elif action == 6:
        stamps = [(name, column) for name, columns in tables for column in columns if column in ("ZADDED",)]
        if stamps:
            name, column = rng.choice(stamps)
            stamp = rng.choice(["'2024-01-01'", "'yesterday'", "x'00'", "1e300"])
            db.execute(f'UPDATE "{name}" SET "{column}" = {stamp}')
    else:
        joins = [(name, columns) for name, columns in tables if name.startswith("Z_") and name[2:3].isdigit()]
        if joins:
            name, columns = rng.choice(joins)
            if rng.random() < 0.5:
                db.execute(f'DROP TABLE "{name}"')
            else:
                db.execute(f'ALTER TABLE "{name}" RENAME COLUMN "{rng.choice(columns)}" TO "ZRENAMED"')


def build(base, layout):
    """The pristine store of a layout, its folder's files and the commands to run on it."""
    project = os.path.join(base, layout)
    os.makedirs(project)
    if layout == "mapc":
        # The example's policy files too (links to their source: copied as files).
        for sub in ("schemas", "mappings", "policies"):
            shutil.copytree(os.path.join(ROOT, sub), os.path.join(project, sub))
        notes, attachments = [], []
        for i in range(30):
            note = {"id": f"n{i}", "title": f"Note {i}", "body": f"Body {i}", "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": i}
            if i % 2 == 0:
                note["attachments"] = [f"a{i}"]
                attachments.append({"id": f"a{i}", "image": "iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA=", "dateCreated": "2024-05-01T10:00:00Z"})
            notes.append(note)
        data = {"version": "v3", "objects": {"Note": notes, "Attachment": attachments}}
        extra = {"version": "v3", "objects": {"Note": [{"id": "x1", "title": "x", "body": "y", "dateCreated": "2024-05-01", "displayIndex": 99}]}}
        commands = NOTES_COMMANDS
    else:
        os.makedirs(os.path.join(project, "schemas"))
        with open(os.path.join(project, "schemas", "s1.yaml"), "w") as handle:
            handle.write(SHELF_V1)
        with open(os.path.join(project, "schemas", "s2.yaml"), "w") as handle:
            handle.write(SHELF_V1.replace("version: s1", "version: s2").replace("      name: string\n    relationships:\n      books",
                                                                                  "      name: string\n      color: string?\n    relationships:\n      books"))
        with open(os.path.join(project, "schemas", "versions.yaml"), "w") as handle:
            handle.write("versions: [s1, s2]\n")
        books = [{"id": f"b{i}", "title": f"Book {i}", "added": "2024-05-01T10:00:00.123Z", "rating": 4.5, "price": "12.50", "count": i,
                  "done": i % 2 == 0, "code": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "link": "https://example.com", "cover": "AAEC",
                  "pages": 100 + i, "tags": [f"t{i % 3}", f"t{(i + 1) % 3}"], "owner": f"p{i % 2}"} for i in range(12)]
        magazines = [{"id": f"m{i}", "title": f"Mag {i}", "issue": i, "tags": [f"t{i % 3}"]} for i in range(5)]
        data = {"version": "s1", "objects": {"Book": books, "Magazine": magazines, "Tag": [{"id": f"t{i}", "name": f"Tag {i}"} for i in range(3)],
                                              "Person": [{"id": f"p{i}", "name": f"P {i}"} for i in range(2)]}}
        extra = {"version": "s1", "objects": {"Tag": [{"id": "tx", "name": "new"}]}}
        commands = SHELF_COMMANDS
    with open(os.path.join(project, "data.json"), "w") as handle:
        json.dump(data, handle)
    with open(os.path.join(project, "extra.json"), "w") as handle:
        json.dump(extra, handle)
    arguments = ["load"] + (["--layout", "core-data"] if layout == "core-data" else []) + ["data.json", "pristine.db"]
    subprocess.run([OPTIONS.mapc] + arguments, cwd=project, check=True, capture_output=True)
    return project, commands


def main():
    global OPTIONS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mapc", default=os.path.join(ROOT, ".build", "release", "mapc"))
    parser.add_argument("--copies", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--layout", choices=["mapc", "core-data", "both"], default="both")
    OPTIONS = parser.parse_args()
    rng = random.Random(OPTIONS.seed)
    base = tempfile.mkdtemp(prefix="mapc-store-fuzz-")
    failures = 0
    try:
        for layout in (["mapc", "core-data"] if OPTIONS.layout == "both" else [OPTIONS.layout]):
            project, commands = build(base, layout)
            pristine = open(os.path.join(project, "pristine.db"), "rb").read()
            connection = sqlite3.connect(os.path.join(project, "pristine.db"))
            tables = [(name, [c[1] for c in connection.execute(f'PRAGMA table_info("{name}")')])
                      for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            connection.close()
            statuses, crashes, slowest, slow, largest = {}, [], (0.0, ""), 0, 0
            store = os.path.join(project, "store.db")
            for copy in range(OPTIONS.copies):
                for command in commands:
                    for suffix in ("", "-wal", "-shm", "-journal", ".mapc-lock"):
                        if os.path.exists(store + suffix):
                            os.remove(store + suffix)
                    damaged = bytearray(pristine)
                    kind = copy % 5
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
                            try:
                                if kind == 4 and layout == "core-data":
                                    damage_core_data(db, rng, tables)
                                    continue
                                action = rng.randrange(10)
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
                    started = time.monotonic()
                    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                    try:
                        result = subprocess.run([OPTIONS.mapc] + command, cwd=project, capture_output=True, text=True, timeout=60, preexec_fn=limits)
                        code = result.returncode
                    except subprocess.TimeoutExpired:
                        code = "timeout"
                    seconds = time.monotonic() - started
                    # The children's peak so far: it grows only when a run sets a new peak.
                    largest = max(largest, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
                    label = f"copy {copy} ({['bytes', 'cut', 'cells', 'cells', 'bookkeeping' if layout == 'core-data' else 'cells'][kind]}), {' '.join(command)}"
                    if seconds > slowest[0]:
                        slowest = (seconds, label)
                    if seconds > TIME_LIMIT:
                        slow += 1
                    statuses[code] = statuses.get(code, 0) + 1
                    if code not in (0, 1, 2, 3):
                        crashes.append(f"{label}: exit {code}")
            runs = sum(statuses.values())
            print(f"{layout}: {OPTIONS.copies} damaged copies x {len(commands)} commands = {runs} runs; exit statuses: "
                  + ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items(), key=lambda item: str(item[0]))))
            print(f"  slowest {slowest[0]:.2f} s ({slowest[1]}); {slow} over {TIME_LIMIT:.0f} s; largest peak {largest / 1024:.0f} MiB (limit {MEMORY_LIMIT >> 20} MiB)")
            for line in crashes[:20]:
                print("  CRASH " + line)
            print(f"  {len(crashes)} crashed")
            failures += len(crashes) + slow
        sys.exit(1 if failures else 0)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
