import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Migrations whose source and destination use different store formats: values must arrive the
/// same whatever the two formats encode (dates from 1970 or 2001, UUIDs as text or bytes, decimals,
/// keys allocated by a counter table), on the compiled path and on the interpreted one.
@Suite("Migrations across store layouts")
struct CrossLayoutTests {
    /// A store's contents with ids replaced by each object's position among its entity's objects,
    /// so stores of different formats (which name objects differently) can be compared.
    private func canonical(_ store: Store) throws -> String {
        var label: [String: String] = [:]
        var objects: [ObjectData] = []
        for entity in store.schema.entities {
            for (index, object) in try store.objects(ofExactEntity: entity.name).enumerated() {
                label[object.id] = "\(entity.name)#\(index)"
                objects.append(object)
            }
        }
        return objects.map { object in
            let attributes = object.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let relationships = object.relationships.sorted { $0.key < $1.key }.map { "\($0.key)->\($0.value.map { label[$0] ?? "?\($0)" })" }
            return ([label[object.id] ?? object.id] + attributes + relationships).joined(separator: " ")
        }.joined(separator: "\n")
    }

    private func fileStore(_ schema: Schema, _ layout: TestLayout, in folder: URL, named name: String) throws -> Store {
        try Store.create(at: folder.appendingPathComponent(name).path, schema: schema, format: layout.format)
    }

    @Test(arguments: TestLayout.pairs, [true, false])
    func everyAttributeTypeAndRelationshipKindCrossesLayouts(layouts: (TestLayout, TestLayout), compiled: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let k1 = try kitchenSchema()
        let source = try fileStore(k1, layouts.0, in: folder, named: "source.db")
        try source.insert(try DataFile.read(kitchenData(decimal: "-12345.0625"), schema: k1).objects)
        var yaml = "source: k1\ndestination: k1\nentityMappings:\n"
        for entity in k1.entities { yaml += "  - { name: \(entity.name)Copy, source: \(entity.name), destination: \(entity.name) }\n" }
        let (model, diagnostics) = MappingLoader.parse(source: SourceFile(path: "copy.yaml", text: yaml))
        #expect(!diagnostics.hasErrors, "\(diagnostics)")
        let destination = try fileStore(k1, layouts.1, in: folder, named: "destination.db")
        var step = StepMigration(source: source, destination: destination, mapping: try #require(model))
        step.allowsSQL = compiled
        _ = try step.run()
        let (there, here) = (try canonical(destination), try canonical(source))
        #expect(there == here, "\(there)\n---\n\(here)")
        // Read back from the file as a fresh process would.
        let reopened = try Store.open(at: folder.appendingPathComponent("destination.db").path, schema: k1, readOnly: true)
        #expect(reopened.format.identifier == layouts.1.format.identifier)
        #expect(try canonical(reopened) == canonical(source))
    }

    /// Relationships set from one side only: the other side of a one-to-one pair and an ordered
    /// to-many's positions follow from that side's links alone.
    @Test(arguments: TestLayout.allCases, [true, false])
    func relationshipsSetFromOneSideAreWholeOnBoth(layout: TestLayout, compiled: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let k1 = try kitchenSchema()
        let source = try fileStore(k1, layout, in: folder, named: "source.db")
        try source.insert(try DataFile.read(kitchenData(decimal: "-12345.0625"), schema: k1).objects)
        let yaml = """
        source: k1
        destination: k1
        entityMappings:
          - name: PersonToPerson
            source: Person
            destination: Person
            attributes: { name: $source.name }
            relationships:
              passport: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PassportToPassport", $source.passport)
          - { name: PassportToPassport, source: Passport, destination: Passport, attributes: { number: $source.number } }
          - name: ItemToItem
            source: Item
            destination: Item
            attributes: { name: $source.name }
            relationships:
              steps: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "StepToStep", $source.steps)
          - { name: StepToStep, source: Step, destination: Step, attributes: { text: $source.text } }

        """
        let (model, diagnostics) = MappingLoader.parse(source: SourceFile(path: "one-side.yaml", text: yaml))
        #expect(!diagnostics.hasErrors, "\(diagnostics)")
        let destination = try fileStore(k1, layout, in: folder, named: "destination.db")
        var step = StepMigration(source: source, destination: destination, mapping: try #require(model))
        step.allowsSQL = compiled
        _ = try step.run()
        func byID(_ entity: String) throws -> [String: ObjectData] {
            Dictionary(try destination.objects(ofExactEntity: entity).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let people = try byID("Person"), passports = try byID("Passport"), items = try byID("Item"), steps = try byID("Step")
        let ada = try #require(people.values.first { $0.attributes["name"] == .string("Ada") })
        let passport = try #require(passports.values.first)
        #expect(ada.relationships["passport"] == [passport.id])
        #expect(passport.relationships["person"] == [ada.id], "the one-to-one's other side")
        let first = try #require(items.values.first { $0.relationships["steps"]?.count == 3 })
        #expect(first.relationships["steps"]?.map { steps[$0]?.attributes["text"] } == [.string("a"), .string("b"), .string("c")], "in the source's order")
        #expect(steps.values.filter { $0.relationships["item"] == [first.id] }.count == 3)
    }

    @Test(arguments: TestLayout.pairs, [true, false])
    func theShippedMappingMigratesAcrossLayouts(layouts: (TestLayout, TestLayout), compiled: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v2 = try uncloudNotes("v2"), v3 = try uncloudNotes("v3")
        let dataPath = packageRoot.appendingPathComponent("Tests/MapcCLITests/Fixtures/uncloudnotes-v2.json").path
        let data = try JSONParser.parse(try Data(contentsOf: URL(fileURLWithPath: dataPath)), path: dataPath)
        let source = try fileStore(v2, layouts.0, in: folder, named: "v2.db")
        try source.insert(try DataFile.read(data, schema: v2).objects)
        let mappingPath = packageRoot.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").path
        let model = try #require(MappingLoader.parse(source: SourceFile(path: mappingPath, text: try String(contentsOfFile: mappingPath, encoding: .utf8))).mapping)
        // The expectation: the same migration between two in-memory stores of mapc's own format.
        let reference = try Store.inMemory(schema: v2)
        try reference.insert(try DataFile.read(data, schema: v2).objects)
        let expected = try Store.inMemory(schema: v3)
        _ = try StepMigration(source: reference, destination: expected, mapping: model).run()
        let destination = try fileStore(v3, layouts.1, in: folder, named: "v3.db")
        var step = StepMigration(source: source, destination: destination, mapping: model)
        step.allowsSQL = compiled
        let summary = try step.run()
        #expect(summary.created.map(\.count).reduce(0, +) > 0)
        #expect(try canonical(destination) == canonical(expected))
    }

    @Test func aDecimalCoreDataCannotHoldExactlyIsRefusedNotRounded() throws {
        let k1 = try kitchenSchema()
        let source = try Store.inMemory(schema: k1)
        try source.insert(try DataFile.read(kitchenData(), schema: k1).objects)
        var yaml = "source: k1\ndestination: k1\nentityMappings:\n"
        for entity in k1.entities { yaml += "  - { name: \(entity.name)Copy, source: \(entity.name), destination: \(entity.name) }\n" }
        let model = try #require(MappingLoader.parse(source: SourceFile(path: "copy.yaml", text: yaml)).mapping)
        let error = #expect(throws: (any Error).self) {
            _ = try StepMigration(source: source, destination: try TestLayout.coreData.store(k1), mapping: model).run()
        }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("decimal 12345678901234567890.123456789 has more digits than a Core Data DECIMAL column keeps"), "\(message)")
        #expect(message.contains("Item 'i1', property 'dec'"), "\(message)")
        // A value that does not fit, named with its mapping: the command's exit status 3, not a data file's 1.
        guard case .value(let mapping, "Item", "i1", "dec", _)? = error as? MigrationError else {
            Issue.record("expected MigrationError.value, got \(String(describing: error))")
            return
        }
        #expect(mapping == "ItemCopy")
    }

    /// Two mappings reading the same notes into one destination table (the second filtered), a
    /// third relating attachments to the second's objects: keys come from each mapping's key rule,
    /// the same on both paths, and every `$manager` lookup finds the right mapping's object.
    @Test(arguments: TestLayout.allCases, [true, false])
    func mappingsSharingADestinationTableKeepTheirObjectsApart(layout: TestLayout, compiled: Bool) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v2 = try uncloudNotes("v2"), v3 = try uncloudNotes("v3")
        let source = try fileStore(v2, layout, in: folder, named: "v2.db")
        var notes: [ObjectData] = []
        for index in 0..<6 {
            let image: Value = index % 2 == 0 ? .binary(Data([UInt8(index)])) : .null
            let attributes: [String: Value] = ["title": .string("Note \(index)"), "body": .string("b"), "dateCreated": .date(Date(timeIntervalSince1970: 1_000 + Double(index))),
                                               "displayIndex": .integer(Int64(index)), "image": image]
            notes.append(ObjectData(id: "n\(index)", entity: "Note", attributes: attributes))
        }
        try source.insert(notes)
        let model = try loadMapping(noteToNoteMapping(more: """
          - name: EarlyNoteCopies
            source: Note
            destination: Note
            filter: displayIndex < 3
            attributes: { title: "$source.title", body: $source.body, dateCreated: $source.dateCreated, displayIndex: "$source.displayIndex + 100" }
          - name: NoteToAttachment
            source: Note
            destination: Attachment
            filter: image != nil
            attributes: { image: $source.image, dateCreated: $source.dateCreated }
            relationships:
              note: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "EarlyNoteCopies", $source)

        """))
        let destination = try fileStore(v3, layout, in: folder, named: "v3.db")
        var step = StepMigration(source: source, destination: destination, mapping: model)
        step.allowsSQL = compiled
        let summary = try step.run()
        #expect(summary.created.map(\.count) == [6, 3, 3])
        let migrated = try destination.objects(ofExactEntity: "Note")
        #expect(migrated.count == 9)
        // The first mapping keeps the source keys; the copies take a range above them.
        #expect(migrated.prefix(6).map(\.key) == [1, 2, 3, 4, 5, 6])
        #expect(migrated.dropFirst(6).map(\.key) == [7, 8, 9])
        var displayIndexOf: [String: Value] = [:]
        for note in migrated { displayIndexOf[note.id] = note.attributes["displayIndex"] }
        for attachment in try destination.objects(ofExactEntity: "Attachment") {
            guard case .binary(let data)? = attachment.attributes["image"], let byte = data.first else { Issue.record("no image"); continue }
            let index = Int(byte)
            let related = attachment.relationships["note"] ?? []
            if index < 3 {
                #expect(related.count == 1 && displayIndexOf[related[0]] == .integer(Int64(index) + 100), "attachment \(index) belongs to the copy of its note")
            } else {
                #expect(related.isEmpty, "note \(index) was not copied, so its attachment has no note")
            }
        }
        // Compiled, the copies (arithmetic) are interpreted, and the compiled attachments find
        // them by the same key rule.
        #expect(summary.compiled == (compiled ? ["NoteToNote", "NoteToAttachment", "NoteToAttachment.relationships"] : []))
    }
}

/// A migration whose result breaks a uniqueness constraint stops with the constraint and the
/// objects named, in both layouts (Core Data's keeps the constraint as a UNIQUE index, which stops
/// the insert itself) and on both paths, never with SQLite's message or a word about ids.
@Suite("Uniqueness in a migration")
struct MigrationUniquenessTests {
    @Test(arguments: TestLayout.allCases, [true, false])
    func aBrokenUniquenessConstraintIsNamed(layout: TestLayout, compiled: Bool) throws {
        let v1 = try loadSchema("model: U\nversion: u1\nentities:\n  Item:\n    attributes:\n      name: string\n")
        let v2 = try loadSchema("model: U\nversion: u2\nentities:\n  Item:\n    uniquenessConstraints: [[code]]\n    attributes:\n      name: string\n      code: int64\n")
        let source = try TestLayout.mapc.store(v1)
        try source.insert([ObjectData(id: "i1", entity: "Item", attributes: ["name": .string("a")]),
                           ObjectData(id: "i2", entity: "Item", attributes: ["name": .string("b")])])
        let yaml = "source: u1\ndestination: u2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      name: $source.name\n      code: 7\n"
        let (model, diagnostics) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml))
        #expect(!diagnostics.hasErrors, "\(diagnostics)")
        var step = StepMigration(source: source, destination: try layout.store(v2), mapping: try #require(model))
        step.allowsSQL = compiled
        let error = #expect(throws: (any Error).self) { try step.run() }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("uniqueness constraint (code) of Item") && message.contains("code 7"), "\(message)")
        #expect(!message.contains("SQLite") && !message.contains("already has id"), "\(message)")

        // The same through an expression SQL evaluates, so a compiled INSERT … SELECT meets it.
        let v3 = try loadSchema("model: U\nversion: u2\nentities:\n  Item:\n    uniquenessConstraints: [[name]]\n    attributes:\n      name: string\n")
        // File stores, so the compiled path runs (it reads the source attached by its path).
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let same = try Store.create(at: folder.appendingPathComponent("s.db").path, schema: v1)
        try same.insert([ObjectData(id: "i1", entity: "Item", attributes: ["name": .string("a")]),
                         ObjectData(id: "i2", entity: "Item", attributes: ["name": .string("a")])])
        let copy = "source: u1\ndestination: u2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      name: $source.name\n"
        let target = try Store.create(at: folder.appendingPathComponent("d.db").path, schema: v3, format: layout.format)
        var second = StepMigration(source: same, destination: target, mapping: try #require(MappingLoader.parse(source: SourceFile(path: "c.yaml", text: copy)).mapping))
        second.allowsSQL = compiled
        let secondError = #expect(throws: (any Error).self) { try second.run() }
        let secondMessage = "\(secondError.map { "\($0)" } ?? "")"
        #expect(secondMessage.contains("uniqueness constraint (name) of Item") && secondMessage.contains("\"a\""), "\(secondMessage)")
        #expect(!secondMessage.contains("SQLite error") && !secondMessage.contains("already has id"), "\(secondMessage)")
    }
}
