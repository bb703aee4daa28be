#!/usr/bin/env bash
# The migration benchmark (not a test): builds mapc in release mode, generates a v2 UnCloudNotes
# store with N notes (30% with a 1 KiB image), then times `mapc run --from v2 --to v3` against the
# equivalent hand-written SQL migration run by the sqlite3 CLI on a copy, and reports mapc's peak
# memory (maximum resident set size).
#
#   Benchmarks/migration-benchmark.sh              # N = 250000 and 1000000
#   Benchmarks/migration-benchmark.sh 50000        # any list of N
#
# Needs: swift, sqlite3, python3 (for timing and peak memory of child processes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(250000 1000000)

swift build -c release --product mapc --package-path "$root" >&2
mapc="$root/.build/release/mapc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs a command; prints "seconds peak_kib" for it alone.
measure() {
  python3 - "$@" <<'PY'
import os, resource, subprocess, sys, time
start = time.monotonic()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
elapsed = time.monotonic() - start
if done.returncode != 0:
    sys.exit(f"command failed ({done.returncode}): {' '.join(sys.argv[1:])}")
print(f"{elapsed:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
PY
}

printf '%-10s %10s %10s %8s %14s\n' "notes" "mapc s" "sql s" "ratio" "mapc peak MiB"
for n in "${sizes[@]}"; do
  rm -f "$work"/*.db*
  "$mapc" init --schemas "$root/schemas" --schema v2 "$work/store.db" >/dev/null
  sqlite3 "$work/store.db" <<SQL
BEGIN;
WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < $n - 1)
INSERT INTO "Note" ("_entity", "_id", "title", "body", "dateCreated", "displayIndex", "image")
SELECT 'Note', 'n' || i, 'Note ' || i, 'The body of note number ' || i || ', long enough to look like a real note.',
       1714557600 + i, i, CASE WHEN i % 10 < 3 THEN randomblob(1024) END
FROM seq;
COMMIT;
SQL
  cp "$work/store.db" "$work/copy.db"

  read -r mapc_seconds mapc_kib < <(measure "$mapc" run --quiet --schemas "$root/schemas" --mappings "$root/mappings" --from v2 --to v3 "$work/store.db")

  # The same migration by hand: a v3 store (same tables and indexes), filled with two INSERT ... SELECTs.
  "$mapc" init --schemas "$root/schemas" --schema v3 "$work/dest.db" >/dev/null
  cat > "$work/migrate.sql" <<SQL
ATTACH '$work/dest.db' AS d;
BEGIN;
INSERT INTO d."Note" ("_pk", "_entity", "_id", "title", "body", "dateCreated", "displayIndex")
  SELECT "_pk", 'Note', "_id", "title", "body", "dateCreated", "displayIndex" FROM main."Note";
INSERT INTO d."Attachment" ("_entity", "_id", "image", "dateCreated", "note")
  SELECT 'Attachment', "_id" || '.NoteToAttachment', "image", "dateCreated", "_pk" FROM main."Note" WHERE "image" IS NOT NULL;
COMMIT;
SQL
  read -r sql_seconds _ < <(measure sqlite3 "$work/copy.db" ".read $work/migrate.sql")

  # Both must give the same data.
  a=$(sqlite3 "$work/store.db" 'SELECT count(*), sum(length(image)) FROM "Attachment"; SELECT count(*) FROM "Note";' | tr '\n' ' ')
  b=$(sqlite3 "$work/dest.db" 'SELECT count(*), sum(length(image)) FROM "Attachment"; SELECT count(*) FROM "Note";' | tr '\n' ' ')
  [ "$a" = "$b" ] || { echo "results differ: mapc $a / sql $b" >&2; exit 1; }

  ratio=$(python3 -c "print(f'{$mapc_seconds / max($sql_seconds, 0.01):.2f}')")
  printf '%-10s %10s %10s %8s %14s\n' "$n" "$mapc_seconds" "$sql_seconds" "${ratio}x" "$((mapc_kib / 1024))"
done
