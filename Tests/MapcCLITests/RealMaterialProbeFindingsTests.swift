import Foundation
import Testing

/// Findings of probes and a review on material mapc had not seen (real Xcode mapping models,
/// model histories of public apps, a reread of where each rule lives).
@Suite("Keys that are reserved words of the expression language")
struct ReservedWordKeyTests {
    /// An attribute named like a keyword of the expression language (`function`, `yes`, `cast`,
    /// `matches`) lost its values in an inferred step, exit 0: the step's expression
    /// `$source.function` did not parse, the failure was dropped, and the attribute was left nil
    /// while the step was said to carry it. A key is written `#function` where a word is reserved.
    @Test func inferenceCarriesAttributesNamedLikeKeywords() throws {
        let v1 = "  Film:\n    attributes:\n      function: string?\n      yes: int32?\n      matches: string?\n      title: string?\n"
        let v2 = "  Film:\n    attributes:\n      function: string?\n      yes: int64?\n      contains: {type: string, optional: true, renamingIdentifier: matches}\n      title: string?\n      note: string?\n"
        let folder = try CLI.project(versions: [("v1", v1), ("v2", v2)])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Film": [{"id": "f", "function": "drama", "yes": 3, "matches": "m", "title": "t"}]}}"#, to: "d.json")
        try migrateInEveryFormatAndMode(folder) { layout, mode, objects in
            let film = try #require(objects["Film"]?.first)
            #expect(film["function"] as? String == "drama" && film["yes"] as? Int == 3 && film["contains"] as? String == "m" && film["title"] as? String == "t", "\(layout) \(mode): \(film)")
        }
    }
}

/// A project holding an Xcode model of one version, `M.xcdatamodeld/M.xcdatamodel`, of these
/// entities (their XML elements).
private func projectWithXcodeModel(entities: String) throws -> URL {
    let folder = try CLI.emptyProject()
    let model = folder.appendingPathComponent("M.xcdatamodeld/M.xcdatamodel")
    try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
    try Data(("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n"
              + entities + "\n</model>\n").utf8).write(to: model.appendingPathComponent("contents"))
    return folder
}

/// An Xcode model's defaults and bounds were read by the importer's own parser, apart from the
/// one data files and schema files use: a default date past the years stores hold (1e300
/// seconds) became 1970 without a word, and an Integer 64 default written with a point
/// (`9007199254740993.0`) was rounded through a double. They are read by `ValueParser` and
/// held to `ValueLimits`, as every other value is.
@Suite("Xcode defaults read as every value is")
struct XcodeDefaultValueTests {
    @Test func defaultsAreReadByTheOneParserAndHeldToTheLimits() throws {
        let folder = try projectWithXcodeModel(entities: """
            <entity name="Item" syncable="YES">
                <attribute name="big" optional="YES" attributeType="Integer 64" defaultValueString="9007199254740993.0" usesScalarValueType="YES"/>
                <attribute name="when" optional="YES" attributeType="Date" defaultDateTimeInterval="1e300"/>
                <attribute name="ok" optional="YES" attributeType="Date" defaultDateTimeInterval="86400"/>
            </entity>
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["import", "M.xcdatamodeld"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("attribute Item.when") && run.stderr.contains("outside the years 0001 to 9999"), "\(run.stderr)")
        let schema = try folder.read("schemas/M.yaml")
        #expect(schema.contains("9007199254740993") && !schema.contains("9007199254740992"), "\(schema)")
        #expect(schema.contains("2001-01-02T00:00:00") && !schema.contains("1970-01-01"), "\(schema)")
    }
}

/// `import` of one version read the folder's `versions.yaml` (and its schemas) with Foundation's
/// `String(contentsOfFile:)`, not as every project file is read (`SourceFile.read`: its size
/// bounded, a byte-order mark dropped, a FIFO refused): a FIFO there was "Permission denied".
@Suite("Project files read by the one reader")
struct ProjectFileReadingTests {
    @Test func importReadsTheVersionOrderAsEveryProjectFileIsRead() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: ImportCommandTests.fixtures.appendingPathComponent("Kitchen.xcdatamodeld"), to: folder.appendingPathComponent("Kitchen.xcdatamodeld"))
        #expect(try CLI.run(["import", "Kitchen.xcdatamodeld/Kitchen.xcdatamodel"], in: folder).status == 0)
        let order = folder.appendingPathComponent("schemas/versions.yaml")
        try FileManager.default.removeItem(at: order)
        #expect(mkfifo(order.path, 0o644) == 0)
        let run = try CLI.run(["import", "Kitchen.xcdatamodeld/Kitchen 2.xcdatamodel"], in: folder)
        #expect(run.status == 1 && run.stderr.contains("is a pipe (FIFO), not a file mapc can read"), "\(run.stderr)")
    }
}

/// A refused inferred step said its rename hint twice: before the run, with the notes of the
/// plan, and again after the error. Once, before the run.
@Suite("Hints of a refused step")
struct RefusedStepHintTests {
    @Test func aRenameHintIsSaidOnce() throws {
        let folder = try CLI.project(versions: [("v1", "  Old:\n    attributes:\n      a: string?\n"), ("v2", "  New:\n    attributes:\n      a: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Old": [{"id": "o", "a": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 2 && run.stderr.components(separatedBy: "renamingIdentifier: Old").count == 2, "\(run.stderr)")
        // Said after the error when it was not said before (JSON says it in its notes).
        let json = try CLI.run(["run", "--format", "json", "s.db"], in: folder)
        #expect(json.status == 2 && json.stderr.contains("renamingIdentifier: Old"), "\(json.stderr)")
    }
}

extension RefusedStepHintTests {
    /// Steps taken as one (v1 -> v3) hinted a rename between an attribute v2 added and one v3
    /// removed, though v2 has both: following it, a v2 store's own values would have been
    /// replaced. No rename hint where a version between holds both properties.
    @Test func noRenameHintBetweenPropertiesThatCoexistInAVersionBetween() throws {
        /// `plan`'s words for a store at v1 of a project of these versions after v1.
        func plan(after versions: [(String, String)]) throws -> String {
            let folder = try CLI.project(versions: [("v1", "  Card:\n    attributes:\n      title: string?\n      syncedAt: date?\n")] + versions)
            defer { try? FileManager.default.removeItem(at: folder) }
            try folder.write(#"{"version": "v1", "objects": {"Card": [{"id": "c", "title": "a", "syncedAt": "2024-01-01T00:00:00Z"}]}}"#, to: "d.json")
            #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
            let run = try CLI.run(["plan", "s.db"], in: folder)
            return run.stdout + run.stderr
        }
        let v3 = ("v3", "  Card:\n    attributes:\n      title: string?\n      closedAt: date?\n")
        let between = try plan(after: [("v2", "  Card:\n    attributes:\n      title: string?\n      syncedAt: date?\n      closedAt: date?\n"), v3])
        #expect(!between.contains("renamingIdentifier"), "\(between)")
        // Without the version between, the same change is a probable rename, hinted.
        let direct = try plan(after: [v3])
        #expect(direct.contains("give 'closedAt' renamingIdentifier: syncedAt"), "\(direct)")
    }
}

/// Names that YAML reads as something else: a relationship named `null` (a name Core Data
/// accepts) was written `inverse: null` by `import`, which reads back as "no inverse": the
/// inverse was lost, the layout gained a hidden key and the version hash no longer matched the
/// app's stores. An entity named `Null` was no entity in a mapping file (`source: Null`).
@Suite("Names YAML reads as another type")
struct YAMLNameTests {
    @Test func aRelationshipNamedNullKeepsItsInverseThroughImport() throws {
        let folder = try projectWithXcodeModel(entities: """
            <entity name="A" syncable="YES"><relationship name="bs" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="B" inverseName="null" inverseEntity="B"/></entity>
            <entity name="B" syncable="YES"><relationship name="null" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="A" inverseName="bs" inverseEntity="A"/></entity>
        """)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["import", "M.xcdatamodeld"], in: folder).status == 0)
        let schema = try folder.read("schemas/M.yaml")
        #expect(schema.contains("inverse: 'null'"), "\(schema)")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0 && !check.stderr.contains("names no inverse"), "\(check.stderr)")
        // `!!str null` is the word too.
        try folder.write(schema.replacingOccurrences(of: "inverse: 'null'", with: "inverse: !!str null"), to: "schemas/M.yaml")
        let tagged = try CLI.run(["check"], in: folder)
        #expect(tagged.status == 0 && !tagged.stderr.contains("names no inverse"), "\(tagged.stderr)")
    }

    @Test func anEntityNamedNullIsAnEntityInAMappingFile() throws {
        let folder = try CLI.project(versions: [("v1", "  Null:\n    attributes:\n      a: string?\n"), ("v2", "  Null:\n    attributes:\n      a: string?\n      b: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: NullToNull\n    source: Null\n    destination: Null\n    attributes:\n      a: $source.a\n      b: $source.a\n", to: "mappings/mapping_v1_to_v2.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
        try folder.write(#"{"version": "v1", "objects": {"Null": [{"id": "n", "a": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        #expect(try CLI.run(["run", "--quiet", "s.db"], in: folder).status == 0)
        #expect(try CLI.run(["dump", "s.db"], in: folder).stdout.contains(#""b": "x""#))
    }
}

/// Names Core Data's layout makes from a table's and its columns' met: `ZA` with a key column
/// `ZB_ZC` and `ZA_ZB` with `ZC` both index as `ZA_ZB_ZC_INDEX` (SQLite refused the store: "index
/// already exists"), and a column `ZA_ZB` indexed alone and `ZA` with `ZB_INDEX` both as
/// `ZNOTE_ZA_ZB_INDEX` (the second dropped without a word). The later one is numbered.
@Suite("Core Data index names that meet")
struct CoreDataIndexNameTests {
    @Test func indexesWhoseNamesMeetAreAllMade() throws {
        let folder = try CLI.project(versions: [("v1", """
          A:
            relationships:
              b_zc: { destination: C, inverse: a, optional: true }
          A_ZB:
            relationships:
              c: { destination: C, inverse: ab, optional: true }
          C:
            relationships:
              a: { destination: A, inverse: b_zc, toMany: true, optional: true }
              ab: { destination: A_ZB, inverse: c, toMany: true, optional: true }
          Note:
            attributes:
              a: string?
              b_index: string?
              a_zb: string?
            indexes: [[a, b_index], [a_zb]]

        """)])
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = try CLI.run(["init", "--schema", "v1", "--layout", "core-data", "s.db"], in: folder)
        #expect(made.status == 0, "\(made.stderr)")
        let indexes = try CLI.run(["-c", "sqlite3 s.db \"SELECT name || ':' || (SELECT group_concat(name) FROM pragma_index_info(m.name)) FROM sqlite_master m WHERE type = 'index' ORDER BY name\""],
                                  in: folder, program: URL(fileURLWithPath: "/bin/sh")).stdout
        #expect(indexes.contains("ZA_ZB_ZC_INDEX:") && indexes.contains("ZA_ZB_ZC_INDEX_2:"), "\(indexes)")
        #expect(indexes.contains(":ZA_ZB\n") && indexes.contains(":ZA,ZB_INDEX\n"), "\(indexes)")
    }
}

/// A fixture named `a@v2` shared `expected/a@v2.json` with fixture `a`'s result at v2: `test
/// --record --to v2 a` wrote over it, and the next run failed the other case. Refused, by name.
@Suite("Fixture names")
struct FixtureNameTests {
    @Test func aFixtureNamedWithAnAtIsRefused() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        for name in ["a", "a@v2"] {
            try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v1.sqlite"), to: folder.appendingPathComponent("fixtures/\(name).sqlite"))
        }
        let run = try CLI.run(["test", "--record"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("is named a@v2: '@' in a fixture's name") && !folder.exists("expected"), "\(run.stdout)\(run.stderr)")
    }
}

/// `check other/mapping.yaml`, a second file for a step the project's mappings folder maps too
/// (neither with `pass:`), took the folder's file for its other pass: its expressions counted
/// as this file's reads, so "read by no expression: values would be dropped" was not said. A
/// file of the same pass is not a pass of the step.
@Suite("Files of one step checked apart")
struct SamePassCompanionTests {
    @Test func aFileOfTheSamePassIsNotTakenForAnotherPass() throws {
        let folder = try CLI.project(versions: [("v1", "  Item:\n    attributes:\n      a: string?\n      b: string?\n"), ("v2", "  Item:\n    attributes:\n      a: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("drafts"), withIntermediateDirectories: true)
        // The project's file keeps b in a (a concatenation); the draft reads a only.
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      a: $source.b\n", to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      a: $source.a\n", to: "drafts/mapping_v1_to_v2.yaml")
        let check = try CLI.run(["check", "drafts/mapping_v1_to_v2.yaml"], in: folder)
        #expect(check.stderr.contains("'b' of Item in v1 is read by no expression of this mapping"), "\(check.stderr)")
    }
}

/// A value starting with '!' is a YAML tag: `version: !v1` read as the version '' ("'' is not a
/// valid version name"), and an expression's NOT (`filter: !done`) as an empty one. Said as a tag,
/// with the quoted value to write.
@Suite("Values YAML reads as tags")
struct YAMLTagValueTests {
    @Test func aValueStartingWithAnExclamationMarkIsSaidToBeATag() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: M\nversion: !v1\nentities:\n  A:\n    attributes:\n      a: string?\n", to: "schemas/v1.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("v1.yaml:2:10: error: version starts with '!v1', which YAML reads as a tag") && check.stderr.contains("quote the value to write the text: '!v1'"), "\(check.stderr)")
        #expect(!check.stderr.contains("next to ,"), "\(check.stderr)")
    }
}

/// Ids are exact (a Core Data object is named by its own entity): `load` given a parent's name
/// for a sub-entity's object (`Animal/p2` for the dog `Dog/p2`) said only "dangling reference".
/// It names the object's id.
@Suite("A parent's name for a sub-entity's object")
struct ParentNamedIdTests {
    @Test func aDanglingReferenceByAParentsNameNamesTheObjectsId() throws {
        let folder = try CLI.project(versions: [("v1", """
          Animal:
            attributes:
              name: string?
            relationships:
              owner: { destination: Owner, inverse: pets, optional: true }
          Dog:
            parent: Animal
          Owner:
            relationships:
              pets: { destination: Animal, inverse: owner, toMany: true, optional: true }

        """)])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Dog": [{"id": "d", "name": "rex"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db", "--layout", "core-data"], in: folder).status == 0)
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout
        let key = try #require(dump.range(of: "\"Dog/p").map { dump[$0.upperBound...].prefix { $0.isNumber } })
        try folder.write(#"{"version": "v1", "objects": {"Owner": [{"id": "o", "pets": ["Animal/p\#(key)"]}]}}"#, to: "o.json")
        let load = try CLI.run(["load", "o.json", "s.db"], in: folder)
        #expect(load.status == 1 && load.stderr.contains("the object of that key is named 'Dog/p\(key)', by its own entity"), "\(load.stderr)")
    }
}
