import Foundation
import Testing

/// Defects a probe of more real apps' Xcode models (long histories, features of shipping apps)
/// found in what `import`, `plan` and `run` did with them. The models here are our own, written
/// in the shapes the apps' models have.
@Suite("Defects found by a probe of real apps' models", .serialized)
struct RealModelsProbeDefectTests {
    /// One version's `contents` in a folder of its own.
    private func model(_ entities: String, in folder: URL, name: String = "M") throws {
        let version = folder.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n"
                  + entities + "</model>\n").utf8).write(to: version.appendingPathComponent("contents"))
    }

    /// A fetch index whose first element is a to-many relationship (Xcode takes it, and a shipping
    /// app's model has one) failed the whole import: every version refused, nothing written, the
    /// error said at the entity. The element is left out with a warning at it; the index keeps its
    /// other elements (or is left out, when it has none). A relationship's `indexed` flag, which
    /// both formats honour for a to-one anyway, is no longer warned of (72 warnings in one history).
    @Test func aFetchIndexElementOnAToManyIsLeftOutWithAWarning() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try model("    <entity name=\"Article\" syncable=\"YES\">\n        <attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/>\n"
                  + "        <relationship name=\"lists\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"List\" inverseName=\"articles\" inverseEntity=\"List\"/>\n"
                  + "        <relationship name=\"owner\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"List\" indexed=\"YES\"/>\n"
                  + "        <fetchIndex name=\"compoundIndex3\">\n            <fetchIndexElement property=\"lists\" type=\"Binary\" order=\"ascending\"/>\n"
                  + "            <fetchIndexElement property=\"title\" type=\"Binary\" order=\"ascending\"/>\n        </fetchIndex>\n"
                  + "        <fetchIndex name=\"byLists\">\n            <fetchIndexElement property=\"lists\" type=\"Binary\" order=\"ascending\"/>\n        </fetchIndex>\n    </entity>\n"
                  + "    <entity name=\"List\" syncable=\"YES\">\n        <attribute name=\"name\" optional=\"YES\" attributeType=\"String\"/>\n"
                  + "        <relationship name=\"articles\" optional=\"YES\" toMany=\"YES\" deletionRule=\"Nullify\" destinationEntity=\"Article\" inverseName=\"lists\" inverseEntity=\"Article\"/>\n"
                  + "    </entity>\n", in: folder)
        let run = try CLI.run(["import", "M.xcdatamodel", "--output", "out"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("contents:8:") && run.stderr.contains("fetch index Article.compoundIndex3: the element on to-many relationship 'lists' is not imported")
                && run.stderr.contains("the index keeps its other elements"), "\(run.stderr)")
        #expect(run.stderr.contains("contents:12:") && run.stderr.contains("fetch index Article.byLists") && run.stderr.contains("the index has no other element and is not imported"), "\(run.stderr)")
        #expect(!run.stderr.contains("indexed"), "\(run.stderr)")
        let schema = try String(contentsOf: folder.appendingPathComponent("out/M.yaml"), encoding: .utf8)
        #expect(schema.contains("{ name: compoundIndex3, properties: [title] }") && !schema.contains("byLists"), "\(schema)")
        #expect(try CLI.run(["check", "--schemas", "out"], in: folder).status == 0)
    }
}

extension RealModelsProbeDefectTests {
    /// A store several versions behind was refused at a step that cannot be inferred alone (an
    /// attribute made required, of an entity added since the store's version), though such a
    /// store has no objects of that entity to lack the value, and Core Data's lightweight
    /// migration, inferring from the store's model, takes it. The step is inferred for the store,
    /// entities traced from its version (a note says which problem does not apply), each step
    /// keeping its own semantics (renames and defaults as step by step: a review found an
    /// inference straight across the versions changed both, and crashed on two such steps). A
    /// store at the step's own version is still refused; where the entity may have objects, the
    /// error names a mapping file from the inferred steps' start that would skip the step.
    @Test func aStepBlockedOnlyByEntitiesWithoutObjectsIsTaken() throws {
        let item = "  Item:\n    attributes:\n      name: string\n"
        let gadget = { (label: String) in "  Gadget:\n    attributes:\n      label: \(label)\n" }
        let tool = { (grip: String) in "  Tool:\n    attributes:\n      grip: \(grip)\n" }
        // Two such steps in one history (v2 -> v3 and v4 -> v5).
        let folder = try CLI.project(versions: [("v1", item), ("v2", item + gadget("string?")), ("v3", item + gadget("string")),
                                                ("v4", item + gadget("string") + tool("string?")), ("v5", item + gadget("string") + tool("string"))])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i", "name": "kept"}]}}"#, to: "one.json")
        try folder.write(#"{"version": "v2", "objects": {"Item": [{"id": "i", "name": "kept"}], "Gadget": [{"id": "g", "label": null}]}}"#, to: "two.json")
        for layout in ["mapc", "core-data"] {
            #expect(try CLI.run(["load", "one.json", "one-\(layout).db", "--layout", layout], in: folder).status == 0)
            // Planned step by step, the steps say which problem does not apply; run, they are one step (nothing differs).
            let plan = try CLI.run(["plan", "--every-version", "one-\(layout).db"], in: folder)
            #expect(plan.status == 0 && plan.stdout.contains("v2 -> v3 (inferred): Gadget.label: optional -> required without a default (nil values would have nowhere to go); that does not stop a store coming from v1: it has no Gadget objects")
                    && plan.stdout.contains("v4 -> v5 (inferred): Tool.grip"), "\(plan.stdout)\(plan.stderr)")
            let run = try CLI.run(["run", "one-\(layout).db"], in: folder)
            #expect(run.status == 0 && run.stdout.contains("from v1 to v5"), "\(run.stdout)\(run.stderr)")
            #expect(try sqliteOutput(folder, "one-\(layout).db", layout == "mapc" ? "SELECT name FROM Item" : "SELECT ZNAME FROM ZITEM") == "kept")
        }
        #expect(try CLI.run(["load", "two.json", "two.db"], in: folder).status == 0)
        let before = try Data(contentsOf: folder.appendingPathComponent("two.db"))
        let refused = try CLI.run(["run", "two.db"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("cannot migrate from v2 to v3") && !refused.stderr.contains("mapping_v1_to_v3"), "\(refused.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("two.db")) == before)
        // Gadgets in the first version: their nil labels would have nowhere to go.
        let early = try CLI.project(versions: [("v1", item + gadget("string?")), ("v2", item + gadget("string?") + "      color: string?\n"), ("v3", item + gadget("string"))])
        defer { try? FileManager.default.removeItem(at: early) }
        try early.write(#"{"version": "v1", "objects": {"Gadget": [{"id": "g", "label": null}]}}"#, to: "g.json")
        #expect(try CLI.run(["load", "g.json", "g.db"], in: early).status == 0)
        let blocked = try CLI.run(["run", "g.db"], in: early)
        #expect(blocked.status == 2 && blocked.stderr.contains("cannot migrate from v2 to v3")
                && blocked.stderr.contains("mapping_v1_to_v3.yaml from v1 (where the inferred steps before it start), which skips v2"), "\(blocked.stderr)")
        // Renames and defaults between the versions stay as the steps give them.
        let renamed = try CLI.project(versions: [("v1", "  Note:\n    attributes:\n      title: string?\n"),
                                                 ("v2", "  Note:\n    attributes:\n      heading: {type: string, optional: true, renamingIdentifier: title}\n      score: {type: int64, default: 1}\n" + gadget("string?")),
                                                 ("v3", "  Note:\n    attributes:\n      caption: {type: string, optional: true, renamingIdentifier: heading}\n      score: {type: int64, default: 2}\n" + gadget("string"))])
        defer { try? FileManager.default.removeItem(at: renamed) }
        try renamed.write(#"{"version": "v1", "objects": {"Note": [{"id": "n", "title": "first"}]}}"#, to: "n.json")
        #expect(try CLI.run(["load", "n.json", "n.db"], in: renamed).status == 0)
        let steps = try CLI.run(["run", "--quiet", "n.db"], in: renamed)
        #expect(steps.status == 0, "\(steps.stderr)")
        #expect(try sqliteOutput(renamed, "n.db", "SELECT caption || ' ' || score FROM Note") == "first 1")
    }
}

extension RealModelsProbeDefectTests {
    /// A uniqueness constraint broken in a Core Data store (a UNIQUE index) named one object
    /// against itself, with another object's values, when the rows were written sixteen to a
    /// statement: which rows had been written was asked with text bound otherwise than it was
    /// written. The real pair is named; and the note under the error no longer takes the
    /// constraint's properties for one ("gives 'name,tag' no value").
    @Test func aBrokenUniquenessConstraintNamesTheRealPair() throws {
        let v1 = "  Tag:\n    uniquenessConstraints: [[name, kind]]\n    attributes:\n      name: string\n      kind: string\n"
        let v2 = v1 + "      note: string?\n"
        let folder = try CLI.project(versions: [("u1", v1), ("u2", v2)])
        defer { try? FileManager.default.removeItem(at: folder) }
        // Twenty tags; the mapping makes tag 15's name equal to tag 1's ("t1"), and tag 9's text holds NUL.
        let tags = (1...20).map { n in n == 9 ? #"{"id": "t9", "name": "x\u0000y", "kind": "k\u0000"}"# : #"{"id": "t\#(n)", "name": "t\#(n)", "kind": "k"}"# }
        try folder.write(#"{"version": "u1", "objects": {"Tag": ["# + tags.joined(separator: ", ") + "]}}", to: "d.json")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: u1\ndestination: u2\nentityMappings:\n  - name: TagToTag\n    source: Tag\n    destination: Tag\n    attributes:\n"
                         + "      name: 'TERNARY($source.name == \"t15\", \"t1\", $source.name)'\n      kind: $source.kind\n", to: "mappings/mapping_u1_to_u2.yaml")
        for layout in ["core-data", "mapc"] {
            #expect(try CLI.run(["load", "d.json", "\(layout).db", "--layout", layout], in: folder).status == 0)
            let run = try CLI.run(["run", "--quiet", "\(layout).db"], in: folder)
            let pair = layout == "mapc" ? ["'t1'", "'t15'"] : ["Tag/p1", "Tag/p15"]
            #expect(run.status == 3 && pair.allSatisfy(run.stderr.contains) && run.stderr.contains("name \"t1\"") && !run.stderr.contains("x\u{0}y"), "\(layout): \(run.stderr)")
            #expect(!run.stderr.contains("no value"), "\(run.stderr)")
        }
    }
}

extension RealModelsProbeDefectTests {
    /// `mapc hash` printed mapc's hashes only: a developer building or checking a Core Data
    /// store by hand had no way to see the `NSStoreModelVersionHashes` it must record (the probe
    /// copied them out of an empty store). `--core-data` prints them, as the store records them.
    @Test func hashPrintsCoreDatasHashesOnRequest() throws {
        let folder = try CLI.project(versions: [("h1", "  Note:\n    attributes:\n      title: string\n  Memo:\n    parent: Note\n    attributes:\n      pages: int32?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "h1", "--layout", "core-data", "s.db"], in: folder).status == 0)
        let hash = try CLI.run(["hash", "--core-data", "--format", "json", "h1"], in: folder)
        #expect(hash.status == 0, "\(hash.stderr)")
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(hash.stdout.utf8)) as? [String: Any])
        let recorded = try sqliteOutput(folder, "s.db", "SELECT hex(Z_PLIST) FROM Z_METADATA")
        let plistBytes = Data(stride(from: 0, to: recorded.count, by: 2).compactMap { UInt8(recorded.dropFirst($0).prefix(2), radix: 16) })
        let plist = try #require(try PropertyListSerialization.propertyList(from: plistBytes, format: nil) as? [String: Any])
        let stored = try #require(plist["NSStoreModelVersionHashes"] as? [String: Data]).mapValues { $0.base64EncodedString() }
        #expect((printed["entities"] as? [String: String]) == stored && stored.count == 2, "\(hash.stdout) \(stored)")
        #expect((printed["digest"] as? String)?.count == 88)
        let text = try CLI.run(["hash", "--core-data", "h1"], in: folder)
        #expect(text.stdout.contains("entity Memo  \(stored["Memo"] ?? "?")"), "\(text.stdout)")
    }
}

extension RealModelsProbeDefectTests {
    /// `import` of a version whose `contents` is a FIFO waited for a writer forever (a hostile
    /// probe); it is refused as what it is, as every other file mapc reads.
    @Test func aFIFOAsAModelsContentsIsRefused() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = folder.appendingPathComponent("Z.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        #expect(mkfifo(version.appendingPathComponent("contents").path, 0o644) == 0)
        let run = try CLI.run(["import", "Z.xcdatamodel", "--output", "out"], in: folder)
        #expect(run.status == 1 && run.stderr.contains("is a pipe (FIFO)"), "\(run.stderr)")
    }
}

extension RealModelsProbeDefectTests {
    /// A step in two passes whose second reads the entity the first did gave two objects one id
    /// (`n1` for the note and its attachment), a dump `load` refused; as one file, the second
    /// mapping's objects take its name as a suffix. Passes are one step: the same ids.
    @Test func aSecondPassOfAnEntityGivesItsObjectsTheirOwnIds() throws {
        let folder = try CLI.project(versions: [("v2", "  Note:\n    attributes:\n      title: string\n      image: binary?\n"),
                                                ("v3", "  Note:\n    attributes:\n      title: string\n    relationships:\n      attachments: {destination: Attachment, toMany: true, inverse: note, optional: true}\n"
                                                       + "  Attachment:\n    attributes:\n      image: binary\n    relationships:\n      note: {destination: Note, inverse: attachments, optional: true}\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v2\ndestination: v3\npass: 1\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    attributes:\n      title: $source.title\n", to: "mappings/a.yaml")
        try folder.write("source: v2\ndestination: v3\npass: 2\nentityMappings:\n  - name: NoteToAttachment\n    source: Note\n    destination: Attachment\n    filter: image != nil\n    attributes:\n      image: $source.image\n", to: "mappings/b.yaml")
        try folder.write(#"{"version": "v2", "objects": {"Note": [{"id": "n1", "title": "a", "image": "AAEC"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db", "--output", "out.json"], in: folder)
        #expect(dump.status == 0 && !dump.stderr.contains("refuses"), "\(dump.stderr)")
        let text = try String(contentsOf: folder.appendingPathComponent("out.json"), encoding: .utf8)
        #expect(text.contains("\"n1.NoteToAttachment\""), "\(text)")
        #expect(try CLI.run(["load", "out.json", "again.db"], in: folder).status == 0)
    }

    /// A required integer whose default Xcode kept from a Boolean (`defaultValueString="NO"` on an
    /// Integer 16, in a shipping app) was warned of as not imported, and `check` then refused the
    /// step adding it with no word back to that line: the warning says what it leads to, and what
    /// to write. An optional attribute's warning says no more than before.
    @Test func aDefaultThatIsNoNumberSaysARequiredAttributeIsLeftWithout() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try model("    <entity name=\"Book\" syncable=\"YES\">\n        <attribute name=\"stateRaw\" attributeType=\"Integer 16\" defaultValueString=\"NO\" usesScalarValueType=\"YES\"/>\n"
                  + "        <attribute name=\"flag\" optional=\"YES\" attributeType=\"Integer 32\" defaultValueString=\"YES\" usesScalarValueType=\"YES\"/>\n    </entity>\n", in: folder)
        let run = try CLI.run(["import", "M.xcdatamodel", "--output", "out"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("Book.stateRaw: the default 'NO' is not an int16 and is not imported; the attribute is required and has no default then") && $0.contains("`default:`") }, "\(run.stderr)")
        #expect(lines.contains { $0.contains("Book.flag: the default 'YES' is not an int32 and is not imported") && !$0.contains("required") }, "\(run.stderr)")
    }

    /// A version that only adds an index (a shipping app's `ModelIndexedKey`, the index its
    /// reason to be) showed "no changes" in `diff`: indexes added and removed are listed.
    @Test func diffListsIndexesAddedAndRemoved() throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Word:\n    attributes:\n      key: string?\n      text: string?\n    indexes: [{ name: byText, properties: [text] }]\n"),
            ("v2", "  Word:\n    attributes:\n      key: string?\n      text: string?\n    indexes: [{ name: byKey, properties: [key] }, [key, text]]\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.status == 0 && !diff.stdout.contains("no changes"), "\(diff.stdout)")
        #expect(diff.stdout.contains("changed  entity Word: index byKey (key) added") && diff.stdout.contains("(key, text) added")
                && diff.stdout.contains("changed  entity Word: index byText (text) removed"), "\(diff.stdout)")
        #expect(!diff.stdout.contains("drops the values"), "\(diff.stdout)")
        // An index kept through a renamed entity and property is no change.
        let renamed = try CLI.project(versions: [
            ("v1", "  Word:\n    attributes:\n      key: string?\n    indexes: [{ name: byKey, properties: [key] }]\n"),
            ("v2", "  Term:\n    renamingIdentifier: Word\n    attributes:\n      code: { type: string, optional: true, renamingIdentifier: key }\n    indexes: [{ name: byCode, properties: [code] }]\n"),
        ])
        defer { try? FileManager.default.removeItem(at: renamed) }
        let same = try CLI.run(["diff", "v1", "v2"], in: renamed)
        #expect(same.status == 0 && !same.stdout.contains("index"), "\(same.stdout)")
    }

    /// A step that adds a required attribute without a default was refused for every store, an
    /// empty one too, though Core Data, which validates the objects a migration makes, migrates a
    /// store with no objects of that entity (two shipping apps' histories have such a step). A
    /// store at the step's version holding none is migrated, a note saying why; one holding some
    /// is refused as before, unchanged.
    @Test func aStoreHoldingNoObjectsOfTheBlockedEntityIsMigrated() throws {
        let item = "  Item:\n    attributes:\n      name: string\n"
        let folder = try CLI.project(versions: [("v1", item + "  Tag:\n    attributes:\n      label: string?\n"),
                                                ("v2", item + "  Tag:\n    attributes:\n      label: string?\n      color: string\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i", "name": "kept"}]}}"#, to: "none.json")
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i", "name": "kept"}], "Tag": [{"id": "t", "label": "red"}]}}"#, to: "some.json")
        for layout in ["mapc", "core-data"] {
            #expect(try CLI.run(["load", "none.json", "none-\(layout).db", "--layout", layout], in: folder).status == 0)
            let plan = try CLI.run(["plan", "none-\(layout).db"], in: folder)
            #expect(plan.status == 0 && plan.stdout.contains("Tag.color") && plan.stdout.contains("it has no Tag objects (the store held none of the objects they would come from; one saved before the run fails its validation)"),
                    "\(plan.stdout)\(plan.stderr)")
            let run = try CLI.run(["run", "none-\(layout).db"], in: folder)
            #expect(run.status == 0 && run.stdout.contains("from v1 to v2"), "\(run.stdout)\(run.stderr)")
            #expect(try sqliteOutput(folder, "none-\(layout).db", layout == "mapc" ? "SELECT name FROM Item" : "SELECT ZNAME FROM ZITEM") == "kept")
            #expect(try CLI.run(["load", "some.json", "some-\(layout).db", "--layout", layout], in: folder).status == 0)
            let before = try Data(contentsOf: folder.appendingPathComponent("some-\(layout).db"))
            let refused = try CLI.run(["run", "some-\(layout).db"], in: folder)
            #expect(refused.status == 2 && refused.stderr.contains("cannot migrate from v1 to v2") && refused.stderr.contains("Tag.color"), "\(refused.stderr)")
            #expect(try Data(contentsOf: folder.appendingPathComponent("some-\(layout).db")) == before)
        }
        // `check` speaks of every store of the history: the step is still a gap there.
        let check = try CLI.run(["check"], in: folder)
        #expect(check.stderr.contains("Tag.color") || check.stdout.contains("Tag.color"), "\(check.stdout)\(check.stderr)")
    }
}
