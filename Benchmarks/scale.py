#!/usr/bin/env python3
"""How the cost of a command grows with the size of what it is given: each case is timed at a
size and at twice and four times that size, with the release binary, and the ratio of each time to
the one before is printed. A command whose work is linear in its input shows ratios near 2; near 4
is a cost in the square of the input, which a hostile or very large file turns into minutes.

Cases: `check` of a schema folder of N entities in two versions (inference between them), `init`
and `run` of a store of each format laid out for N entities, and `mapc lsp` opening a document of
N lines of comments, a data file (`load`) holding one string of N lines (text and escapes in turn),
and one holding an object of each of N entities.

  Benchmarks/scale.py            # 1000, 2000, 4000 entities; 100k, 200k, 400k lines
  Benchmarks/scale.py 500        # 500, 1000, 2000 entities; 50k, 100k, 200k lines
"""
import json, os, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAPC = os.environ.get("MAPC") or os.path.join(ROOT, ".build", "release", "mapc")
base = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
if not os.environ.get("MAPC"):
    subprocess.run(["swift", "build", "-c", "release", "--product", "mapc", "--package-path", ROOT], check=True, stdout=subprocess.DEVNULL)


def schema(entities, version):
    lines = ["model: Scale", f"version: {version}", "entities:"]
    for e in range(entities):
        lines += [f"  E{e}:", "    attributes:", "      name: { type: string, optional: true }"]
        if version == "v2":
            lines.append("      count: { type: int64, default: 0 }")
    return "\n".join(lines) + "\n"


def timed(arguments, cwd, stdin=None):
    start = time.monotonic()
    done = subprocess.run([MAPC] + arguments, cwd=cwd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"mapc {' '.join(arguments)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return seconds


def project(folder, entities):
    os.makedirs(os.path.join(folder, "schemas"))
    for version in ("v1", "v2"):
        with open(os.path.join(folder, "schemas", f"{version}.yaml"), "w") as file:
            file.write(schema(entities, version))


def lsp_input(folder, lines):
    text = "model: Scale\nversion: v1\nentities:\n  A:\n    attributes:\n      x: { type: string }\n" + "# a comment\n" * lines
    uri = "file://" + os.path.join(folder, "schemas", "v1.yaml")
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "version": 1, "text": text}}},
                {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
    framed = b""
    for message in messages:
        body = json.dumps(message).encode()
        framed += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return framed


def case(name, run):
    times = []
    for factor in (1, 2, 4):
        work = tempfile.mkdtemp(prefix="mapc-scale-")
        try:
            times.append(run(work, factor))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    ratios = " ".join(f"x{later / earlier:.1f}" for earlier, later in zip(times, times[1:]) if earlier > 0)
    print(f"{name:<34} " + " ".join(f"{t:7.2f} s" for t in times) + f"   {ratios}", flush=True)


def check(work, factor):
    project(work, base * factor)
    return timed(["check"], work)


def init(layout):
    def run(work, factor):
        project(work, base * factor)
        return timed(["init", "--schema", "v1", "--layout", layout, "store.sqlite"], work)
    return run


def migrate(layout):
    def run(work, factor):
        project(work, base * factor)
        timed(["init", "--schema", "v1", "--layout", layout, "store.sqlite"], work)
        return timed(["run", "--to", "v2", "store.sqlite"], work)
    return run


def lsp(work, factor):
    os.makedirs(os.path.join(work, "schemas"))
    return timed(["lsp"], work, stdin=lsp_input(work, base * 100 * factor))


def load(work, factor):
    project(work, 1)
    data = {"version": "v1", "objects": {"E0": [{"id": "e0", "name": "a line\n" * (base * 100 * factor)}]}}
    with open(os.path.join(work, "data.json"), "w") as file:
        json.dump(data, file)
    return timed(["load", "data.json", "store.sqlite"], work)


def load_entities(work, factor):
    project(work, base * factor)
    data = {"version": "v1", "objects": {f"E{e}": [{"id": f"o{e}", "name": "x"}] for e in range(base * factor)}}
    with open(os.path.join(work, "data.json"), "w") as file:
        json.dump(data, file)
    return timed(["load", "data.json", "store.sqlite"], work)


print(f"mapc at {MAPC}; sizes {base}, {base * 2}, {base * 4} entities ({base * 100}, {base * 200}, {base * 400} lines, escapes)")
case("check (two versions)", check)
case("init (mapc)", init("mapc"))
case("init (core-data)", init("core-data"))
case("run v1 -> v2 (mapc)", migrate("mapc"))
case("run v1 -> v2 (core-data)", migrate("core-data"))
case("lsp didOpen (comment lines)", lsp)
case("load (a string of N lines)", load)
case("load (an object of each of N entities)", load_entities)
