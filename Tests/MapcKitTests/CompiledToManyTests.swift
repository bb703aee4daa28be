import Foundation
import Testing
@testable import MapcKit
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration

/// To-many relationship mappings on the compiled path: a many-to-many's join rows written with one
/// `INSERT … SELECT` and a one-to-many's keys with one `UPDATE … FROM`, where the interpreter sets
/// them object by object. The links must be the interpreter's exactly: filtered objects, objects
/// of a sub-entity another mapping makes, a to-many without an inverse, an ordered one (left to
/// the interpreter), in both store formats.
@Suite("Compiled to-many relationships")
struct CompiledToManyTests {
    private static let schemaText = """
        model: Shelf
        version: VERSION
        entities:
          Folder:
            attributes: { name: string }
            relationships:
              items: { destination: Item, toMany: true, inverse: folder }
              pinned: { destination: Item, toMany: true }
              shelf: { destination: Tag, toMany: true, ordered: true, inverse: folders }
          Item:
            attributes: { name: string EXTRA }
            relationships:
              folder: { destination: Folder, inverse: items, optional: true }
              tags: { destination: Tag, toMany: true, inverse: items }
          Tag:
            attributes: { name: string }
            relationships:
              items: { destination: Item, toMany: true, inverse: tags }
              folders: { destination: Folder, toMany: true, inverse: shelf }
          SpecialTag:
            parent: Tag
            attributes: { level: int64 }

        """

    private static func schema(_ version: String) throws -> Schema {
        try loadSchema(schemaText.replacingOccurrences(of: "VERSION", with: version)
            .replacingOccurrences(of: " EXTRA", with: version == "t2" ? ", note: string?" : ""))
    }

    private static let lookup = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\""

    private static let mappingText = """
        source: t1
        destination: t2
        entityMappings:
          - name: FolderToFolder
            source: Folder
            destination: Folder
            attributes: { name: $source.name }
            relationships:
              items: \(lookup), "ItemToItem", $source.items)
              pinned: \(lookup), "ItemToItem", $source.pinned)
          - name: ItemToItem
            source: Item
            destination: Item
            filter: name != "skipped"
            attributes: { name: $source.name }
            relationships:
              folder: \(lookup), "FolderToFolder", $source.folder)
              tags: \(lookup), "TagToTag", $source.tags)
          - name: TagToTag
            source: Tag
            destination: Tag
            filter: name != "hidden"
            attributes: { name: $source.name }
            relationships:
              items: \(lookup), "ItemToItem", $source.items)
          - name: SpecialTagToSpecialTag
            source: SpecialTag
            destination: SpecialTag
            attributes: { name: $source.name, level: $source.level }
            relationships:
              items: \(lookup), "ItemToItem", $source.items)
          - name: ShelvesFromTags
            source: Tag
            destination: Tag
            filter: name == "red"
            attributes: { name: "$source.name + '-shelf'" }
            relationships:
              folders: \(lookup), "FolderToFolder", $source.folders)

        """

    /// Three folders, eight items (one filtered out), three tags (one filtered out) and a special
    /// tag, linked every way the schema allows; an item in no folder, a tag on no item.
    private static func data() -> [ObjectData] {
        func object(_ id: String, _ entity: String, _ relationships: [String: [String]], level: Int64? = nil) -> ObjectData {
            var attributes: [String: Value] = ["name": .string(id)]
            if let level { attributes["level"] = .integer(level) }
            return ObjectData(id: id, entity: entity, attributes: attributes, relationships: relationships)
        }
        let items = ["a", "b", "c", "d", "e", "f", "skipped", "g"]
        let folderOf = ["a": "f1", "b": "f1", "c": "f2", "skipped": "f2", "d": "f2", "e": "f3", "g": "f1"]
        let tagsOf = ["a": ["red", "blue"], "b": ["blue", "hidden", "gold"], "skipped": ["red"], "c": ["hidden"], "d": ["gold", "red"], "g": ["red"]]
        var objects = ["f1", "f2", "f3"].map { folder in
            object(folder, "Folder", ["items": items.filter { folderOf[$0] == folder },
                                     "pinned": folder == "f1" ? ["c", "skipped", "e"] : folder == "f3" ? ["a"] : [],
                                     "shelf": folder == "f2" ? ["red", "gold"] : folder == "f1" ? ["red"] : []])
        }
        objects += items.map { object($0, "Item", ["tags": tagsOf[$0] ?? []]) }
        objects += ["red", "blue", "hidden", "unused"].map { object($0, "Tag", [:]) }
        objects.append(object("gold", "SpecialTag", [:], level: 2))
        return objects
    }

    /// Every object of the store as its name, attributes and links by name, sorted: stores of
    /// either format and either path compare as text.
    private static func contents(_ store: Store) throws -> String {
        var names: [String: String] = [:]
        var objects: [ObjectData] = []
        for entity in store.schema.entities {
            for object in try store.objects(ofExactEntity: entity.name) {
                if case .string(let name)? = object.attributes["name"] { names[object.id] = name }
                objects.append(object)
            }
        }
        return objects.map { object in
            let relationships = object.relationships.sorted { $0.key < $1.key }.map { name, targets in
                "\(name)->[\(targets.map { names[$0] ?? "?\($0)" }.sorted().joined(separator: ","))]"
            }
            return "\(object.entity) \(names[object.id] ?? object.id) \(relationships.joined(separator: " "))"
        }.sorted().joined(separator: "\n")
    }

    private func migrate(_ layout: TestLayout, compiled: Bool, in folder: URL) throws -> (String, MigrationSummary) {
        let t1 = try Self.schema("t1"), t2 = try Self.schema("t2")
        let source = try Store.create(at: folder.appendingPathComponent("source-\(compiled).db").path, schema: t1, format: layout.format)
        try source.insert(Self.data())
        let destination = try Store.create(at: folder.appendingPathComponent("destination-\(compiled).db").path, schema: t2, format: layout.format)
        var step = StepMigration(source: source, destination: destination, mapping: try loadMapping(Self.mappingText))
        step.allowsSQL = compiled
        let summary = try step.run()
        return (try Self.contents(destination), summary)
    }

    @Test(arguments: TestLayout.allCases)
    func toManyLinksAreTheInterpretersOnTheCompiledPath(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (interpreted, reference) = try migrate(layout, compiled: false, in: folder)
        let (compiled, summary) = try migrate(layout, compiled: true, in: folder)
        #expect(compiled == interpreted)
        #expect(reference.compiled.isEmpty)
        // The many-to-many's and the one-to-many's sides are SQL now; an ordered to-many is left to
        // the interpreter, and so is a to-many without an inverse in Core Data's format (a hidden
        // key on its objects' rows, which a second owner must not take; mapc's keeps a join table).
        #expect(summary.compiled.contains("TagToTag.relationships"), "\(summary.compiled)")
        #expect(summary.compiled.contains("SpecialTagToSpecialTag.relationships"), "\(summary.compiled)")
        #expect(summary.compiled.contains("ItemToItem.relationships"), "\(summary.compiled)")
        #expect(summary.compiled.contains("FolderToFolder.relationships") == (layout == .mapc), "\(summary.compiled)")
        #expect(!summary.compiled.contains("ShelvesFromTags.relationships"), "\(summary.compiled)")
        // What the interpreter gives, spelled out: filtered objects leave no link, the special
        // tag is linked by its own mapping, the tag copied twice keeps its folders on the copy.
        let lines = Set(interpreted.split(separator: "\n").map(String.init))
        #expect(lines.contains("Folder f1 items->[a,b,g] pinned->[c,e] shelf->[red-shelf]"), "\(interpreted)")
        #expect(lines.contains("Folder f2 items->[c,d] pinned->[] shelf->[red-shelf]"), "\(interpreted)")
        #expect(lines.contains("Item b folder->[f1] tags->[blue,gold]"), "\(interpreted)")
        #expect(lines.contains("SpecialTag gold folders->[] items->[b,d]"), "\(interpreted)")
        #expect(lines.contains("Tag red folders->[] items->[a,d,g]"), "\(interpreted)")
        #expect(lines.contains("Tag red-shelf folders->[f1,f2] items->[]"), "\(interpreted)")
        #expect(!interpreted.contains("skipped") && !interpreted.contains("hidden"), "\(interpreted)")
    }
    /// Runs `mapping` over `objects` of `from` into `to` both ways, in both formats: the same links.
    private func bothPaths(from: String, to: String, mapping: String, objects: [ObjectData]) throws -> [(layout: TestLayout, interpreted: String, compiled: String, summary: MigrationSummary)] {
        try TestLayout.allCases.map { layout in
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            var results: [String] = []
            var last: MigrationSummary?
            for compiled in [false, true] {
                let v1 = try loadSchema(from), v2 = try loadSchema(to)
                let source = try Store.create(at: folder.appendingPathComponent("s\(compiled).db").path, schema: v1, format: layout.format)
                try source.insert(objects)
                let destination = try Store.create(at: folder.appendingPathComponent("d\(compiled).db").path, schema: v2, format: layout.format)
                var step = StepMigration(source: source, destination: destination, mapping: try loadMapping(mapping))
                step.allowsSQL = compiled
                last = try step.run()
                results.append(try Self.contents(destination))
            }
            return (layout, results[0], results[1], try #require(last))
        }
    }

    /// One mapping setting both a to-one and its to-many inverse (an employee's manager and
    /// reports), from source relationships that disagree: the interpreter's last write is per
    /// object, a statement's per relationship (the review's case). Left to the interpreter.
    @Test func aMappingSettingBothSidesOfAKeyIsInterpreted() throws {
        let v1 = """
            model: Staff
            version: e1
            entities:
              Employee:
                attributes: { name: string }
                relationships:
                  manager: { destination: Employee, optional: true }
                  boss: { destination: Employee, inverse: reports, optional: true }
                  reports: { destination: Employee, toMany: true, inverse: boss }

            """
        let v2 = """
            model: Staff
            version: e2
            entities:
              Employee:
                attributes: { name: string }
                relationships:
                  manager: { destination: Employee, inverse: reports, optional: true }
                  reports: { destination: Employee, toMany: true, inverse: manager }

            """
        let mapping = """
            source: e1
            destination: e2
            entityMappings:
              - name: EmployeeToEmployee
                source: Employee
                destination: Employee
                attributes: { name: $source.name }
                relationships:
                  manager: \(Self.lookup), "EmployeeToEmployee", $source.manager)
                  reports: \(Self.lookup), "EmployeeToEmployee", $source.reports)

            """
        let objects = [
            ObjectData(id: "e1", entity: "Employee", attributes: ["name": .string("e1")]),
            ObjectData(id: "e2", entity: "Employee", attributes: ["name": .string("e2")], relationships: ["reports": ["e3"]]),
            ObjectData(id: "e3", entity: "Employee", attributes: ["name": .string("e3")], relationships: ["manager": ["e1"]]),
        ]
        for result in try bothPaths(from: v1, to: v2, mapping: mapping, objects: objects) {
            #expect(result.compiled == result.interpreted, "\(result.layout)")
            #expect(result.interpreted.contains("Employee e3 manager->[e1]"), "\(result.interpreted)")
            #expect(!result.summary.compiled.contains("EmployeeToEmployee.relationships"), "\(result.summary.compiled)")
        }
    }

    /// A target mapping that fetches its objects from an entity with sub-entities (Xcode's
    /// standard source expression): links to objects made from the sub-entities' rows are kept
    /// on both paths.
    @Test func linksToObjectsAFetchMadeFromSubEntitiesAreKept() throws {
        let fetch = "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Tag\", \"TRUEPREDICATE\"), $manager.sourceContext, NO)"
        let mapping = """
            source: t1
            destination: t2
            entityMappings:
              - name: ItemToItem
                source: Item
                destination: Item
                attributes: { name: $source.name }
                relationships:
                  tags: \(Self.lookup), "TagToTag", $source.tags)
              - name: TagToTag
                source: Tag
                destination: Tag
                sourceExpression: '\(fetch)'
                attributes: { name: $source.name }
                relationships:
                  items: \(Self.lookup), "ItemToItem", $source.items)

            """
        let from = Self.schemaText.replacingOccurrences(of: "VERSION", with: "t1").replacingOccurrences(of: " EXTRA", with: "")
        let to = Self.schemaText.replacingOccurrences(of: "VERSION", with: "t2").replacingOccurrences(of: " EXTRA", with: ", note: string?")
        let objects = Self.data().filter { $0.entity != "Folder" }.map { object -> ObjectData in
            var object = object
            object.relationships["folder"] = nil
            object.relationships["folders"] = nil
            return object
        }
        for result in try bothPaths(from: from, to: to, mapping: mapping, objects: objects) {
            #expect(result.compiled == result.interpreted, "\(result.layout)")
            #expect(result.interpreted.contains("Item b folder->[] tags->[blue,gold,hidden]"), "\(result.interpreted)")
        }
    }
}
