import Foundation
import MapcKit

/// What a `mapc test` case's migrated store must hold, as its expected data file gives it, and
/// what differs. Values are compared as the store holds them, so two spellings of one value are
/// equal (`1e10` and `10000000000` for a decimal, one instant at two offsets, `1.0` for an
/// integer 1), and a value no store of the version could hold is a failure, never read as nil.
enum ExpectedData {
    /// Each difference between the objects of the expected file (its JSON) and the store's, entity
    /// by entity and object by object, each value with both sides; the file's own problems
    /// (unreadable values, an object listed twice) first. A relationship an expected object leaves
    /// out is not compared (`load` derives it from its inverse), unless `leavesNothingOut`: then
    /// it is compared as empty, for whether the file holds the whole result.
    /// `differing` is told each entity and property whose value differs (for `setters`).
    static func differences(expected json: JSONValue, store: Store, file: String, limit: Int = 20, leavesNothingOut: Bool = false,
                            differing: (String, String) -> Void = { _, _ in }) throws -> [String] {
        var found: [String] = []
        let version: String? = if case .string(let text)? = json["version"] { text } else { nil }
        if let version, version != store.schema.version {
            return ["differs from \(file):", "  version: expected \"\(version)\", got \"\(store.schema.version)\""]
        }
        let contents: DataFile.Contents
        do {
            contents = try DataFile.read(json, schema: store.schema, for: store.format)
        } catch let error as DataValidationError {
            return ["\(file) cannot be read as data of \(store.schema.version):"] + error.problems.map { "  \($0)" }
        }
        // Ids as the store's index compares them: "é" in one scalar is not "e" and an accent.
        var wanted: [String: [ExactText: ObjectData]] = [:]
        for object in contents.objects {
            if wanted[object.entity]?[ExactText(object.id)] != nil {
                found.append("\(object.entity) '\(object.id)' is listed twice in the expected file; list each object once")
            } else {
                wanted[object.entity, default: [:]][ExactText(object.id)] = object
            }
        }
        var got: [String: [ExactText: ObjectData]] = [:]
        for entity in store.schema.entities {
            try store.forEachObject(ofExactEntity: entity.name) { got[entity.name, default: [:]][ExactText($0.id)] = $0 }
        }
        var differences = compare(wanted, got, store: store, leavesNothingOut: leavesNothingOut)
        // A Core Data store's ids are its keys, which a migration numbers in an order of its own
        // (Core Data's is that of an unordered set): a result Core Data made is this one when
        // its objects match one to one by value, and every value and link then agrees.
        var byValue: String?
        if !differences.isEmpty, store.identifiesObjectsByKey {
            if let renamed = matchedByValue(wanted, got, store: store), compare(renamed, got, store: store, leavesNothingOut: leavesNothingOut).isEmpty {
                differences = []
            } else {
                // Differences by id name every object of a store numbered otherwise: each object
                // is compared with the stored one it pairs with by value, and the objects with no
                // counterpart of the same values are said first.
                let paired = pairedByValue(wanted, got, store: store)
                differences = compare(paired.renamed, got, store: store, leavesNothingOut: leavesNothingOut, fileIDs: paired.fileIDs)
                let (expected, actual) = unmatchedByValue(wanted, got, store: store)
                if !expected.isEmpty || !actual.isEmpty {
                    byValue = "matched by value (a Core Data store's ids are its keys, which a migration may number otherwise), "
                        + [expected.isEmpty ? nil : "expected objects with no counterpart in the store: \(expected.joined(separator: ", "))",
                           actual.isEmpty ? nil : "stored objects with none in the file: \(actual.joined(separator: ", "))"].compactMap { $0 }.joined(separator: "; ")
                        + "; each is compared below with the stored object closest in value (the file's id beside the store's)"
                }
            }
        }
        for difference in differences {
            if let property = difference.property { differing(difference.entity, property) }
            found.append(difference.message)
        }
        if found.count > limit { found = Array(found.prefix(limit)) + ["… and \(found.count - limit) more differences from \(file)"] }
        if let byValue, !found.isEmpty { found.insert(byValue, at: 0) }
        return found.isEmpty ? [] : ["differs from \(file):"] + found.map { "  " + $0 }
    }

    /// The differences between expected and stored objects of each entity, matched by id: each
    /// with its entity, the property that differs (nil for an object missing or extra), and its line.
    /// `fileIDs` names, by a stored id, the file's object paired with it by value (said beside it).
    static func compare(_ wanted: [String: [ExactText: ObjectData]], _ got: [String: [ExactText: ObjectData]], store: Store,
                        leavesNothingOut: Bool, fileIDs: [String: String] = [:]) -> [(entity: String, property: String?, message: String)] {
        var found: [(entity: String, property: String?, message: String)] = []
        let epoch = store.strategy.dateEpoch
        for entityName in Set(wanted.keys).union(got.keys).sorted() {
            guard let entity = store.schema.entity(named: entityName) else { continue }
            let expectedObjects = wanted[entityName] ?? [:], actualObjects = got[entityName] ?? [:]
            for key in Set(expectedObjects.keys).union(actualObjects.keys).sorted() {
                let id = "'\(key.text)'" + (fileIDs[key.text].map { " (the file's '\($0)')" } ?? "")
                guard let want = expectedObjects[key] else { found.append((entityName, nil, "\(entityName) \(id): in the migrated store, not expected")); continue }
                guard let have = actualObjects[key] else { found.append((entityName, nil, "\(entityName) \(id): expected, but not in the migrated store")); continue }
                for attribute in store.schema.allAttributes(of: entity) where !attribute.isTransient {
                    let expectedValue = want.attributes[attribute.name] ?? .null, actualValue = have.attributes[attribute.name] ?? .null
                    guard !sameStored(expectedValue, actualValue, as: attribute.type, in: store) else { continue }
                    found.append((entityName, attribute.name, "\(entityName) \(id), \(attribute.name): "
                                  + contrast(DataFile.json(expectedValue, type: attribute.type, dateEpoch: epoch), DataFile.json(actualValue, type: attribute.type, dateEpoch: epoch))))
                }
                // A relationship the expected object leaves out is not compared: `load` derives
                // it from its inverse (a dump writes both sides).
                for relationship in store.schema.allRelationships(of: entity) where !relationship.isTransient && (leavesNothingOut || want.relationships[relationship.name] != nil) {
                    var expectedIDs = want.relationships[relationship.name] ?? [], actualIDs = have.relationships[relationship.name] ?? []
                    // An unordered to-many is a set: the order a store lists it in means nothing.
                    if relationship.isToMany && !relationship.isOrdered {
                        let inOrder = { (ids: [String]) in ids.map(ExactText.init).sorted().map(\.text) }
                        (expectedIDs, actualIDs) = (inOrder(expectedIDs), inOrder(actualIDs))
                    }
                    guard expectedIDs.count != actualIDs.count || !zip(expectedIDs, actualIDs).allSatisfy({ $0.isExactly($1) }) else { continue }
                    let shown = { (ids: [String]) -> JSONValue in relationship.isToMany ? .array(ids.map(JSONValue.string)) : (ids.first.map(JSONValue.string) ?? .null) }
                    found.append((entityName, relationship.name, "\(entityName) \(id), \(relationship.name): " + contrast(shown(expectedIDs), shown(actualIDs))))
                }
            }
        }
        return found
    }

    /// Where each differing property's value was last computed by a mapping file of the run, so
    /// that a difference found after many steps names the step to look at: the last step whose
    /// mapping computes it (its line; a plain `$source.<same name>` after it is said as carrying
    /// it over), or that inferred steps alone carry it. Entities are matched by the name at each
    /// step's destination (a property renamed on the way is followed no further back).
    static func setters(of properties: [(entity: String, property: String)], in steps: [MigrationStep]) -> [String] {
        var lines: [String] = []
        var said = Set<String>()
        for (entity, property) in properties where said.insert("\(entity).\(property)").inserted {
            var found: String?
            var carried: [String] = []
            var throughInferred = false
            search: for step in steps.reversed() {
                let at = "step \(step.source.version) -> \(step.destination.version)"
                // Not in this step's version: renamed or added by a later step; look no further back.
                guard let target = step.destination.entity(named: entity), step.destination.property(named: property, in: target) != nil else { break search }
                // An inferred step that adds it (again, after a step dropped it) gives every object its default.
                if step.isInferred {
                    if step.adds(property, to: entity) {
                        found = "no mapping file: the inferred \(at) adds it, to its default or nil (the values before it are not carried)"
                        break search
                    }
                    throughInferred = true
                    continue
                }
                let mappings = step.allPasses.flatMap(\.entityMappings).filter { $0.destination == entity }
                let place = { (location: FileLocation?, mapping: EntityMapping) in location.map { "\($0)" } ?? "the mapping \(mapping.name)" }
                // Every mapping of the step that makes the entity's objects (a merge has several).
                var passedOn: [String] = []
                for mapping in mappings {
                    guard let written = (mapping.attributes + mapping.relationships).first(where: { $0.name == property }) else { continue }
                    if mapping.policy == nil, written.expression.text.trimmingCharacters(in: .whitespaces) == ExpressionLiteral.sourceKey(property) {
                        passedOn.append("\(place(written.location, mapping)) (\(at))")
                        continue
                    }
                    found = "\(place(written.location, mapping)) (\(at))" + (mapping.policy.map { ", and \(mapping.name)'s policy \($0) may change it" } ?? "")
                    break search
                }
                if !passedOn.isEmpty { carried += passedOn; continue }
                if let policied = mappings.first(where: { $0.policy != nil }), let policy = policied.policy {
                    found = "\(policied.name)'s policy \(policy), if anything (\(at): no expression of the mapping sets it)"
                    break search
                }
                // A copy mapping carries it over from the step before; any other leaves it unset.
                if let unset = mappings.first(where: { $0.type != .copy }) {
                    found = "no expression: \(place(unset.location, unset)) (\(at)) leaves it unset, to its default or nil"
                    break search
                }
            }
            let after = carried.isEmpty ? "" : "; carried over after it by " + carried.reversed().joined(separator: ", ")
            // Back to the fixture: by the mappings that carry it over, and the inferred steps, if any.
            let carriers = [carried.isEmpty ? nil : "carried over by " + carried.reversed().joined(separator: ", "),
                            throughInferred || carried.isEmpty ? "the inferred steps carry it" : nil].compactMap { $0 }.joined(separator: ", and ")
            lines.append("\(entity).\(property) is last computed by "
                         + (found.map { $0 + after } ?? "no mapping file of this run: \(carriers) from the fixture" + (throughInferred || carried.isEmpty ? " (or fill it with its default)" : "")))
        }
        return lines
    }

    /// "expected X, got Y" for two values of a case; where either is long (a picture's base64, a
    /// long text), each is shown shortened: two texts around the first character where they
    /// differ (counted in the text, not in its JSON), with their lengths; any other value whole
    /// when short, else with its length.
    static func contrast(_ expected: JSONValue?, _ actual: JSONValue?, longerThan limit: Int = 100) -> String {
        let want = expected?.serialized() ?? "nothing", have = actual?.serialized() ?? "nothing"
        guard want.count > limit || have.count > limit else {
            guard case .string(let wantText)? = expected, case .string(let haveText)? = actual, let unseen = unseenDifference(wantText, haveText) else {
                return "expected \(want), got \(have)"
            }
            return "expected \(want), got \(have) (\(unseen))"
        }
        guard case .string(let wantText)? = expected, case .string(let haveText)? = actual else {
            func shown(_ value: JSONValue?, _ serialized: String) -> String {
                guard serialized.count > limit else { return serialized }
                if case .string(let text)? = value { return JSONValue.string(String(text.prefix(limit * 3 / 4))).serialized().dropLast() + "…\" (\(text.count) characters)" }
                return String(serialized.prefix(limit * 3 / 4)) + "… (\(serialized.count) characters)"
            }
            return "expected \(shown(expected, want)), got \(shown(actual, have))"
        }
        let wantCharacters = Array(wantText), haveCharacters = Array(haveText)
        var first = 0
        // By Unicode scalars, as the values were compared: é and e + accent are one character to
        // Swift's `==`, but two values.
        while first < min(wantCharacters.count, haveCharacters.count),
              wantCharacters[first].unicodeScalars.elementsEqual(haveCharacters[first].unicodeScalars) { first += 1 }
        func window(_ characters: [Character]) -> String {
            let start = max(0, first - 20), end = min(characters.count, first + 20)
            let inner = JSONValue.string(String(characters[start..<end])).serialized().dropFirst().dropLast()
            return "\"" + (start > 0 ? "…" : "") + inner + (end < characters.count ? "…" : "") + "\""
        }
        let lengths = wantCharacters.count == haveCharacters.count ? "\(wantCharacters.count) characters each" : "\(wantCharacters.count) characters against \(haveCharacters.count)"
        let unseen = first < min(wantCharacters.count, haveCharacters.count) && wantCharacters[first] == haveCharacters[first]
            ? ", written " + scalars(wantCharacters[first]) + " against " + scalars(haveCharacters[first]) : ""
        return "expected \(window(wantCharacters)), got \(window(haveCharacters)) (\(lengths); they first differ at character \(first + 1)\(unseen))"
    }

    /// For two texts that read alike but are written with other Unicode scalars ("é" as one, and
    /// "e" with a combining accent): where and how, since no eye sees it in the values shown.
    static func unseenDifference(_ expected: String, _ actual: String) -> String? {
        guard expected == actual, !expected.isExactly(actual) else { return nil }
        let want = Array(expected), have = Array(actual)
        guard let first = want.indices.first(where: { !want[$0].unicodeScalars.elementsEqual(have[$0].unicodeScalars) }) else { return nil }
        return "they read alike but differ at character \(first + 1), written \(scalars(want[first])) against \(scalars(have[first]))"
    }

    /// A character's Unicode scalars, as `U+0065 U+0301`.
    private static func scalars(_ character: Character) -> String { String(character).scalarCodes }

    /// Whether two values are one value in the store: what it would hold for each is the same
    /// (a NaN is one value; -0.0 is 0, as SQLite keeps no sign of zero).
    static func sameStored(_ first: Value, _ second: Value, as type: AttributeType, in store: Store) -> Bool {
        if first == .null || second == .null { return first == second }
        switch (store.strategy.encode(first, as: type).storage, store.strategy.encode(second, as: type).storage) {
        case (.null, .null): return true
        case (.int64(let a), .int64(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.blob(let a), .blob(let b)): return a == b
        default: return false
        }
    }
}
