import Foundation
import MapcKit

extension Store {
    /// Whether the store's objects are known by their keys (a Core Data store's `Entity/pN`),
    /// not by identities of their own: then ids name rows, which a migration may number anew.
    var identifiesObjectsByKey: Bool { layout.entities.values.allSatisfy { $0.idColumn == nil } }
}

extension ExpectedData {
    /// Every object of one side, by id.
    private static func allObjects(_ side: [String: [ExactText: ObjectData]]) -> [ExactText: ObjectData] {
        var all: [ExactText: ObjectData] = [:]
        for group in side.values { all.merge(group) { first, _ in first } }
        return all
    }

    /// Each object known by its entity and every stored attribute as the store holds it
    /// (`sameStored`'s terms), its links aside; each entity's attributes listed once.
    private static func valueSignatures(_ objects: [ExactText: ObjectData], store: Store) -> [ExactText: Int] {
        var attributes: [String: [Attribute]] = [:]
        return objects.mapValues { object in
            var hasher = Hasher()
            hasher.combine(object.entity)
            let listed = attributes[object.entity] ?? (store.schema.entity(named: object.entity).map { store.schema.allAttributes(of: $0) } ?? [])
                .filter { !$0.isTransient }.sorted { $0.name < $1.name }
            attributes[object.entity] = listed
            for attribute in listed {
                let value = object.attributes[attribute.name] ?? .null
                switch value == .null ? .null : store.strategy.encode(value, as: attribute.type).storage {
                case .null: hasher.combine(0)
                case .int64(let number): hasher.combine(1); hasher.combine(number)
                case .double(let number): hasher.combine(2); hasher.combine(number.isNaN ? Double.nan.bitPattern : number == 0 ? 0 : number.bitPattern)
                case .string(let text): hasher.combine(3); hasher.combine(Array(text.utf8))
                case .blob(let bytes): hasher.combine(4); hasher.combine(bytes)
                }
            }
            return hasher.finalize()
        }
    }

    /// The relationships of each entity every expected object lists (one an expected file leaves
    /// out is derived from its inverse, so not compared), by name.
    private static func comparedRelationships(_ wanted: [String: [ExactText: ObjectData]], store: Store) -> [String: [Relationship]] {
        var relationships: [String: [Relationship]] = [:]
        for entity in store.schema.entities {
            let listed = (wanted[entity.name] ?? [:]).values
            relationships[entity.name] = store.schema.allRelationships(of: entity).filter { relationship in
                !relationship.isTransient && listed.allSatisfy { $0.relationships[relationship.name] != nil }
            }.sorted { $0.name < $1.name }
        }
        return relationships
    }

    /// Both sides' classes refined by the classes of the objects each object relates to, round
    /// after round, until they stop splitting.
    private static func settled(_ left: [ExactText: Int], _ right: [ExactText: Int], _ expected: [ExactText: ObjectData], _ actual: [ExactText: ObjectData],
                                _ relationships: [String: [Relationship]]) -> ([ExactText: Int], [ExactText: Int]) {
        /// A round: each object's class and the classes of the objects it relates to.
        func refined(_ classes: [ExactText: Int], _ side: [ExactText: ObjectData]) -> [ExactText: Int] {
            classes.merging(side.map { id, object in
                var hasher = Hasher()
                hasher.combine(classes[id])
                for relationship in relationships[object.entity] ?? [] {
                    var related = (object.relationships[relationship.name] ?? []).map { classes[ExactText($0)] ?? 0 }
                    if !relationship.isOrdered { related.sort() }
                    hasher.combine(relationship.name)
                    hasher.combine(related)
                }
                return (id, hasher.finalize())
            }) { _, new in new }
        }
        func classCount(_ classes: [ExactText: Int]) -> Int { Set(classes.values).count }
        var (left, right) = (left, right)
        for _ in 0..<32 {
            let (nextLeft, nextRight) = (refined(left, expected), refined(right, actual))
            let stable = classCount(nextLeft) == classCount(left) && classCount(nextRight) == classCount(right)
            (left, right) = (nextLeft, nextRight)
            if stable { break }
        }
        return (left, right)
    }

    /// Where the two sides do not match one to one, each expected object paired with a stored one
    /// so that a comparison shows the values that differ rather than every object by id: objects
    /// alike in values and links first, then alike in values, a pair at a time in id order, then
    /// each one left with the stored object of its entity closest in value (the most attributes
    /// equal). The expected objects renamed to the stored ids they pair with, and by stored id the
    /// file's id it was paired with.
    static func pairedByValue(_ wanted: [String: [ExactText: ObjectData]], _ got: [String: [ExactText: ObjectData]],
                              store: Store) -> (renamed: [String: [ExactText: ObjectData]], fileIDs: [String: String]) {
        let expected = allObjects(wanted), actual = allObjects(got)
        let plainLeft = valueSignatures(expected, store: store), plainRight = valueSignatures(actual, store: store)
        let (left, right) = settled(plainLeft, plainRight, expected, actual, comparedRelationships(wanted, store: store))
        var renaming: [ExactText: String] = [:]
        var unpairedLeft = Set(expected.keys), unpairedRight = Set(actual.keys)
        func pair(_ leftClasses: [ExactText: Int], _ rightClasses: [ExactText: Int]) {
            let others = Dictionary(grouping: unpairedRight, by: { rightClasses[$0] ?? 0 })
            for (signature, ids) in Dictionary(grouping: unpairedLeft, by: { leftClasses[$0] ?? 0 }) {
                for (from, to) in zip(ids.sorted(), (others[signature] ?? []).sorted()) {
                    renaming[from] = to.text
                    unpairedLeft.remove(from)
                    unpairedRight.remove(to)
                }
            }
        }
        pair(left, right)
        pair(plainLeft, plainRight)
        // The closest in value, within a bound of comparisons (a store that differs in every
        // object is said by id past it).
        var candidates = Dictionary(grouping: unpairedRight.sorted(), by: { actual[$0]?.entity ?? "" })
        var comparisons = 2_000_000
        for id in unpairedLeft.sorted() {
            guard let object = expected[id], let entity = store.schema.entity(named: object.entity), var pool = candidates[object.entity], !pool.isEmpty else { continue }
            let attributes = store.schema.allAttributes(of: entity).filter { !$0.isTransient }
            var best: (index: Int, score: Int)?
            for (index, other) in pool.enumerated() {
                comparisons -= attributes.count
                guard comparisons > 0, let stored = actual[other] else { break }
                let score = attributes.count { sameStored(object.attributes[$0.name] ?? .null, stored.attributes[$0.name] ?? .null, as: $0.type, in: store) }
                if best.map({ score > $0.score }) ?? true { best = (index, score) }
            }
            guard let best else { continue }
            renaming[id] = pool.remove(at: best.index).text
            candidates[object.entity] = pool
        }
        // An expected object paired with none (the store has fewer, or the bound was reached)
        // keeps its id, unless a stored object paired with another has it: it is then said as
        // unpaired, never two objects under one id.
        let taken = Set(renaming.values.map(ExactText.init))
        for id in expected.keys where renaming[id] == nil && taken.contains(id) { renaming[id] = id.text + " (unpaired)" }
        let renamed = wanted.mapValues { group in
            Dictionary(group.map { id, object in
                var renamed = object
                renamed.id = renaming[id] ?? object.id
                renamed.relationships = object.relationships.mapValues { $0.map { renaming[ExactText($0)] ?? $0 } }
                return (ExactText(renamed.id), renamed)
            }, uniquingKeysWith: { first, _ in first })
        }
        var fileIDs: [String: String] = [:]
        for (from, to) in renaming where from.text != to && to != from.text + " (unpaired)" { fileIDs[to] = from.text }
        return (renamed, fileIDs)
    }

    /// The objects of each side with no counterpart of the same entity and values on the other
    /// (more of their kind on one side), a few of each: where a store numbered otherwise differs,
    /// when its differences by id name every object.
    static func unmatchedByValue(_ wanted: [String: [ExactText: ObjectData]], _ got: [String: [ExactText: ObjectData]], store: Store,
                                 limit: Int = 5) -> (expected: [String], actual: [String]) {
        let expected = valueSignatures(allObjects(wanted), store: store), actual = valueSignatures(allObjects(got), store: store)
        let expectedCounts = Dictionary(grouping: expected.values, by: { $0 }).mapValues(\.count)
        let actualCounts = Dictionary(grouping: actual.values, by: { $0 }).mapValues(\.count)
        func unmatched(_ side: [ExactText: Int], _ own: [Int: Int], _ other: [Int: Int]) -> [String] {
            side.filter { (own[$0.value] ?? 0) > (other[$0.value] ?? 0) }.keys.sorted().prefix(limit).map(\.text)
        }
        return (unmatched(expected, expectedCounts, actualCounts), unmatched(actual, actualCounts, expectedCounts))
    }

    /// The expected objects renamed to the store's ids where both sides' objects match one to
    /// one by value: each object known by its entity and attribute values, refined by the
    /// objects it relates to (and they by theirs) until the classes stop splitting; objects alike
    /// in every respect set apart a pair at a time (one of each side) and the rest refined again,
    /// so that their links pair as they are. Nil when some class holds more objects on one side
    /// than the other: then no renaming makes the two sides one.
    ///
    /// Only renames: the caller compares again, so a match that is wrong can only fail.
    static func matchedByValue(_ wanted: [String: [ExactText: ObjectData]], _ got: [String: [ExactText: ObjectData]],
                               store: Store) -> [String: [ExactText: ObjectData]]? {
        let relationships = comparedRelationships(wanted, store: store)
        let expected = allObjects(wanted), actual = allObjects(got)
        guard expected.count == actual.count else { return nil }
        var left = valueSignatures(expected, store: store), right = valueSignatures(actual, store: store)
        func settle() { (left, right) = settled(left, right, expected, actual, relationships) }
        settle()
        // Alike objects left in one class (two identical notes, each with an identical
        // attachment): paired by id, one class apart from the others, their links could pair
        // crosswise. One of each side is set apart, as a pair, and the rest refined again, until
        // every class holds one object of each side (or a bound, past which ids pair the rest).
        for round in 0..<1_000 {
            let leftClasses = Dictionary(grouping: left.keys, by: { left[$0] ?? 0 }), rightClasses = Dictionary(grouping: right.keys, by: { right[$0] ?? 0 })
            for (signature, ids) in leftClasses where rightClasses[signature]?.count != ids.count { return nil }
            guard let (signature, ids) = leftClasses.filter({ $0.value.count > 1 }).min(by: { ($0.value.count, $0.key) < ($1.value.count, $1.key) }),
                  let first = ids.min(), let other = rightClasses[signature]?.min() else { break }
            var hasher = Hasher()
            hasher.combine(signature)
            hasher.combine(round)
            let apart = hasher.finalize()
            (left[first], right[other]) = (apart, apart)
            settle()
        }
        let leftClasses = Dictionary(grouping: left.keys, by: { left[$0] ?? 0 }), rightClasses = Dictionary(grouping: right.keys, by: { right[$0] ?? 0 })
        var renaming: [ExactText: String] = [:]
        for (signature, ids) in leftClasses {
            guard let others = rightClasses[signature], others.count == ids.count else { return nil }
            for (from, to) in zip(ids.sorted(), others.sorted()) { renaming[from] = to.text }
        }
        return wanted.mapValues { group in
            Dictionary(uniqueKeysWithValues: group.map { id, object in
                var renamed = object
                renamed.id = renaming[id] ?? object.id
                renamed.relationships = object.relationships.mapValues { $0.map { renaming[ExactText($0)] ?? $0 } }
                return (ExactText(renamed.id), renamed)
            })
        }
    }
}
