#!/usr/bin/env python3
"""`mapc import` on damaged copies of real Xcode models and mapping models: none may crash, none
may run over 10 s or use over 1 GiB.

The inputs are the data models and mapping models of the team's corpus (`../shared/corpus`, read
in place, never copied into the project) and the project's own fixtures. Each copy is damaged one
way: bytes of the XML flipped, inserted or cut; bytes that are not UTF-8 put into an element or
attribute name or a processing instruction; the `.xccurrentversion` property list replaced by
garbage, wrong types or a binary list of shared references (12 KB standing for 1000^12 objects);
a mapping model's archived expressions or embedded models (base64 binary property lists)
mutated byte by byte or rebuilt with shared references, deep nesting, wrong types and loops.
Each import runs under a 1 GiB address-space limit and a 60 s timeout and must end with one of
mapc's documented exit statuses (0, 1, 2), never a signal. Counts, the slowest run and the
largest memory are printed; the exit status is 1 if any crashed or ran over the bounds.

Usage: Benchmarks/import-fuzz.py [--mapc PATH] [--copies N] [--seed S]
"""
import argparse
import base64
import os
import plistlib
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
MEMORY_LIMIT = 1 << 30
TIME_LIMIT = 10.0


def limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def find(suffix):
    found = []
    for top in (CORPUS, os.path.join(ROOT, "Tests", "MapcKitTests", "Fixtures", "xcode")):
        for folder, names, _ in os.walk(top):
            found += [os.path.join(folder, name) for name in names if name.endswith(suffix)]
    return sorted(found)


def shared_list(levels, width):
    value = [1]
    for _ in range(levels):
        value = [value] * width
    return value


def mutate_bytes(data, rng):
    data = bytearray(data)
    how = rng.randrange(5)
    if how == 0:
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == 1:
        del data[rng.randrange(len(data)):]
    elif how == 2:
        at = rng.randrange(len(data))
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
    elif how == 3:
        # A byte that is not UTF-8 inside a name: an element's, an attribute's, a PI's target.
        names = [m.start() + 2 for m in re.finditer(rb"<[A-Za-z?]", data)] + [m.start() + 1 for m in re.finditer(rb" [a-z]+=", data)]
        if names:
            at = rng.choice(names)
            data[at:at] = bytes([rng.choice([0xFF, 0xFE, 0xC3, 0x80, 0xED])])
    else:
        data += b"<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>&e;" if rng.random() < 0.5 else b"\x00\x00"
    return bytes(data)


def mutate_plist(blob, rng):
    """A binary property list changed as a hostile file would."""
    how = rng.randrange(5)
    if how == 0:
        return mutate_bytes(blob, rng)
    try:
        value = plistlib.loads(blob)
    except Exception:
        return mutate_bytes(blob, rng)
    if how == 1:
        extra = shared_list(rng.choice([4, 8, 12]), rng.choice([100, 1000]))
    elif how == 2:
        extra = [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]
        for _ in range(rng.choice([10, 100, 600])):
            extra = [extra]
    elif how == 3:
        extra = rng.choice(["text", 7, b"\xff" * 100, {"$class": plistlib.UID(9999)}, plistlib.UID(123456)])
    else:
        if isinstance(value, dict) and isinstance(value.get("$objects"), list) and value["$objects"]:
            objects = value["$objects"]
            index = rng.randrange(len(objects))
            objects[index] = rng.choice([shared_list(8, 100), plistlib.UID(index), {"NSExpressionType": 4, "NSArguments": plistlib.UID(index)}, None or "x"])
            return plistlib.dumps(value, fmt=plistlib.FMT_BINARY)
        extra = shared_list(12, 1000)
    if isinstance(value, dict):
        value["Extra"] = extra
    else:
        value = {"root": value, "Extra": extra}
    return plistlib.dumps(value, fmt=plistlib.FMT_BINARY)


def mutate_mapping(xml, rng):
    """A mapping model with one of its base64 binary property lists mutated, or its bytes."""
    blobs = list(re.finditer(rb'(<attribute name="[a-z]+" type="binary">)([A-Za-z0-9+/=\s]+)(</attribute>)', xml))
    if not blobs or rng.random() < 0.3:
        return mutate_bytes(xml, rng)
    match = rng.choice(blobs)
    try:
        blob = base64.b64decode(match.group(2))
    except Exception:
        return mutate_bytes(xml, rng)
    encoded = base64.b64encode(mutate_plist(blob, rng))
    return xml[:match.start(2)] + encoded + xml[match.end(2):]


def main():
    sys.setrecursionlimit(20000)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mapc", default=os.path.join(ROOT, ".build", "release", "mapc"))
    parser.add_argument("--copies", type=int, default=400)
    parser.add_argument("--seed", type=int, default=20261126)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    models, mappings = find(".xcdatamodeld"), find(".xcmappingmodel")
    if not models:
        print(f"no models found (is {CORPUS} present?)")
        sys.exit(1)
    base = tempfile.mkdtemp(prefix="mapc-import-fuzz-")
    statuses, crashes, slowest, slow, largest = {}, [], (0.0, ""), 0, 0
    try:
        for copy in range(options.copies):
            work = os.path.join(base, f"copy{copy}")
            os.makedirs(work)
            if copy % 2 == 0 or not mappings:
                model = rng.choice(models)
                target = os.path.join(work, os.path.basename(model))
                shutil.copytree(model, target)
                versions = sorted(name for name in os.listdir(target) if name.endswith(".xcdatamodel"))
                current = os.path.join(target, ".xccurrentversion")
                if rng.random() < 0.25:
                    with open(current, "wb") as handle:
                        original = plistlib.dumps({"_XCCurrentVersionName": versions[-1] if versions else "x"}, fmt=plistlib.FMT_BINARY)
                        handle.write(mutate_plist(original, rng))
                elif versions:
                    contents = os.path.join(target, rng.choice(versions), "contents")
                    if os.path.exists(contents):
                        data = open(contents, "rb").read()
                        with open(contents, "wb") as handle:
                            handle.write(mutate_bytes(data, rng))
                command, label = ["import", target], f"copy {copy}: {os.path.relpath(model, os.path.dirname(ROOT))}"
            else:
                mapping = rng.choice(mappings)
                folder = os.path.dirname(mapping)
                model = next((m for m in models if os.path.dirname(m) == folder), None)
                if model:
                    subprocess.run([options.mapc, "import", model], cwd=work, capture_output=True)
                target = os.path.join(work, os.path.basename(mapping))
                shutil.copytree(mapping, target)
                xml = os.path.join(target, "xcmapping.xml")
                data = open(xml, "rb").read()
                with open(xml, "wb") as handle:
                    handle.write(mutate_mapping(data, rng))
                command, label = ["import", target], f"copy {copy}: {os.path.relpath(mapping, os.path.dirname(ROOT))}"
            started = time.monotonic()
            try:
                result = subprocess.run([options.mapc] + command, cwd=work, capture_output=True, timeout=60, preexec_fn=limits)
                code = result.returncode
            except subprocess.TimeoutExpired:
                code = "timeout"
            seconds = time.monotonic() - started
            largest = max(largest, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            if seconds > slowest[0]:
                slowest = (seconds, label)
            if seconds > TIME_LIMIT:
                slow += 1
            statuses[code] = statuses.get(code, 0) + 1
            if code not in (0, 1, 2):
                crashes.append(f"{label}: exit {code}")
            shutil.rmtree(work, ignore_errors=True)
        print(f"{options.copies} damaged copies of {len(models)} models and {len(mappings)} mapping models; exit statuses: "
              + ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items(), key=lambda item: str(item[0]))))
        print(f"  slowest {slowest[0]:.2f} s ({slowest[1]}); {slow} over {TIME_LIMIT:.0f} s; largest peak {largest / 1024:.0f} MiB (limit {MEMORY_LIMIT >> 20} MiB)")
        for line in crashes[:20]:
            print("  CRASH " + line)
        print(f"  {len(crashes)} crashed")
        sys.exit(1 if crashes or slow else 0)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
