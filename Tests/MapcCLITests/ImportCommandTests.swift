import Foundation
import MapcKit
import Testing

/// `mapc import` on the authored Xcode fixtures, and on damaged copies of them.
@Suite("mapc import", .serialized)
struct ImportCommandTests {
    static let fixtures = CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/xcode")

    private func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aModelImportsIntoSchemaFilesThatCheckAndIsNotImportedOverThem() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path
        let run = try CLI.run(["import", model], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("imported Kitchen: 2 versions (Kitchen, Kitchen 2)"))
        #expect(run.stderr.contains("warning: attribute Item.objectRef (Object ID) is not imported"))
        #expect(try folder.read("schemas/versions.yaml").contains("versions: [Kitchen, Kitchen 2]"))
        #expect(folder.exists("schemas/Kitchen 2.yaml"))
        #expect(try CLI.run(["check"], in: folder).status == 0)
        // Again, without --replace: refused, and nothing is touched.
        try folder.write("# edited\n", to: "schemas/versions.yaml")
        let again = try CLI.run(["import", model], in: folder)
        #expect(again.status == 2 && again.stderr.contains("already exist; nothing was written"), "\(again.stderr)")
        #expect(try folder.read("schemas/versions.yaml") == "# edited\n")
        #expect(try CLI.run(["import", model, "--replace"], in: folder).status == 0)
        #expect(try folder.read("schemas/versions.yaml").contains("Kitchen 2"))
    }

    /// A relationship without an inverse may say so on purpose (`inverse: null`): no warning, so
    /// `check --strict` passes, the hashes unchanged. Import writes it for a model's relationships
    /// without an inverse (Xcode's editor has already said so), or the documented CI step
    /// (`import --replace`, then `check --strict`) failed for ever on a valid model.
    @Test func aRelationshipWithoutAnInverseOnPurposeIsNoWarning() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("Shelf.xcdatamodeld/Shelf.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23C71" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Folder" representedClassName="Folder" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="pinned" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item"/>
            </entity>
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """.utf8).write(to: model.appendingPathComponent("contents"))
        let imported = try CLI.run(["import", "Shelf.xcdatamodeld"], in: folder)
        #expect(imported.status == 0 && !imported.stderr.contains("has no inverse"), "\(imported.stderr)")
        let written = try folder.read("schemas/Shelf.yaml")
        #expect(written.contains("inverse: null"), "\(written)")
        let strict = try CLI.run(["check", "--strict"], in: folder)
        #expect(strict.status == 0 && strict.stderr.contains("0 warnings") || strict.stdout.contains("0 warnings"), "\(strict.stdout)\(strict.stderr)")
        // In a schema file: silent with `inverse: null`, a warning without; the same hashes.
        let yaml = "model: S\nversion: s1\nentities:\n  Folder:\n    relationships:\n      pinned: { destination: Item, toMany: true, optional: true%@ }\n  Item:\n    attributes:\n      title: string\n"
        try folder.write(String(format: yaml, ", inverse: null"), to: "quiet.yaml")
        try folder.write(String(format: yaml, ""), to: "loud.yaml")
        let quiet = try CLI.run(["check", "--strict", "quiet.yaml"], in: folder)
        #expect(quiet.status == 0 && !quiet.stderr.contains("has no inverse"), "\(quiet.stderr)")
        let loud = try CLI.run(["check", "--strict", "loud.yaml"], in: folder)
        #expect(loud.status == 1 && loud.stderr.contains("has no inverse") && loud.stderr.contains("or say 'inverse: null'"), "\(loud.stderr)")
        let hashes = try ["quiet.yaml", "loud.yaml"].map { try CLI.run(["hash", $0], in: folder).stdout }
        #expect(hashes[0] == hashes[1] && !hashes[0].isEmpty, "\(hashes)")
    }

    /// A version added in Xcode and imported on its own joins the project's version order, by
    /// name, instead of being refused for versions.yaml or replacing the order with itself alone.
    @Test func aSingleVersionImportJoinsTheVersionOrder() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld")
        let first = try CLI.run(["import", model.appendingPathComponent("Kitchen.xcdatamodel").path], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try folder.read("schemas/versions.yaml").contains("versions: [Kitchen]"))
        let second = try CLI.run(["import", model.appendingPathComponent("Kitchen 2.xcdatamodel").path], in: folder)
        #expect(second.status == 0, "\(second.stderr)")
        let order = try folder.read("schemas/versions.yaml")
        #expect(order.contains("- Kitchen\n") && order.contains("- Kitchen 2\n") && order.range(of: "- Kitchen\n")!.lowerBound < order.range(of: "- Kitchen 2\n")!.lowerBound, "\(order)")
        #expect(second.stdout.contains("Kitchen 2 joins the version order"), "\(second.stdout)")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // Importing it again still needs --replace for its own schema file, and keeps the order.
        let again = try CLI.run(["import", model.appendingPathComponent("Kitchen 2.xcdatamodel").path], in: folder)
        #expect(again.status == 2 && again.stderr.contains("Kitchen 2.yaml already exists"), "\(again.stderr)")
        #expect(try CLI.run(["import", model.appendingPathComponent("Kitchen 2.xcdatamodel").path, "--replace"], in: folder).status == 0)
        #expect(try folder.read("schemas/versions.yaml") == order)
        // A version of another model does not join this one's order.
        let pantry = folder.appendingPathComponent("Pantry.xcdatamodeld/Pantry.xcdatamodel")
        try FileManager.default.createDirectory(at: pantry.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: model.appendingPathComponent("Kitchen.xcdatamodel"), to: pantry)
        let foreign = try CLI.run(["import", pantry.path], in: folder)
        #expect(foreign.status == 2 && foreign.stderr.contains("holds the schemas of model Kitchen, not Pantry"), "\(foreign.stderr)")
        #expect(try folder.read("schemas/versions.yaml") == order)
        #expect(!folder.exists("schemas/Pantry.yaml"))
    }

    /// A real mapping model that maps no Continent (Moody 4 -> 5: Core Data drops its objects)
    /// is imported with that drop written as a remove mapping, so that it checks, `--strict`
    /// too (the CI workflow of docs/testing.md failed on it, and a hand-written remove mapping
    /// was lost at the next `import --replace`). Reads the team's corpus in place; skipped where
    /// it is absent.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/moody").path)))
    func aMappingWithWarningsOnlyIsSaidToCheck() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let moody = CLI.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/moody")
        #expect(try CLI.run(["import", moody.appendingPathComponent("Moody.xcdatamodeld").path], in: folder).status == 0)
        let run = try CLI.run(["import", moody.appendingPathComponent("Moody 4-Moody 5.xcmappingmodel").path], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("warning: no entity mapping reads Continent objects of Moody 4, so Core Data drops them: written as the remove mapping 'RemoveContinent'"), "\(run.stderr)")
        #expect(!run.stderr.contains("does not check yet"), "\(run.stderr)")
        let mapping = try folder.read("mappings/mapping_Moody 4_to_Moody 5.yaml")
        #expect(mapping.contains("  - name: RemoveContinent\n    # No entity mapping of Moody 4-Moody 5.xcmappingmodel reads Continent objects") && mapping.contains("    source: Continent\n    type: remove"), "\(mapping)")
        let strict = try CLI.run(["check", "--strict", "mappings/mapping_Moody 4_to_Moody 5.yaml"], in: folder)
        #expect(strict.status == 0, "\(strict.stderr)")
    }

    /// A version that is malformed is an error at its line and column; the versions that import
    /// are written without it (one bad version never blocks the others), and the exit status says
    /// one failed.
    @Test func aTruncatedVersionIsAnErrorWithItsLineAndColumnAndTheOthersAreWritten() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Broken.xcdatamodeld")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld"), to: copy)
        let contents = copy.appendingPathComponent("Kitchen 2.xcdatamodel/contents")
        let text = try String(contentsOf: contents, encoding: .utf8)
        try Data(text.prefix(text.count / 2).utf8).write(to: contents)
        let run = try CLI.run(["import", copy.path, "--output", "out"], in: folder)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("Kitchen 2.xcdatamodel/contents:") && run.stderr.contains("malformed XML"), "\(run.stderr)")
        #expect(folder.exists("out/Kitchen.yaml") && !folder.exists("out/Kitchen 2.yaml"), "the good version is written, the bad one not")
        #expect(run.stderr.contains("1 version of the model could not be imported"), "\(run.stderr)")
        #expect(run.stdout.contains("not imported: Kitchen 2"), "\(run.stdout)")
        // Not a model at all.
        try folder.write("{ \"not\": \"xml\" }", to: "Odd.xcdatamodel")
        let odd = try CLI.run(["import", "Odd.xcdatamodel"], in: folder)
        #expect(odd.status == 1 && !odd.stderr.contains("Fatal"), "\(odd.stderr)")
    }

    /// Core Data's binary forms are named, with what to do: Xcode 3's `elements` model (in a
    /// bundle, where the other versions still import), a compiled `.mom` and a `.momd` bundle.
    @Test func binaryModelFormsAreNamedWithWhatToDo() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Old.xcdatamodeld")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld"), to: copy)
        let old = copy.appendingPathComponent("Kitchen.xcdatamodel")
        try FileManager.default.removeItem(at: old.appendingPathComponent("contents"))
        // A binary property list's header and some of an archive (only the header tells the format).
        let archive = Data("bplist00".utf8) + Data("\u{D4}\u{01}\u{02}\u{03}\u{04}\u{05}\u{06}$archiverXNSKeyedArchiver".utf8)
        try archive.write(to: old.appendingPathComponent("elements"))
        try archive.write(to: old.appendingPathComponent("layout"))
        let run = try CLI.run(["import", copy.path, "--output", "out"], in: folder)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("Kitchen.xcdatamodel is in Xcode 3's binary model format") && run.stderr.contains("open the model in a current Xcode and save it"), "\(run.stderr)")
        // Not placed in a contents file the folder does not have.
        #expect(!run.stderr.contains("Kitchen.xcdatamodel/contents:1:1"), "\(run.stderr)")
        #expect(folder.exists("out/Kitchen 2.yaml") && !folder.exists("out/Kitchen.yaml"), "the other version is written")
        // The elements file named itself.
        let elements = try CLI.run(["import", old.appendingPathComponent("elements").path], in: folder)
        #expect(elements.status == 1 && elements.stderr.contains("Xcode 3's binary model format"), "\(elements.stderr)")
        // What Xcode compiles a model into.
        try archive.write(to: folder.appendingPathComponent("Kitchen.mom"))
        let mom = try CLI.run(["import", "Kitchen.mom"], in: folder)
        #expect(mom.status == 1 && mom.stderr.contains("is a compiled Core Data model") && mom.stderr.contains("import the .xcdatamodeld"), "\(mom.stderr)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Kitchen.momd"), withIntermediateDirectories: true)
        let momd = try CLI.run(["import", "Kitchen.momd"], in: folder)
        #expect(momd.status == 1 && momd.stderr.contains("compiled Core Data model bundle"), "\(momd.stderr)")
    }

    @Test func aMappingModelImportsAgainstTheImportedSchemas() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["import", Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path], in: folder).status == 0)
        let run = try CLI.run(["import", Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel").path], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Kitchen -> Kitchen 2, 4 entity mappings"))
        #expect(run.stderr.contains("register it as 'ItemMigrationPolicy'"))
        #expect(run.stderr.contains("the imported mapping does not check yet"), "the policy is not registered in the shipped mapc")
        #expect(try folder.read("mappings/mapping_Kitchen_to_Kitchen 2.yaml").contains(#"shout: FUNCTION($entityPolicy, "shout:", $source.name)"#))

        // With the policy in the project's policies folder, the import checks the mapping as `check` does.
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("policies"), withIntermediateDirectories: true)
        try folder.write("""
            import MapcKit

            final class ItemMigrationPolicy: EntityMigrationPolicy {
                override var functions: [String: PolicyFunction] { ["shout:": { _ in .null }] }
            }

            """, to: "policies/ItemMigrationPolicy.swift")
        let again = try CLI.run(["import", "--replace", Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel").path], in: folder)
        #expect(again.status == 0 && !again.stderr.contains("does not check yet") && !again.stderr.contains("register it as"), "\(again.stderr)")
        // Policies that do not compile do not stop an import: it says so and checks without them.
        try folder.write("import MapcKit\n\nfinal class ItemMigrationPolicy: EntityMigrationPolicy {\n    let wrong: Int = \"text\"\n}\n", to: "policies/ItemMigrationPolicy.swift")
        let broken = try CLI.run(["import", "--replace", Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel").path], in: folder)
        #expect(broken.status == 0 && broken.stderr.contains("the project's policies were not loaded") && broken.stderr.contains("does not check yet"), "\(broken.stderr)")
    }

    /// An archived expression that is not one: a foreign property list, or an archive naming a
    /// class no NSExpression has. The property is left out with a warning naming it; nothing crashes.
    @Test(arguments: ["foreign plist", "unexpected class", "no class", "not base64 of anything"])
    func aDamagedValueExpressionIsReportedAndLeftOut(damage: String) throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["import", Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path], in: folder).status == 0)
        let original = try String(contentsOf: Self.fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        // The shout expression is the first binary value in the file.
        let start = try #require(original.range(of: "<attribute name=\"valueexpressiondata\" type=\"binary\">"))
        let end = try #require(original.range(of: "</attribute>", range: start.upperBound..<original.endIndex))
        let archive = try #require(Data(base64Encoded: String(original[start.upperBound..<end.lowerBound])))
        let replacement: String
        switch damage {
        case "foreign plist":
            replacement = try PropertyListSerialization.data(fromPropertyList: ["Hello": "world"], format: .xml, options: 0).base64EncodedString()
        case "unexpected class":
            var bytes = [UInt8](archive)
            let needle = Array("NSFunctionExpression".utf8), evil = Array("XXFunctionExpression".utf8)
            if let at = (0...(bytes.count - needle.count)).first(where: { Array(bytes[$0..<$0 + needle.count]) == needle }) { bytes.replaceSubrange(at..<at + needle.count, with: evil) }
            replacement = Data(bytes).base64EncodedString()
        case "no class":
            // The top expression's `$class` a number, not a reference to a class description.
            var plist = try #require(try PropertyListSerialization.propertyList(from: archive, format: nil) as? [String: Any])
            var objects = try #require(plist["$objects"] as? [Any])
            let index = try #require(objects.firstIndex { ($0 as? [String: Any])?["NSExpressionType"] != nil })
            var object = try #require(objects[index] as? [String: Any])
            object["$class"] = 7
            objects[index] = object
            plist["$objects"] = objects
            replacement = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0).base64EncodedString()
        default:
            replacement = "AAAA"
        }
        let damaged = original.replacingCharacters(in: start.upperBound..<end.lowerBound, with: replacement)
        let model = folder.appendingPathComponent("Damaged.xcmappingmodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data(damaged.utf8).write(to: model.appendingPathComponent("xcmapping.xml"))
        let run = try CLI.run(["import", model.path], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("the value expression of attribute shout of ItemToItem"), "\(run.stderr)")
        #expect(run.stderr.contains("left out of the mapping"))
        if damage == "unexpected class" { #expect(run.stderr.contains("holds a XXFunctionExpression where an expression was expected")) }
        // It was "the archive holds a ? where an expression was expected".
        if damage == "no class" { #expect(run.stderr.contains("the archive is damaged: an object where an expression was expected names no class"), "\(run.stderr)") }
        let mapping = try folder.read("mappings/mapping_Kitchen_to_Kitchen 2.yaml")
        #expect(!mapping.contains("FUNCTION($entityPolicy") && mapping.contains("name: $source.name"))
    }

    /// A Core Data store records no model name; status names the model of the version it matches.
    @Test func statusNamesTheModelOfACoreDataStore() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["import", Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path], in: folder).status == 0)
        #expect(try CLI.run(["init", "--schema", "Kitchen", "--layout", "core-data", "store.sqlite"], in: folder).status == 0)
        let status = try CLI.run(["status", "store.sqlite"], in: folder)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("model       Kitchen (from the matching schema; Core Data stores do not record it)"), "\(status.stdout)")
        let json = try CLI.run(["status", "--format", "json", "store.sqlite"], in: folder)
        let parsed = try JSONValue.parse(Data(json.stdout.utf8), path: "status")
        #expect(parsed["model"] == .null && parsed["identifiedModel"] == .string("Kitchen"), "\(json.stdout)")
        // The store's metadata keys, as docs/cli.md promises (mapc's own bookkeeping keys left out).
        #expect(status.stdout.contains("metadata\n") && status.stdout.contains("  NSStoreType ") && !status.stdout.contains("mapc."), "\(status.stdout)")
        #expect(parsed["metadata"]?["NSStoreType"] == .string("SQLite"), "\(json.stdout)")
        // A store given to import, and a model that is not there, are told apart from bad XML.
        let store = try CLI.run(["import", "store.sqlite"], in: folder)
        #expect(store.status == 1 && store.stderr.contains("store.sqlite is a SQLite database (a store?), not an Xcode model file"), "\(store.stderr)")
        let missing = try CLI.run(["import", "nothere.xcdatamodeld"], in: folder)
        #expect(missing.status == 1 && missing.stderr.contains("nothere.xcdatamodeld does not exist"), "\(missing.stderr)")
    }

    /// A Core Data store whose metadata names an entity no version has is not guessed at.
    @Test func aCoreDataStoreWithUnknownEntitiesInItsMetadataIsRefused() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["import", Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path], in: folder).status == 0)
        #expect(try CLI.run(["init", "--schema", "Kitchen", "--layout", "core-data", "store.sqlite"], in: folder).status == 0)
        // Add a hash for an entity called Ghost to the store's metadata.
        let path = folder.appendingPathComponent("store.sqlite").path
        let script = """
        import plistlib, sqlite3
        db = sqlite3.connect(\(String(reflecting: path)))
        plist = plistlib.loads(db.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()[0])
        plist["NSStoreModelVersionHashes"]["Ghost"] = bytes(32)
        db.execute("UPDATE Z_METADATA SET Z_PLIST = ?", (plistlib.dumps(plist, fmt=plistlib.FMT_BINARY),))
        db.commit()
        """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script]
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let status = try CLI.run(["status", "store.sqlite"], in: folder)
        #expect(status.status == 2 && status.stderr.contains("the Core Data metadata names entity 'Ghost', which Z_PRIMARYKEY does not list")
                && status.stderr.contains("a single configuration of a model with several"), "\(status.stdout)\(status.stderr)")
        let run = try CLI.run(["run", "store.sqlite"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("Ghost"), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// An import writes every file or none: a name it reserves is refused before anything is
    /// written, and a write that fails anywhere (a full disk) leaves no file behind.
    @Test func anImportWritesEveryFileOrNone() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Kitchen.xcdatamodeld")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld"), to: copy)
        let versions = try FileManager.default.contentsOfDirectory(atPath: copy.path).filter { $0.hasSuffix(".xcdatamodel") }.sorted()
        try FileManager.default.moveItem(at: copy.appendingPathComponent(versions[0]), to: copy.appendingPathComponent("versions.xcdatamodel"))
        try? FileManager.default.removeItem(at: copy.appendingPathComponent(".xccurrentversion"))
        let reserved = try CLI.run(["import", "Kitchen.xcdatamodeld"], in: folder)
        #expect(reserved.status == 1 && reserved.stderr.contains("version 'versions' would be written to versions.yaml"), "\(reserved.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("schemas").path))
        // Every file operation of a good import, failed in turn.
        let model = Self.fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path
        func faulted(_ setting: String) throws -> CLIResult {
            try CLI.run(["import", model], in: folder, environment: ["MAPC_FAULT": setting, "MAPC_FAULT_LOG": folder.appendingPathComponent("count.log").path])
        }
        #expect(try faulted("count").status == 0)
        let points = Int(try folder.read("count.log").split(separator: "\n").last ?? "") ?? 0
        #expect(points >= 6, "\(points) operations")
        let whole = (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("schemas").path)) ?? []
        var failures = 0
        for point in 1...points {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("schemas"))
            let run = try faulted("fail@\(point)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("schemas").path)) ?? []
            // All or none: a failed import leaves nothing; a folder's flush that fails after a
            // rename is passed over (the rename happened, as a real fsync failure is), and the
            // import then writes every file.
            if run.status != 0 { failures += 1 }
            #expect(run.status != 0 ? left.isEmpty : left.sorted() == whole.sorted(), "fail@\(point) left \(left)")
        }
        #expect(failures >= 4, "\(failures) of \(points) operations failed the import")
        // Over files already there (--replace), each is kept as it was.
        let schemas = folder.appendingPathComponent("schemas")
        try? FileManager.default.removeItem(at: schemas)
        #expect(try CLI.run(["import", model], in: folder).status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: schemas.path).sorted()
        for name in names { try "# edited\n".write(to: schemas.appendingPathComponent(name), atomically: false, encoding: .utf8) }
        let replacing = { (setting: String) in
            try CLI.run(["import", "--replace", model], in: folder, environment: ["MAPC_FAULT": setting, "MAPC_FAULT_LOG": folder.appendingPathComponent("count.log").path])
        }
        _ = try replacing("count")
        let replacePoints = Int(try folder.read("count.log").split(separator: "\n").last ?? "") ?? 0
        for name in names { try "# edited\n".write(to: schemas.appendingPathComponent(name), atomically: false, encoding: .utf8) }
        for point in 1...replacePoints {
            let run = try replacing("fail@\(point)")
            let present = try FileManager.default.contentsOfDirectory(atPath: schemas.path).sorted()
            #expect(present == names, "fail@\(point): \(present)")
            // All or none again: kept as they were, or (a folder's flush passed over) all replaced.
            let edited = try names.filter { try String(contentsOf: schemas.appendingPathComponent($0), encoding: .utf8) == "# edited\n" }
            #expect(run.status != 0 ? edited == names : edited.isEmpty, "fail@\(point): \(edited)")
            for name in names { try "# edited\n".write(to: schemas.appendingPathComponent(name), atomically: false, encoding: .utf8) }
        }
    }
}
