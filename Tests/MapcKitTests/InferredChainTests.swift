import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration

/// Consecutive inferred steps taken as one must leave exactly the store that the steps one after
/// another leave: generated histories of renames, removals and returns, default changes, nils
/// made required, conversions and orders dropped, migrated both ways and compared object by object.
@Suite("Inferred steps taken as one")
struct InferredChainTests {
    struct Attribute {
        var name: String
        var type: String
        var optional: Bool
        var defaultValue: String?
        var renamed: String?
    }

    struct Version {
        var entity = "Item"
        var entityRenamed: String?
        var attributes: [Attribute] = []
        var ordered = false
        /// Whether the parts name their item back (`Part.owner`, the inverse of `parts`).
        var inverse = true

        func yaml(_ name: String) -> String {
            var text = "model: Chain\nversion: \(name)\nentities:\n  \(entity):\n"
            if let entityRenamed { text += "    renamingIdentifier: \(entityRenamed)\n" }
            text += "    attributes:\n      label: { type: string }\n"
            for attribute in attributes {
                var fields = ["type: \(attribute.type)"]
                if attribute.optional { fields.append("optional: true") }
                if let value = attribute.defaultValue { fields.append("default: \(value)") }
                if let old = attribute.renamed { fields.append("renamingIdentifier: \(old)") }
                text += "      \(attribute.name): { \(fields.joined(separator: ", ")) }\n"
            }
            text += "    relationships:\n      parts: { destination: Part, toMany: true\(inverse ? ", inverse: owner" : ""), optional: true\(ordered ? ", ordered: true" : "") }\n"
            text += "  Part:\n    attributes:\n      name: { type: string }\n"
            if inverse { text += "    relationships:\n      owner: { destination: \(entity), inverse: parts, optional: true }\n" }
            return text
        }
    }

    static let names = ["a", "b", "c", "d", "e"]
    static let types = ["string", "int16", "int32", "int64", "double", "float", "decimal"]

    static func value(_ type: String, _ random: inout SeededRandom) -> String {
        switch type {
        case "string": return "\"s\(random.next(upTo: 5))\""
        case "int16": return "\(random.next(upTo: 200) - 100)"
        case "int32": return "\(random.next(upTo: 200_000) - 100_000)"
        // Some beyond a double's 53 bits, which a conversion rounds.
        case "int64": return random.next(upTo: 4) == 0 ? "1152921573326323713" : "\(random.next(upTo: 200_000) - 100_000)"
        default: return ["0.1", "1.5", "-2.25", "1234.5678", "0"][random.next(upTo: 5)]
        }
    }

    /// The next version: one or two changes inference can carry out.
    static func evolve(_ previous: Version, _ random: inout SeededRandom) -> Version {
        var next = previous
        next.entityRenamed = random.next(upTo: 2) == 0 ? previous.entityRenamed : nil
        for index in next.attributes.indices where random.next(upTo: 2) == 0 { next.attributes[index].renamed = nil }
        for _ in 0...random.next(upTo: 2) {
            let present = Set(next.attributes.map(\.name))
            let free = names.filter { !present.contains($0) }
            switch random.next(upTo: 8) {
            case 0, 1:
                guard !free.isEmpty else { continue }
                let name = free[random.next(upTo: free.count)]
                let type = types[random.next(upTo: types.count)]
                let optional = random.next(upTo: 2) == 0
                let hasDefault = !optional || random.next(upTo: 2) == 0
                // A name taken again is no longer another attribute's former name.
                for index in next.attributes.indices where next.attributes[index].renamed == name { next.attributes[index].renamed = nil }
                next.attributes.append(Attribute(name: name, type: type, optional: optional, defaultValue: hasDefault ? value(type, &random) : nil))
            case 2:
                guard !next.attributes.isEmpty else { continue }
                next.attributes.remove(at: random.next(upTo: next.attributes.count))
            case 3:
                guard !next.attributes.isEmpty, !free.isEmpty else { continue }
                let name = free[random.next(upTo: free.count)]
                let index = random.next(upTo: next.attributes.count)
                for other in next.attributes.indices where next.attributes[other].renamed == name { next.attributes[other].renamed = nil }
                next.attributes[index].renamed = next.attributes[index].name
                next.attributes[index].name = name
            case 4:
                guard !next.attributes.isEmpty else { continue }
                let index = random.next(upTo: next.attributes.count)
                next.attributes[index].defaultValue = value(next.attributes[index].type, &random)
            case 5:
                guard !next.attributes.isEmpty else { continue }
                let index = random.next(upTo: next.attributes.count)
                if next.attributes[index].optional {
                    next.attributes[index].optional = false
                    if next.attributes[index].defaultValue == nil { next.attributes[index].defaultValue = value(next.attributes[index].type, &random) }
                } else {
                    next.attributes[index].optional = true
                }
            case 6:
                guard !next.attributes.isEmpty else { continue }
                let index = random.next(upTo: next.attributes.count)
                let conversions = ["int16": ["int32"], "int32": ["int64"], "int64": ["double", "decimal"], "double": ["float"], "float": ["double"], "decimal": ["double", "float"]]
                guard let choices = conversions[next.attributes[index].type] else { continue }
                let type = choices[random.next(upTo: choices.count)]
                next.attributes[index].type = type
                if next.attributes[index].defaultValue != nil { next.attributes[index].defaultValue = value(type, &random) }
            default:
                let choice = random.next(upTo: 3)
                if choice == 0 {
                    next.ordered.toggle()
                } else if choice == 1 {
                    next.inverse.toggle()
                } else {
                    let entity = ["Item", "Thing", "Widget"].filter { $0 != next.entity }[random.next(upTo: 2)]
                    next.entityRenamed = next.entity
                    next.entity = entity
                }
            }
        }
        return next
    }

    /// The first version's objects: items with values of every attribute (nil for some optional
    /// ones), parts under them.
    static func data(_ version: Version, _ random: inout SeededRandom) -> String {
        var items: [String] = []
        for item in 0..<6 {
            var fields = ["\"id\": \"i\(item)\"", "\"label\": \"item \(item)\""]
            for attribute in version.attributes where !(attribute.optional && random.next(upTo: 3) == 0) {
                fields.append("\"\(attribute.name)\": \(value(attribute.type, &random))")
            }
            // Listed against the parts' own order, so an order kept and one made up differ.
            let parts = (0..<10).filter { $0 % 6 == item }.reversed().map { "\"p\($0)\"" }
            fields.append("\"parts\": [\(parts.joined(separator: ", "))]")
            items.append("{\(fields.joined(separator: ", "))}")
        }
        let parts = (0..<10).map { "{\"id\": \"p\($0)\", \"name\": \"part \($0)\"}" }
        return "{\"version\": \"v1\", \"objects\": {\"\(version.entity)\": [\(items.joined(separator: ", "))], \"Part\": [\(parts.joined(separator: ", "))]}}"
    }

    @Test(arguments: TestLayout.allCases)
    func combinedStepsLeaveTheStoreTheStepsLeave(layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var combinedSomewhere = 0, keptApartSomewhere = 0, compared = 0
        for seed in UInt64(1)...30 {
            var random = SeededRandom(seed: seed &* 7919 &+ (layout == .mapc ? 0 : 1_000_003))
            var versions = [Version()]
            versions[0].attributes = [Attribute(name: "a", type: "int16", optional: true, defaultValue: nil),
                                      Attribute(name: "b", type: "double", optional: false, defaultValue: "1.5")]
            versions[0].ordered = random.next(upTo: 2) == 0
            versions[0].inverse = random.next(upTo: 3) != 0
            for _ in 1..<6 { versions.append(Self.evolve(versions[versions.count - 1], &random)) }
            var files = ["versions.yaml": "versions: [\(versions.indices.map { "v\($0 + 1)" }.joined(separator: ", "))]\n"]
            for (index, version) in versions.enumerated() { files["v\(index + 1).yaml"] = version.yaml("v\(index + 1)") }
            let context = "seed \(seed):\n" + versions.indices.map { files["v\($0 + 1).yaml"] ?? "" }.joined(separator: "---\n")
            var stepByStep = try Migrator(schemaFiles: files)
            stepByStep.stepsThroughEveryVersion = true
            let combined = try Migrator(schemaFiles: files)
            let first = try combined.schemas.require(version: "v1")
            let data = Self.data(versions[0], &random)
            var stores: [URL] = []
            for name in ["steps", "combined"] {
                let url = folder.appendingPathComponent("\(seed)-\(name).db")
                let store = try Store.create(at: url.path, schema: first, format: layout.format)
                try store.insert(try DataFile.read(try JSONValue.parse(Data(data.utf8), path: "data.json"), schema: first).objects)
                try store.close()
                stores.append(url)
            }
            let stepsPlan: MigrationPlan
            do { stepsPlan = try stepByStep.plan(forStoreAt: stores[0]) } catch is PlanError { continue }
            let combinedPlan = try combined.plan(forStoreAt: stores[1])
            #expect(combinedPlan.steps.count <= stepsPlan.steps.count, "\(context)")
            if combinedPlan.steps.count < stepsPlan.steps.count { combinedSomewhere += 1 }
            if combinedPlan.steps.count > 1 { keptApartSomewhere += 1 }
            // Every version passed is in the combined steps, in order.
            #expect(combinedPlan.steps.flatMap { [$0.source.version] + $0.passesThrough } == stepsPlan.steps.map(\.source.version), "\(context)")
            var options = MigrationOptions()
            options.acceptsDataLoss = true
            let results = [Result { try stepByStep.migrate(stepsPlan, options: options) }, Result { try combined.migrate(combinedPlan, options: options) }]
            switch (results[0], results[1]) {
            case (.success, .success): break
            case (.failure(let stepsError), .failure(let combinedError)):
                // A history whose values do not fit a later version fails both ways alike.
                #expect("\(stepsError)" == "\(combinedError)", "\(context)")
                continue
            default:
                Issue.record("one run failed: \(results)\n\(context)")
                continue
            }
            let last = try combined.schemas.newest()
            let dumps = try stores.map { url in
                let store = try Store.open(at: url.path, schema: last, readOnly: true)
                defer { try? store.close() }
                return try DataFile.dump(store).serialized(pretty: true)
            }
            #expect(dumps[0] == dumps[1], "\(context)")
            compared += 1
        }
        // The histories must exercise both outcomes, or the test proves nothing.
        #expect(compared >= 20 && combinedSomewhere >= 5 && keptApartSomewhere >= 5, "compared \(compared), combined \(combinedSomewhere), kept apart \(keptApartSomewhere)")
    }
}

/// Shapes of history the generated one does not make, each found by a review: run step by step
/// and as one step, both must keep every value a store had.
@Suite("Inferred steps: relationships and conversions")
struct InferredChainShapeTests {
    /// Migrates `data` (at v1) through the versions both ways; the two dumps.
    static func bothWays(_ schemas: [String], data: String, layout: TestLayout) throws -> (steps: String, combined: String, plan: [MigrationStep]) {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var files = ["versions.yaml": "versions: [\(schemas.indices.map { "v\($0 + 1)" }.joined(separator: ", "))]\n"]
        for (index, text) in schemas.enumerated() { files["v\(index + 1).yaml"] = "model: M\nversion: v\(index + 1)\n" + text }
        var stepByStep = try Migrator(schemaFiles: files)
        stepByStep.stepsThroughEveryVersion = true
        let combined = try Migrator(schemaFiles: files)
        let first = try combined.schemas.require(version: "v1"), last = try combined.schemas.newest()
        var dumps: [String] = []
        var plan: [MigrationStep] = []
        for (name, migrator) in [("steps", stepByStep), ("combined", combined)] {
            let url = folder.appendingPathComponent("\(name).db")
            let store = try Store.create(at: url.path, schema: first, format: layout.format)
            try store.insert(try DataFile.read(try JSONValue.parse(Data(data.utf8), path: "data.json"), schema: first).objects)
            try store.close()
            if name == "combined" { plan = try migrator.plan(forStoreAt: url).steps }
            var options = MigrationOptions()
            options.acceptsDataLoss = true
            _ = try migrator.migrate(storeAt: url, options: options)
            let migrated = try Store.open(at: url.path, schema: last, readOnly: true)
            dumps.append(try DataFile.dump(migrated).serialized(pretty: true))
            try migrated.close()
        }
        return (dumps[0], dumps[1], plan)
    }

    /// A to-many that gains a to-one inverse keeps its links: set from its own side while the
    /// inverse carries nothing (it was set from the new inverse's side, which has no values).
    @Test(arguments: TestLayout.allCases) func aRelationshipThatGainsAnInverseKeepsItsLinks(layout: TestLayout) throws {
        let v1 = "entities:\n  A:\n    attributes: { n: string }\n    relationships:\n      bs: { destination: B, toMany: true, ordered: true, optional: true }\n  B:\n    attributes: { m: string }\n"
        let v2 = "entities:\n  A:\n    attributes: { n: string }\n    relationships:\n      bs: { destination: B, toMany: true, ordered: true, optional: true, inverse: a }\n  B:\n    attributes: { m: string }\n    relationships:\n      a: { destination: A, optional: true, inverse: bs }\n"
        let v3 = v2.replacingOccurrences(of: "ordered: true, optional: true, inverse: a", with: "optional: true, inverse: a")
        let data = #"{"version": "v1", "objects": {"A": [{"id": "a1", "n": "x", "bs": ["b2", "b1"]}], "B": [{"id": "b1", "m": "1"}, {"id": "b2", "m": "2"}]}}"#
        for schemas in [[v1, v3], [v1, v2, v3]] {
            let (steps, combined, _) = try Self.bothWays(schemas, data: data, layout: layout)
            #expect(steps == combined, "\(steps)\n---\n\(combined)")
            #expect(combined.contains(#""a": "a1""#) || combined.contains(#""a": "A/p1""#), "the links are kept: \(combined)")
        }
    }

    /// A relationship narrowed to a sub-entity and widened back, and a parent added and taken
    /// away again: which objects a link may reach, and which keys objects get, are not traced,
    /// so such steps are never taken together.
    @Test(arguments: TestLayout.allCases) func stepsThatReshapeLinksOrKeysStayApart(layout: TestLayout) throws {
        let people = "  Person:\n    attributes: { name: string }\n  Employee:\n    parent: Person\n    attributes: { badge: string? }\n"
        func owner(_ target: String, extra: String = "") -> String {
            "entities:\n\(people)  Note:\n    attributes: { text: string\(extra) }\n    relationships:\n      owner: { destination: \(target), optional: true }\n"
        }
        let notes = #"{"version": "v1", "objects": {"Person": [{"id": "p1", "name": "P"}], "Employee": [{"id": "e1", "name": "E"}], "#
            + #""Note": [{"id": "n1", "text": "a", "owner": "p1"}, {"id": "n2", "text": "b", "owner": "e1"}]}}"#
        let narrowed = try Self.bothWays([owner("Person"), owner("Employee"), owner("Person", extra: ", u: string?")], data: notes, layout: layout)
        #expect(narrowed.steps == narrowed.combined, "\(narrowed.steps)\n---\n\(narrowed.combined)")
        #expect(narrowed.plan.count == 2)
        let apart = "entities:\n  A:\n    attributes: { x: string }\n  B:\n    attributes: { y: string }\n"
        let under = "entities:\n  P:\n    abstract: true\n    attributes: { x0: string? }\n  A:\n    parent: P\n    attributes: { x: string }\n  B:\n    parent: P\n    attributes: { y: string }\n"
        let apartAgain = apart.replacingOccurrences(of: "{ x: string }", with: "{ x: string, w: string? }")
        let keyed = #"{"version": "v1", "objects": {"A": [{"id": "a1", "x": "1"}, {"id": "a2", "x": "2"}], "B": [{"id": "b1", "y": "1"}, {"id": "b2", "y": "2"}]}}"#
        let parent = try Self.bothWays([apart, under, apartAgain], data: keyed, layout: layout)
        #expect(parent.steps == parent.combined, "\(parent.steps)\n---\n\(parent.combined)")
    }

    /// A to-many without an inverse may hold one object from several owners (mapc's format keeps
    /// it in a join table); a new to-one inverse holds one: the run refuses, naming the object,
    /// where the last owner took the object silently.
    @Test func anObjectWithTwoOwnersRefusesANewToOneInverse() throws {
        let v1 = "entities:\n  A:\n    attributes: { n: string }\n    relationships:\n      bs: { destination: B, toMany: true, optional: true }\n  B:\n    attributes: { m: string }\n"
        let v2 = "entities:\n  A:\n    attributes: { n: string }\n    relationships:\n      bs: { destination: B, toMany: true, optional: true, inverse: a }\n  B:\n    attributes: { m: string }\n    relationships:\n      a: { destination: A, optional: true, inverse: bs }\n"
        let shared = #"{"version": "v1", "objects": {"A": [{"id": "a1", "n": "x", "bs": ["b1"]}, {"id": "a2", "n": "y", "bs": ["b1"]}], "B": [{"id": "b1", "m": "1"}]}}"#
        let error = #expect(throws: MigrationError.self) { _ = try Self.bothWays([v1, v2], data: shared, layout: .mapc) }
        #expect(error?.description.contains("is linked from A 'a1' already") == true && error?.description.contains("its new to-one inverse holds one A") == true, "\(String(describing: error))")
        // Each B with one owner: kept.
        let single = #"{"version": "v1", "objects": {"A": [{"id": "a1", "n": "x", "bs": ["b1"]}, {"id": "a2", "n": "y", "bs": []}], "B": [{"id": "b1", "m": "1"}]}}"#
        let kept = try Self.bothWays([v1, v2], data: single, layout: .mapc)
        #expect(kept.combined.contains(#""a": "a1""#), "\(kept.combined)")
    }

    /// A relationship narrowed to a sub-entity drops the links to the old destination's other
    /// objects: a value dropped, said by the plan and refused without consent, as a removal is.
    @Test(arguments: TestLayout.allCases) func aRelationshipNarrowedToASubentityAsksBeforeDroppingLinks(layout: TestLayout) throws {
        let people = "  Person:\n    attributes: { name: string }\n  Employee:\n    parent: Person\n    attributes: { badge: string? }\n"
        let files = ["versions.yaml": "versions: [v1, v2]\n",
                     "v1.yaml": "model: M\nversion: v1\nentities:\n\(people)  Note:\n    attributes: { text: string }\n    relationships:\n      owner: { destination: Person, optional: true }\n",
                     "v2.yaml": "model: M\nversion: v2\nentities:\n\(people)  Note:\n    attributes: { text: string }\n    relationships:\n      owner: { destination: Employee, optional: true }\n"]
        let result = MappingInference.infer(from: try SchemaCatalog(files: files).require(version: "v1"), to: try SchemaCatalog(files: files).require(version: "v2"))
        #expect(result.droppedValues == ["Note.owner"], "\(result.changes)")
        #expect(result.skeleton.entityMappings.contains { $0.todo.contains { $0.text.hasPrefix("owner: links to Person objects that are not Employee objects are dropped") } })
        #expect(result.mapping?.entityMappings.allSatisfy(\.todo.isEmpty) == true, "the mapping a run uses has no todo")
    }

    /// A conversion after a widening rounds as the steps round (int64 -> decimal -> float is
    /// not int64 -> float), and a default is the same only when its text is the same scalars.
    @Test(arguments: TestLayout.allCases) func conversionsAndDefaultsAreComparedExactly(layout: TestLayout) throws {
        let big = #"{"version": "v1", "objects": {"T": [{"id": "t1", "x": 1152921573326323713}]}}"#
        let rounded = try Self.bothWays(["entities:\n  T:\n    attributes: { x: int64? }\n", "entities:\n  T:\n    attributes: { x: decimal? }\n",
                                         "entities:\n  T:\n    attributes: { x: float? }\n"], data: big, layout: layout)
        #expect(rounded.steps == rounded.combined, "\(rounded.steps)\n---\n\(rounded.combined)")
        let widened = try Self.bothWays(["entities:\n  T:\n    attributes: { x: int16? }\n", "entities:\n  T:\n    attributes: { x: int32? }\n",
                                         "entities:\n  T:\n    attributes: { x: int64? }\n"], data: #"{"version": "v1", "objects": {"T": [{"id": "t1", "x": 7}]}}"#, layout: layout)
        #expect(widened.steps == widened.combined && widened.plan.count == 1, "widenings in a row are one step")
        let composed = "e\u{301}", precomposed = "\u{e9}"
        let accents = try Self.bothWays(["entities:\n  T:\n    attributes: { x: int16? }\n", "entities:\n  T:\n    attributes: { x: int16?, s: { type: string, default: \"\(precomposed)\" } }\n",
                                         "entities:\n  T:\n    attributes: { x: int16?, s: { type: string, default: \"\(composed)\" } }\n"],
                                        data: #"{"version": "v1", "objects": {"T": [{"id": "t1", "x": 7}]}}"#, layout: layout)
        #expect(Array(accents.steps.unicodeScalars) == Array(accents.combined.unicodeScalars), "\(accents.steps)\n---\n\(accents.combined)")
    }
}
