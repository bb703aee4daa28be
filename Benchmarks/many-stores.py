#!/usr/bin/env python3
"""Many small stores at once: makes COUNT UnCloudNotes v2 stores of NOTES notes each (a third with
a photo) in a folder, then times `mapc run --jobs J FOLDER` to v4 and reports stores per second.

  Benchmarks/many-stores.py                 # 1000 stores of 50 notes, jobs 1 and the number of cores
  Benchmarks/many-stores.py 200 20
"""
import os, shutil, sqlite3, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAPC = os.path.join(ROOT, ".build", "release", "mapc")
count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
notes = int(sys.argv[2]) if len(sys.argv) > 2 else 50
subprocess.run(["swift", "build", "-c", "release", "--product", "mapc", "--package-path", ROOT], check=True, stdout=subprocess.DEVNULL)
folder = tempfile.mkdtemp(prefix="mapc-many-")
try:
    template = os.path.join(folder, "template.sqlite")
    subprocess.run([MAPC, "init", "--schemas", os.path.join(ROOT, "schemas"), "--schema", "v2", template], check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(template)
    png = bytes.fromhex("89504E470D0A1A0A0000000D494844520000028000000 1E00806000000".replace(" ", "")) + os.urandom(200)
    db.executemany('INSERT INTO "Note" ("_entity", "_id", "title", "body", "dateCreated", "displayIndex", "image") VALUES (?, ?, ?, ?, ?, ?, ?)',
                   [("Note", f"n{i}", f"Note {i}", f"The body of note {i}", 1714557600 + i, i, png if i % 3 == 0 else None) for i in range(notes)])
    db.commit()
    db.close()
    for jobs in sorted({1, os.cpu_count() or 1}):
        stores = os.path.join(folder, f"stores-{jobs}")
        os.makedirs(stores)
        for i in range(count):
            shutil.copyfile(template, os.path.join(stores, f"user{i:05}.sqlite"))
        os.sync()
        start = time.monotonic()
        done = subprocess.run([MAPC, "run", "--quiet", "--jobs", str(jobs), "--schemas", os.path.join(ROOT, "schemas"),
                               "--mappings", os.path.join(ROOT, "mappings"), stores], stdout=subprocess.PIPE, text=True)
        seconds = time.monotonic() - start
        summary = done.stdout.strip().splitlines()[-1] if done.stdout else ""
        print(f"{count} stores of {notes} notes, --jobs {jobs}: {seconds:.2f} s, {count / seconds:.1f} stores/s (exit {done.returncode}; {summary})")
finally:
    shutil.rmtree(folder, ignore_errors=True)
