import Foundation
internal import GRDB

/// How a declarative mapping's destination keys follow from its source keys: `destination =
/// source + offset`, every key of `range` in `table` set aside for the mapping. Mappings that
/// read different entities of one source table into one destination table share an offset of
/// 0 and one range: they keep the source's keys (as Core Data's lightweight migration keeps
/// `Z_PK`), and a destination key still has one source object, whose entity tells the mapping.
struct KeyRule {
    /// The source table the mapping reads.
    var sourceTable: String
    /// The entities of the source table it reads, and their discriminators.
    var sourceEntities: [String]
    var sourceDiscriminators: [DatabaseValue]
    /// The destination table its objects go to.
    var table: String
    var offset: Int64
    /// The destination keys set aside for it.
    var range: ClosedRange<Int64>
    /// The destination entity of its objects.
    var entity: String
    /// Whether every object of its source entities has an object of the mapping (no filter,
    /// no fetch): then `source key + offset` is an object's key without looking.
    var isComplete: Bool

    /// The destination key of the object made from the source object under `key`, when it falls
    /// in the rule's range.
    func destinationKey(ofSource key: Int64) -> Int64? {
        let (sum, overflow) = key.addingReportingOverflow(offset)
        return overflow || !range.contains(sum) ? nil : sum
    }
}

/// The key rules of a run's declarative mappings, by mapping position, and the arithmetic that
/// decides them: a value the run keeps, given what it read of the source's keys.
struct KeyRules {
    private var rules: [Int: KeyRule] = [:]
    /// Per destination table whose mappings keep their source keys: the source table, the
    /// entities read so far and the range set aside.
    private var keptKeys: [String: (sourceTable: String, entities: Set<String>, range: ClosedRange<Int64>)] = [:]

    /// The rule of the mapping at a position, once it has started.
    subscript(index: Int) -> KeyRule? { rules[index] }

    /// Records a mapping's rule as it starts.
    mutating func start(_ rule: KeyRule, for index: Int) {
        rules[index] = rule
    }

    /// The rules whose ranges hold a key of a destination table (several when they share one).
    func holding(_ key: Int64, inTable table: String) -> [(index: Int, rule: KeyRule)] {
        rules.filter { $0.value.table == table && $0.value.range.contains(key) }.map { ($0.key, $0.value) }
    }

    /// What a mapping reads of the source, as far as its keys go.
    struct Source {
        /// The source table and the entities of it the mapping reads, with their discriminators.
        var table: String
        var entities: [String]
        var discriminators: [DatabaseValue]
        /// The table's smallest and largest keys.
        var keys: ClosedRange<Int64>
        /// The rows of the table, and those of the entity the mapping reads (asked only when keys
        /// are numbered rather than kept).
        var counts: () throws -> (total: Int64, read: Int64)?
    }

    /// Decides the rule of a mapping reading `source` into `entity` objects of `table`, whose first
    /// free key `firstFree` gives (asked only when needed: a table whose highest key is the
    /// largest there is has none, which a mapping sharing kept keys does not need). Kept keys
    /// (`keepsKeys`, an inferred step) stay where they are free, zero and negative keys too (a
    /// table with nothing in it yet has every key free), and otherwise move to a range of their own. Numbered keys go from the first free key in
    /// creation order, and follow a rule only where that numbering is arithmetic: the mapping reads
    /// every row of a source table whose keys have no gaps. Nil where no rule holds or keys would
    /// not fit in 64 bits: the mapping's objects then record associations.
    mutating func decide(_ source: Source, into table: String, entity: String, firstFree: () throws -> Int64, keepsKeys: Bool, isComplete: Bool) throws -> KeyRule? {
        let low = source.keys.lowerBound, high = source.keys.upperBound
        func rule(offset: Int64, range: ClosedRange<Int64>) -> KeyRule {
            KeyRule(sourceTable: source.table, sourceEntities: source.entities, sourceDiscriminators: source.discriminators, table: table,
                    offset: offset, range: range, entity: entity, isComplete: isComplete)
        }
        if !keepsKeys {
            let first = try firstFree()
            guard let counts = try source.counts(), counts.total == counts.read, high.subtractingReportingOverflow(low) == (counts.total - 1, false) else { return nil }
            let (offset, o1) = first.subtractingReportingOverflow(low)
            let (last, o2) = high.addingReportingOverflow(offset)
            guard !o1, !o2 else { return nil }
            return rule(offset: offset, range: first...last)
        }
        if let shared = keptKeys[table], shared.sourceTable == source.table, shared.entities.isDisjoint(with: source.entities) {
            // Another entity of the same source table: its keys are free in the shared range.
            keptKeys[table]?.entities.formUnion(source.entities)
            return rule(offset: 0, range: shared.range)
        }
        let first = try firstFree()
        // The first free key is 1 in a table nothing has been written to (nor set aside: keys
        // below 1 are only ever kept ones, which `keptKeys` records).
        if keptKeys[table] == nil, first <= low || first == 1 {
            // The source's keys are all free here: keep them.
            keptKeys[table] = (source.table, Set(source.entities), low...high)
            return rule(offset: 0, range: low...high)
        }
        let (offset, o1) = first.subtractingReportingOverflow(low)
        guard !o1 else { return nil }
        let (last, o2) = high.addingReportingOverflow(offset)
        guard !o2 else { return nil }
        // A range of its own, above every key set aside or handed out in the table so far.
        return rule(offset: offset, range: first...last)
    }
}
