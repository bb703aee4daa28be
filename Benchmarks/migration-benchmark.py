#!/usr/bin/env python3
"""The migration benchmark (not a test). One command runs every path on generated UnCloudNotes
stores and compares each with a hand-written SQL migration doing the same work:

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

Times on a small machine move by 20% or more between runs, and by 30-50% within minutes at 1M
(page cache, write-back of the previous run's gigabytes, the host): the paths run in rounds, each
round the v2 -> v3 SQL, compiled, interpreted, the v3 -> v4 SQL and policy, on fresh copies, so a
slow phase falls on every path alike. --repeat N runs N timed rounds after an untimed one and
reports the medians (and the largest peak memory).

Needs: swift (release build of mapc), sqlite3, python3. Each N needs about 1.6 KiB of disk per note.
"""
import argparse, hashlib, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAPC = os.path.join(ROOT, ".build", "release", "mapc")
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


def digest(database, queries):
    """A digest of every row the queries return, in order."""
    db = sqlite3.connect(database)
    hasher = hashlib.sha256()
    for query in queries:
        for row in db.execute(query):
            hasher.update(repr(row).encode())
    db.close()
    return hasher.hexdigest()


V3_TABLES = ['SELECT _pk, _entity, _id, title, body, dateCreated, displayIndex FROM "Note" ORDER BY _pk',
             'SELECT _pk, _entity, _id, hex(image), dateCreated, note FROM "Attachment" ORDER BY _pk']
V4_TABLES = ['SELECT _pk, _entity, _id, title, body, dateCreated, displayIndex FROM "Note" ORDER BY _pk',
             'SELECT _pk, _entity, _id, dateCreated, caption, height, width, hex(image), note FROM "Attachment" ORDER BY _pk']


def generate(folder, n):
    """A v2 store of n notes, 30% with a 1 KiB PNG, and the v3 store the compiled path makes of it."""
    v2 = os.path.join(folder, "v2.db")
    run([MAPC, "init", "--schemas", SCHEMAS, "--schema", "v2", v2])
    run(["sqlite3", v2], input=f"""
BEGIN;
WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < {n} - 1)
INSERT INTO "Note" ("_entity", "_id", "title", "body", "dateCreated", "displayIndex", "image")
SELECT 'Note', 'n' || i, 'Note ' || i, 'The body of note number ' || i || ', long enough to look like a real note and to be cut at eighty characters.',
       1714557600 + i, i, CASE WHEN i % 10 < 3 THEN CAST(x'{PNG_HEADER}' || randomblob(1000) AS BLOB) END
FROM seq;
COMMIT;
""")
    return v2


def empty_store(path, version):
    """A new empty store of a version at `path`, replacing what was there (a repeated run's)."""
    if os.path.exists(path):
        os.remove(path)
    run([MAPC, "init", "--schemas", SCHEMAS, "--schema", version, path])


def sql_migration(source, destination, version, inserts):
    """Seconds the sqlite3 shell takes to copy the notes from `source` into a new empty store of
    `version` at `destination` and run `inserts`, in one transaction."""
    empty_store(destination, version)
    return sql_seconds(source, f"""
ATTACH '{destination}' AS d;
BEGIN;
INSERT INTO d."Note" ("_pk", "_entity", "_id", "title", "body", "dateCreated", "displayIndex")
  SELECT "_pk", 'Note', "_id", "title", "body", "dateCreated", "displayIndex" FROM main."Note";
{inserts}
COMMIT;
""")


def sql_v2_to_v3(source, destination):
    return sql_migration(source, destination, "v3", """
INSERT INTO d."Attachment" ("_entity", "_id", "image", "dateCreated", "note")
  SELECT 'Attachment', "_id" || '.NoteToAttachment', "image", "dateCreated", "_pk" FROM main."Note" WHERE "image" IS NOT NULL ORDER BY "_pk";""")


def png_dimension(offset):
    """The big-endian 32-bit number at a 1-based byte offset of the image, in SQL."""
    digits = " + ".join(f"(instr('0123456789ABCDEF', substr(hex(substr(a.image, {offset}, 4)), {i + 1}, 1)) - 1) * {16 ** (7 - i)}" for i in range(8))
    return f"CAST(({digits}) AS REAL)"


def sql_v3_to_v4(source, destination):
    return sql_migration(source, destination, "v4", f"""
INSERT INTO d."Attachment" ("_pk", "_entity", "_id", "dateCreated", "caption", "height", "width", "image", "note")
  SELECT a."_pk", 'ImageAttachment', a."_id", a."dateCreated", coalesce(substr(n."body", 1, 80), ''),
         CASE WHEN substr(a.image, 1, 8) = x'89504E470D0A1A0A' THEN {png_dimension(21)} ELSE 0.0 END,
         CASE WHEN substr(a.image, 1, 8) = x'89504E470D0A1A0A' THEN {png_dimension(17)} ELSE 0.0 END,
         a."image", a."note"
  FROM main."Attachment" a LEFT JOIN main."Note" n ON n."_pk" = a."note" ORDER BY a."_pk";""")


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
    parser.add_argument("--paths", default="compiled,interpreted,policy")
    parser.add_argument("--keep", help="keep the generated stores in this folder")
    parser.add_argument("--repeat", type=int, default=1, help="runs of mapc and of the SQL for each path (medians reported)")
    options = parser.parse_args()
    known = ["compiled", "interpreted", "policy"]
    unknown = set(options.paths.split(",")) - set(known)
    if unknown:
        sys.exit(f"unknown paths {', '.join(sorted(unknown))}: choose among {', '.join(known)}")
    paths = [path for path in known if path in options.paths.split(",")]
    run(["swift", "build", "-c", "release", "--product", "mapc", "--package-path", ROOT])
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
    """Measures the paths on a store of n notes in rounds. A round runs the v2 -> v3 SQL, the
    compiled and interpreted paths, the v3 -> v4 SQL and the policy path, one after the other, so
    that a slow phase of the machine falls on every path alike; with --repeat N there are N timed
    rounds after an untimed one (the first runs after the stores are generated were the slowest,
    the kernel still settling the new gigabytes), and the medians are reported."""
    v2 = generate(folder, n)
    images = sqlite3.connect(v2).execute('SELECT count(*) FROM "Note" WHERE image IS NOT NULL').fetchone()[0]
    objects = n + images
    sql_v3, sql_v4, v3 = (os.path.join(folder, name) for name in ["sql-v3.db", "sql-v4.db", "v3.db"])
    stores = {path: os.path.join(folder, f"{path}.db") for path in ["compiled", "interpreted", "policy"]}
    def command(path):
        version = "v4" if path == "policy" else "v3"
        extra = ["--interpret"] if path == "interpreted" else []
        return [MAPC, "run", "--quiet", "--schemas", SCHEMAS, "--mappings", MAPPINGS, "--to", version, *extra, stores[path]]

    # The policy path starts from the compiled path's v3 store, checked equal to the SQL's first.
    sql_v2_to_v3(v2, sql_v3)
    timed_run(v2, stores["compiled"], command("compiled"))
    if digest(stores["compiled"], V3_TABLES) != digest(sql_v3, V3_TABLES):
        sys.exit("compiled: mapc's v3 store differs from the SQL migration's")
    shutil.copyfile(stores["compiled"], v3)

    times = {path: [] for path in paths}
    references = {path: [] for path in paths}
    peaks = {path: 0 for path in paths}
    for round in range(repeat + 1 if repeat > 1 else 1):
        timed = repeat == 1 or round > 0
        to_v3 = None   # the v2 -> v3 SQL's seconds: once a round, for both paths that do it
        for path in paths:
            if path == "policy":
                reference = sql_v3_to_v4(v3, sql_v4)
                seconds, peak = timed_run(v3, stores[path], command(path))
            else:
                reference = to_v3 = to_v3 if to_v3 is not None else sql_v2_to_v3(v2, sql_v3)
                seconds, peak = timed_run(v2, stores[path], command(path))
            if timed:
                times[path].append(seconds)
                references[path].append(reference)
                peaks[path] = max(peaks[path], peak)
    for path in paths:
        tables, sql_store = (V4_TABLES, sql_v4) if path == "policy" else (V3_TABLES, sql_v3)
        same = digest(stores[path], tables) == digest(sql_store, tables)
        report(path, n, objects, statistics.median(times[path]), statistics.median(references[path]), peaks[path], same)


if __name__ == "__main__":
    main()
