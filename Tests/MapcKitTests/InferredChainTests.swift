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
            text += "    relationships:\n      parts: { destination: Part, toMany: true, inverse: owner, optional: true\(ordered ? ", ordered: true" : "") }\n"
            text += "  Part:\n    attributes:\n      name: { type: string }\n"
            text += "    relationships:\n      owner: { destination: \(entity), inverse: parts, optional: true }\n"
            return text
        }
    }

    static let names = ["a", "b", "c", "d", "e"]
    static let types = ["string", "int16", "int32", "int64", "double", "float"]

    static func value(_ type: String, _ random: inout SeededRandom) -> String {
        switch type {
        case "string": return "\"s\(random.next(upTo: 5))\""
        case "int16": return "\(random.next(upTo: 200) - 100)"
        case "int32", "int64": return "\(random.next(upTo: 200_000) - 100_000)"
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
                let conversions = ["int16": "int32", "int32": "int64", "int64": "double", "double": "float", "float": "double"]
                guard let type = conversions[next.attributes[index].type] else { continue }
                next.attributes[index].type = type
                if next.attributes[index].defaultValue != nil { next.attributes[index].defaultValue = value(type, &random) }
            default:
                if random.next(upTo: 2) == 0 {
                    next.ordered.toggle()
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
