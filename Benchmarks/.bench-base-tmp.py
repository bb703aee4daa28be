#!/usr/bin/env python3
"""The migration benchmark (not a test). One command runs every path on generated UnCloudNotes
stores and compares each with a hand-written SQL migration doing the same work:

  inferred     v1 -> v2, the lightweight step mapc infers (every note copied, a new optional image)
  compiled     v2 -> v3 with the shipped mapping (compiled to INSERT ... SELECT)
  interpreted  v2 -> v3 with --interpret (every object through the expression interpreter)
  policy       v3 -> v4 with the tutorial's custom policy (caption from the note's body, width and
               height read from the PNG header); the SQL does the same inside SQLite

For each, mapc's result is checked to equal the SQL's, table by table (a digest of every row), and
the table shows seconds, the ratio to SQL, objects per second and mapc's peak resident memory.

  Benchmarks/migration-benchmark.py                      # N = 200000 and 1000000
  Benchmarks/migration-benchmark.py 100000 10000000      # any list of N
  Benchmarks/migration-benchmark.py --paths policy 200000
  Benchmarks/migration-benchmark.py --repeat 3 1000000   # the medians of 3 rounds, after an untimed one
  Benchmarks/migration-benchmark.py --layout core-data 1000000   # the same on Core Data stores

--layout core-data makes every store a Core Data store (ZNOTE, Z_PK, Z_ENT, Z_PRIMARYKEY, dates
from 2001): mapc reads and writes Core Data's tables, and the SQL does what Core Data's layout
asks of the same migration (entity numbers renumbered per version, key counters kept).

Times on a small machine move by 20% or more between runs, and by 30-50% within minutes at 1M
(page cache, write-back of the previous run's gigabytes, the host): the paths run in rounds, each
round the v2 -> v3 SQL, compiled, interpreted, the v3 -> v4 SQL and policy, on fresh copies, so a
slow phase falls on every path alike. --repeat N runs N timed rounds after an untimed one and
reports the medians (and the largest peak memory).

Needs: swift (release build of mapc), sqlite3, python3. Each N needs about 1.6 KiB of disk per note.
"""
import argparse, hashlib, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAPC = "/tmp/trial-install/bin/mapc"
SCHEMAS, MAPPINGS = os.path.join(ROOT, "schemas"), os.path.join(ROOT, "mappings")
# A PNG signature and IHDR chunk: 640 x 480.
PNG_HEADER = "89504E470D0A1A0A" + "0000000D" + "49484452" + "00000280" + "000001E0" + "0806000000"


def run(command, **kwargs):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    return done.stdout


def measure(command):
    """Seconds and peak resident KiB of one child process (its own rusage, from wait4)."""
    os.sync()
    start = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}\n{child.stderr.read().decode()}")
    return seconds, usage.ru_maxrss


def sql_seconds(database, script):
    os.sync()
    start = time.monotonic()
    run(["sqlite3", database], input=script)
    return time.monotonic() - start


class MapcLayout:
    """mapc's own store layout: tables named after entities, `_pk` keys."""
    name = "mapc"
    epoch = 0

    def notes(self, n, image):
        image_column, image_value = (', "image"', f", CASE WHEN i % 10 < 3 THEN CAST(x'{PNG_HEADER}' || randomblob(1000) AS BLOB) END") if image else ("", "")
        return f"""
WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < {n} - 1)
INSERT INTO "Note" ("_entity", "_id", "title", "body", "dateCreated", "displayIndex"{image_column})
SELECT 'Note', 'n' || i, 'Note ' || i, '{BODY}', {1714557600 - self.epoch} + i, i{image_value}
FROM seq;"""

    def copy_notes(self, version):
        return """INSERT INTO d."Note" ("_pk", "_entity", "_id", "title", "body", "dateCreated", "displayIndex")
  SELECT "_pk", 'Note', "_id", "title", "body", "dateCreated", "displayIndex" FROM main."Note";"""

    def v1_to_v2(self):
        return ""

    def v2_to_v3(self):
        return """INSERT INTO d."Attachment" ("_entity", "_id", "image", "dateCreated", "note")
  SELECT 'Attachment', "_id" || '.NoteToAttachment', "image", "dateCreated", "_pk" FROM main."Note" WHERE "image" IS NOT NULL ORDER BY "_pk";"""

    def v3_to_v4(self):
        return f"""INSERT INTO d."Attachment" ("_pk", "_entity", "_id", "dateCreated", "caption", "height", "width", "image", "note")
  SELECT a."_pk", 'ImageAttachment', a."_id", a."dateCreated", coalesce(substr(n."body", 1, 80), ''),
         CASE WHEN substr(a.image, 1, 8) = x'89504E470D0A1A0A' THEN {png_dimension(21)} ELSE 0.0 END,
         CASE WHEN substr(a.image, 1, 8) = x'89504E470D0A1A0A' THEN {png_dimension(17)} ELSE 0.0 END,
         a."image", a."note"
  FROM main."Attachment" a LEFT JOIN main."Note" n ON n."_pk" = a."note" ORDER BY a."_pk";"""

    tables = {
        "v2": ['SELECT _pk, _entity, _id, title, body, dateCreated, displayIndex, hex(image) FROM "Note" ORDER BY _pk'],
        "v3": ['SELECT _pk, _entity, _id, title, body, dateCreated, displayIndex FROM "Note" ORDER BY _pk',
               'SELECT _pk, _entity, _id, hex(image), dateCreated, note FROM "Attachment" ORDER BY _pk'],
        "v4": ['SELECT _pk, _entity, _id, title, body, dateCreated, displayIndex FROM "Note" ORDER BY _pk',
               'SELECT _pk, _entity, _id, dateCreated, caption, height, width, hex(image), note FROM "Attachment" ORDER BY _pk'],
    }


class CoreDataLayout:
    """Core Data's layout: Z-prefixed tables and columns, entity numbers (Z_ENT) given per version
    in name order, keys handed out from Z_PRIMARYKEY's counters, dates from 2001."""
    name = "core-data"
    epoch = 978307200
    # Z_ENT of each entity in each version (the numbering Core Data gives: by name).
    entity = {"v1": {"Note": 1}, "v2": {"Note": 1}, "v3": {"Attachment": 1, "Note": 2}, "v4": {"Attachment": 1, "ImageAttachment": 2, "Note": 3}}

    def notes(self, n, image):
        image_column, image_value = (", ZIMAGE", f", CASE WHEN i % 10 < 3 THEN CAST(x'{PNG_HEADER}' || randomblob(1000) AS BLOB) END") if image else ("", "")
        return f"""
WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < {n} - 1)
INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZBODY, ZDATECREATED, ZDISPLAYINDEX{image_column})
SELECT i + 1, 1, 1, 'Note ' || i, '{BODY}', {1714557600 - self.epoch} + i, i{image_value}
FROM seq;
UPDATE Z_PRIMARYKEY SET Z_MAX = {n} WHERE Z_NAME = 'Note';"""

    def copy_notes(self, version):
        return f"""INSERT INTO d.ZNOTE (Z_PK, Z_ENT, Z_OPT, ZDISPLAYINDEX, ZDATECREATED, ZBODY, ZTITLE)
  SELECT Z_PK, {self.entity[version]["Note"]}, 1, ZDISPLAYINDEX, ZDATECREATED, ZBODY, ZTITLE FROM main.ZNOTE;
UPDATE d.Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM main.ZNOTE) WHERE Z_NAME = 'Note';"""

    def v1_to_v2(self):
        return ""

    def v2_to_v3(self):
        return f"""INSERT INTO d.ZATTACHMENT (Z_PK, Z_ENT, Z_OPT, ZNOTE, ZDATECREATED, ZIMAGE)
  SELECT row_number() OVER (ORDER BY Z_PK), {self.entity["v3"]["Attachment"]}, 1, Z_PK, ZDATECREATED, ZIMAGE FROM main.ZNOTE WHERE ZIMAGE IS NOT NULL ORDER BY Z_PK;
UPDATE d.Z_PRIMARYKEY SET Z_MAX = (SELECT count(*) FROM d.ZATTACHMENT) WHERE Z_NAME = 'Attachment';"""

    def v3_to_v4(self):
        return f"""INSERT INTO d.ZATTACHMENT (Z_PK, Z_ENT, Z_OPT, ZNOTE, ZDATECREATED, ZHEIGHT, ZWIDTH, ZCAPTION, ZIMAGE)
  SELECT a.Z_PK, {self.entity["v4"]["ImageAttachment"]}, 1, a.ZNOTE, a.ZDATECREATED,
         CASE WHEN substr(a.ZIMAGE, 1, 8) = x'89504E470D0A1A0A' THEN {png_dimension(21, "ZIMAGE")} ELSE 0.0 END,
         CASE WHEN substr(a.ZIMAGE, 1, 8) = x'89504E470D0A1A0A' THEN {png_dimension(17, "ZIMAGE")} ELSE 0.0 END,
         coalesce(substr(n.ZBODY, 1, 80), ''), a.ZIMAGE
  FROM main.ZATTACHMENT a LEFT JOIN main.ZNOTE n ON n.Z_PK = a.ZNOTE ORDER BY a.Z_PK;
UPDATE d.Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM main.ZATTACHMENT) WHERE Z_NAME = 'Attachment';"""

    counters = "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"
    tables = {
        "v2": ["SELECT Z_PK, Z_ENT, Z_OPT, ZTITLE, ZBODY, ZDATECREATED, ZDISPLAYINDEX, hex(ZIMAGE) FROM ZNOTE ORDER BY Z_PK", counters],
        "v3": ["SELECT Z_PK, Z_ENT, Z_OPT, ZTITLE, ZBODY, ZDATECREATED, ZDISPLAYINDEX FROM ZNOTE ORDER BY Z_PK",
               "SELECT Z_PK, Z_ENT, Z_OPT, ZNOTE, ZDATECREATED, hex(ZIMAGE) FROM ZATTACHMENT ORDER BY Z_PK", counters],
        "v4": ["SELECT Z_PK, Z_ENT, Z_OPT, ZTITLE, ZBODY, ZDATECREATED, ZDISPLAYINDEX FROM ZNOTE ORDER BY Z_PK",
               "SELECT Z_PK, Z_ENT, Z_OPT, ZNOTE, ZDATECREATED, ZHEIGHT, ZWIDTH, ZCAPTION, hex(ZIMAGE) FROM ZATTACHMENT ORDER BY Z_PK", counters],
    }


BODY = "The body of note number ' || i || ', long enough to look like a real note and to be cut at eighty characters."
LAYOUT = MapcLayout()
# Each path: the version it starts from, the version it migrates to, and the SQL doing its work.
PATHS = {"inferred": ("v1", "v2"), "compiled": ("v2", "v3"), "interpreted": ("v2", "v3"), "policy": ("v3", "v4")}


def digest(database, queries):
    """A digest of every row the queries return, in order."""
    db = sqlite3.connect(database)
    hasher = hashlib.sha256()
    for query in queries:
        for row in db.execute(query):
            hasher.update(repr(row).encode())
    db.close()
    return hasher.hexdigest()


def generate(folder, n, version):
    """A store of `version` (v1 or v2) of n notes; at v2, 30% with a 1 KiB PNG."""
    path = os.path.join(folder, f"{version}.db")
    empty_store(path, version)
    run(["sqlite3", path], input=f"BEGIN;{LAYOUT.notes(n, image=version == 'v2')}\nCOMMIT;\n")
    return path


def empty_store(path, version):
    """A new empty store of a version at `path`, replacing what was there (a repeated run's)."""
    if os.path.exists(path):
        os.remove(path)
    run([MAPC, "init", "--schemas", SCHEMAS, "--schema", version, "--layout", LAYOUT.name, path])


def sql_migration(source, destination, version, inserts):
    """Seconds the sqlite3 shell takes to copy the notes from `source` into a new empty store of
    `version` at `destination` and run `inserts`, in one transaction."""
    empty_store(destination, version)
    return sql_seconds(source, f"""
ATTACH '{destination}' AS d;
BEGIN;
{LAYOUT.copy_notes(version)}
{inserts}
COMMIT;
""")


def sql_step(path, source, destination):
    """The SQL doing a path's migration: its seconds."""
    work = {"inferred": LAYOUT.v1_to_v2, "compiled": LAYOUT.v2_to_v3, "interpreted": LAYOUT.v2_to_v3, "policy": LAYOUT.v3_to_v4}[path]
    return sql_migration(source, destination, PATHS[path][1], work())


def png_dimension(offset, column="image"):
    """The big-endian 32-bit number at a 1-based byte offset of the image, in SQL."""
    digits = " + ".join(f"(instr('0123456789ABCDEF', substr(hex(substr(a.{column}, {offset}, 4)), {i + 1}, 1)) - 1) * {16 ** (7 - i)}" for i in range(8))
    return f"CAST(({digits}) AS REAL)"


def timed_run(source, store, command):
    """mapc's seconds and peak (KiB) on a fresh copy of `source` at `store`."""
    shutil.copyfile(source, store)
    return measure(command)


def report(path, n, objects, seconds, reference_seconds, peak, same):
    print(f"{path:<12} {n:>10} {objects:>10} {seconds:>8.2f} {reference_seconds:>8.2f} {seconds / reference_seconds:>6.2f}x {objects / seconds:>10.0f} {peak / 1024:>9.0f}  {'same as SQL' if same else 'DIFFERS FROM SQL'}", flush=True)
    if not same:
        sys.exit(f"{path}: mapc's store differs from the SQL migration's")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[200_000, 1_000_000])
    parser.add_argument("--paths", default="inferred,compiled,interpreted,policy")
    parser.add_argument("--layout", default="mapc", choices=["mapc", "core-data"], help="the store format of every store")
    parser.add_argument("--keep", help="keep the generated stores in this folder")
    parser.add_argument("--repeat", type=int, default=1, help="runs of mapc and of the SQL for each path (medians reported)")
    options = parser.parse_args()
    global LAYOUT
    LAYOUT = CoreDataLayout() if options.layout == "core-data" else MapcLayout()
    known = list(PATHS)
    unknown = set(options.paths.split(",")) - set(known)
    if unknown:
        sys.exit(f"unknown paths {', '.join(sorted(unknown))}: choose among {', '.join(known)}")
    paths = [path for path in known if path in options.paths.split(",")]
    pass
    print(f"layout: {LAYOUT.name}")
    print(f"{'path':<12} {'notes':>10} {'objects':>10} {'mapc s':>8} {'sql s':>8} {'ratio':>7} {'objects/s':>10} {'peak MiB':>9}  result")
    for n in options.sizes:
        folder = options.keep or tempfile.mkdtemp(prefix="mapc-benchmark-")
        os.makedirs(folder, exist_ok=True)
        try:
            measure_size(folder, n, paths, options.repeat)
        finally:
            if not options.keep:
                shutil.rmtree(folder, ignore_errors=True)


def measure_size(folder, n, paths, repeat):
    """Measures the paths on a store of n notes in rounds. A round runs, for each path, the SQL
    then mapc, one path after the other, so that a slow phase of the machine falls on every path
    alike; with --repeat N there are N timed rounds after an untimed one (the first runs after the
    stores are generated were the slowest, the kernel still settling the new gigabytes), and the
    medians are reported."""
    sources = {"v1": generate(folder, n, "v1"), "v2": generate(folder, n, "v2")}
    images = sqlite3.connect(sources["v2"]).execute(f'SELECT count(*) FROM {"ZNOTE" if LAYOUT.name == "core-data" else "Note"} WHERE {"ZIMAGE" if LAYOUT.name == "core-data" else "image"} IS NOT NULL').fetchone()[0]
    stores = {path: os.path.join(folder, f"{path}.db") for path in PATHS}
    references_stores = {version: os.path.join(folder, f"sql-{version}.db") for version in ["v2", "v3", "v4"]}
    def command(path):
        extra = ["--interpret"] if path == "interpreted" else []
        return [MAPC, "run", "--quiet", "--schemas", SCHEMAS, "--mappings", MAPPINGS, "--to", PATHS[path][1], *extra, stores[path]]

    # The policy path starts from the compiled path's v3 store, checked equal to the SQL's first.
    sql_step("compiled", sources["v2"], references_stores["v3"])
    timed_run(sources["v2"], stores["compiled"], command("compiled"))
    if digest(stores["compiled"], LAYOUT.tables["v3"]) != digest(references_stores["v3"], LAYOUT.tables["v3"]):
        sys.exit("compiled: mapc's v3 store differs from the SQL migration's")
    sources["v3"] = os.path.join(folder, "v3.db")
    shutil.copyfile(stores["compiled"], sources["v3"])

    times = {path: [] for path in paths}
    references = {path: [] for path in paths}
    peaks = {path: 0 for path in paths}
    for round in range(repeat + 1 if repeat > 1 else 1):
        timed = repeat == 1 or round > 0
        done = {}   # the SQL's seconds per step: once a round for the paths that share a step
        for path in paths:
            start, end = PATHS[path]
            if (start, end) not in done:
                done[(start, end)] = sql_step(path, sources[start], references_stores[end])
            seconds, peak = timed_run(sources[start], stores[path], command(path))
            if timed:
                times[path].append(seconds)
                references[path].append(done[(start, end)])
                peaks[path] = max(peaks[path], peak)
    for path in paths:
        end = PATHS[path][1]
        objects = n + (images if end != "v2" else 0)
        same = digest(stores[path], LAYOUT.tables[end]) == digest(references_stores[end], LAYOUT.tables[end])
        report(path, n, objects, statistics.median(times[path]), statistics.median(references[path]), peaks[path], same)


if __name__ == "__main__":
    main()
