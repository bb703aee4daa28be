import Foundation
import Testing

/// The compiled path read columns whose values it never checked: a copy that changes the type
/// (an inferred widening, a mapping's `x: $source.f` into a double) and a filter's columns. A
/// value every other path refuses (an int16 column holding 70000, a bool holding 2, a float
/// column holding the double 0.1) was copied into the new type, where it is valid, or decided a
/// filter: the object kept or left out in silence. Each path refuses such a store alike now,
/// naming the object, and leaves it unchanged.
@Suite("What the compiled path reads is checked as reading checks it", .serialized)
struct CompiledReadabilityTests {
    /// One attribute widened by an inferred step, its stored value one its type cannot hold.
    @Test(arguments: [("int16", "int32", "70000", "cannot be read as int16"), ("int16", "float", "70000", "cannot be read as int16"),
                      ("bool", "int16", "2", "cannot be read as bool"), ("int32", "int64", "3000000000", "cannot be read as int32"),
                      ("float", "double", "0.1", "cannot be read as float"), ("int64", "double", "1.5", "cannot be read as int64"),
                      ("uuid", "string", "'NOT-A-UUID'", "cannot be read as uuid")])
    func aWideningInferredStepRefusesWhatReadingRefuses(from: String, to: String, stored: String, said: String) throws {
        let folder = try CLI.project(versions: [("v1", "  E:\n    attributes:\n      k: int64\n      a: \(from)?\n"), ("v2", "  E:\n    attributes:\n      k: int64\n      a: \(to)?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v1","objects":{"E":[{"id":"e1","k":1},{"id":"e2","k":2}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "UPDATE E SET a = \(stored) WHERE k = 2")
        for interpreted in [false, true] {
            let run = try CLI.run(["run"] + (interpreted ? ["--interpret"] : []) + ["s.db"], in: folder)
            #expect(run.status == 2 && run.stderr.contains("E 'e2', attribute 'a': stored value") && run.stderr.contains(said), "interpreted \(interpreted): \(run.stderr)")
        }
        #expect(try CLI.run(["status", "s.db"], in: folder).stdout.contains("v1"))
    }

    /// A filter compiled to SQL decided on values reading refuses: e1 kept (70000 > 0), e2 left
    /// out without a word.
    @Test(arguments: ["mapc", "core-data"])
    func aFilterRefusesWhatReadingRefuses(layout: String) throws {
        let folder = try CLI.project(versions: [("v1", "  E:\n    attributes:\n      k: int64\n      b: bool?\n      h: int16?\n"), ("v2", "  D:\n    attributes:\n      k: int64\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: EToD\n    source: E\n    destination: D\n    filter: b == YES OR h > 0\n    attributes:\n      k: $source.k\n", to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(#"{"version":"v1","objects":{"E":[{"id":"e1","k":1,"b":true,"h":1},{"id":"e2","k":2,"b":false,"h":1},{"id":"e3","k":3,"b":true}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let (table, b, h, k) = layout == "mapc" ? ("E", "b", "h", "k") : ("ZE", "ZB", "ZH", "ZK")
        try sqlite(folder, "s.db", "UPDATE \(table) SET \(b) = 5, \(h) = -70000 WHERE \(k) = 2")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("attribute 'b': stored value 5 cannot be read as bool"), "\(run.stderr)")
        #expect(try CLI.run(["status", "s.db"], in: folder).stdout.contains("v1"))
    }

    /// The interpreter reads what a mapping reads of every object, those its filter leaves out
    /// too: a value reading refuses there (a same-type copy or a converted one) was refused by
    /// it and passed over by the compiled path, which checked only the objects the filter kept.
    @Test(arguments: ["int16", "int32"])
    func aValueOnAnObjectTheFilterLeavesOutIsRefusedAlike(copiedAs: String) throws {
        let folder = try CLI.project(versions: [("v1", "  Rec:\n    attributes:\n      n: int16?\n      k: int16?\n"), ("v2", "  Rec:\n    attributes:\n      n: \(copiedAs)?\n      k: int16?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: RecToRec\n    source: Rec\n    destination: Rec\n    filter: k > 1\n    attributes:\n      n: $source.n\n      k: $source.k\n", to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(#"{"version":"v1","objects":{"Rec":[{"id":"r1","n":1,"k":1},{"id":"r2","n":2,"k":2}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "UPDATE Rec SET n = 40000 WHERE k = 1")
        // The interpreter first: a run that migrates would leave nothing for the second.
        for interpreted in [true, false] {
            let run = try CLI.run(["run"] + (interpreted ? ["--interpret"] : []) + ["s.db"], in: folder)
            #expect(run.status == 2 && run.stderr.contains("Rec 'r1', attribute 'n': stored value 40000 cannot be read as int16"), "interpreted \(interpreted): \(run.stderr)")
        }
    }

    /// A mapping file's copy into another type, in both formats.
    @Test(arguments: ["mapc", "core-data"])
    func aMappingsConvertingCopyRefusesWhatReadingRefuses(layout: String) throws {
        let folder = try CLI.project(versions: [("v1", "  E:\n    attributes:\n      f: float?\n      b: bool?\n"), ("v2", "  E:\n    attributes:\n      x: double?\n      y: int16?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: EToE\n    source: E\n    destination: E\n    drops: [f, b]\n    attributes:\n      x: $source.f\n      y: $source.b\n", to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(#"{"version":"v1","objects":{"E":[{"id":"e1","f":0.5,"b":true}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", layout == "mapc" ? "UPDATE E SET b = 2" : "UPDATE ZE SET ZB = 2")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("stored value 2 cannot be read as bool"), "\(run.stderr)")
        try sqlite(folder, "s.db", layout == "mapc" ? "UPDATE E SET b = 1, f = 0.1" : "UPDATE ZE SET ZB = 1, ZF = 0.1")
        let again = try CLI.run(["run", "s.db"], in: folder)
        #expect(again.status == 2 && again.stderr.contains("stored value 0.1 cannot be read as float"), "\(again.stderr)")
        #expect(try CLI.run(["status", "s.db"], in: folder).stdout.contains("v1"))
    }
}

/// `eval --store` printed a Core Data store's date as counted from 1970 (`…59.800Z`), where the
/// store counts from 2001 and `dump` gives the text that reads back as the stored instant
/// (`…59.80000000000000002Z`): text copied from `eval` into a predicate did not match the
/// value it was printed for.
@Suite("eval prints a store's dates as dump does")
struct EvalDateTextTests {
    @Test func aCoreDataStoresDateReadsBackAsPrinted() throws {
        let folder = try CLI.project(versions: [("v1", "  E:\n    attributes:\n      t: date?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v1","objects":{"E":[{"id":"e1","t":"2000-12-31T23:59:59.7Z"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "d.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "UPDATE ZE SET ZT = -0.3 + 0.1")
        // One line per object: `E 'E/p1': "…"`.
        let line = try CLI.run(["eval", "--store", "s.db", "--entity", "E", "t"], in: folder).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let printed = String(line.drop { $0 != ":" }.dropFirst(2))
        #expect(try CLI.run(["dump", "s.db"], in: folder).stdout.contains(#""t": \#(printed)"#), "\(printed)")
        let same = try CLI.run(["eval", "--store", "s.db", "--entity", "E", "t == CAST(\(printed), \"NSDate\")"], in: folder)
        #expect(same.stdout.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix(": true"), "\(printed): \(same.stdout)\(same.stderr)")
    }
}

/// A related object's value reading refuses was reported while migrating another object: the
/// objects a batch leads to are read together, and the first object of the batch was named
/// (`O 'o1': I 'i3' …`, where i3 is o3's). The object that leads to it is named.
@Suite("A related object's unreadable value names its owner")
struct RelatedUnreadableValueTests {
    @Test(arguments: [("x: $source.items.@sum.h", "O 'o3': I 'i3', attribute 'h'"), ("x: $source.owner.h", "I 'i3': O 'o3', attribute 'h'")])
    func theObjectLeadingToItIsNamed(expression: String, said: String) throws {
        let owner = expression.contains("items")
        let folder = try CLI.project(versions: [
            ("v1", "  O:\n    attributes:\n      n: int64\n      h: int16?\n    relationships:\n      items: { destination: I, toMany: true, inverse: owner, optional: true }\n"
                + "  I:\n    attributes:\n      k: int64\n      h: int16?\n    relationships:\n      owner: { destination: O, inverse: items, optional: true }\n"),
            ("v2", "  D:\n    attributes:\n      n: int64\n      x: int64?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: ToD\n    source: \(owner ? "O" : "I")\n    destination: D\n    attributes:\n      n: $source.\(owner ? "n" : "k")\n      \(expression)\n"
                         + "  - name: Gone\n    source: \(owner ? "I" : "O")\n    type: remove\n", to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(#"{"version":"v1","objects":{"O":[{"id":"o1","n":1},{"id":"o2","n":2},{"id":"o3","n":3}],"I":[{"id":"i1","k":1,"owner":"o1"},{"id":"i2","k":2,"owner":"o2"},{"id":"i3","k":3,"owner":"o3"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", owner ? "UPDATE I SET h = 70000 WHERE k = 3" : "UPDATE O SET h = 70000 WHERE n = 3")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status != 0 && run.stderr.contains(said), "\(run.stderr)")
    }
}
