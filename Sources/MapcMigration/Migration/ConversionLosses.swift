import Foundation
internal import GRDB
import MapcFoundation
import MapcModel
import MapcStore

/// What an inferred step's conversions between number types change in a store. Core Data's
/// lightweight migration converts a number to the new type in silence (an int64 past 2^53 made a
/// double loses its last digits); `plan` says what a conversion can cost, and a run says what it
/// does cost: for each attribute converted where values may change, how many of the store's
/// values do, exactly (`Value.compare`), and the first of them, by object.
enum ConversionLosses {
    /// A note for each attribute of the step whose conversion changes some of the store's
    /// values; none for a step written in a mapping file (its expressions are the user's).
    static func notes(of step: MigrationStep, in store: Store) throws -> [String] {
        guard let origins = step.inferredOrigins else { return [] }
        var notes: [String] = []
        for (destinationEntity, properties) in origins.properties.sorted(by: { $0.key < $1.key }) {
            guard let sourceEntity = origins.entities[destinationEntity] else { continue }
            for (name, origin) in properties.sorted(by: { $0.key < $1.key }) {
                guard case .carried(let from, let change?, _, _) = origin, !ValueRules.isLossless(from: change.from, to: change.to),
                      ValueRules.numericConversionCaution(from: change.from, to: change.to) != nil else { continue }
                if let note = try changes(of: from, of: sourceEntity, from: change.from, to: change.to, in: store) {
                    notes.append("\(destinationEntity).\(name) (\(change.from.rawValue) -> \(change.to.rawValue)): the conversion changes \(note)")
                }
            }
        }
        return notes
    }

    /// "1 of 2 values (Rec 'r1': 9007199254740993 becomes 9007199254740992)", or nil when the
    /// conversion changes none. A value the new type cannot hold at all is the run's to refuse.
    private static func changes(of attribute: String, of entity: String, from: AttributeType, to: AttributeType, in store: Store) throws -> String? {
        let storage = try store.layout.storage(of: entity)
        guard let column = storage.attributeColumns[attribute] else { return nil }
        let columns = [storage.primaryKey] + (storage.idColumn.map { [$0] } ?? []) + [column]
        let sql = "SELECT \(columns.map(\.quotedSQLIdentifier).joined(separator: ", ")) FROM \(storage.table.quotedSQLIdentifier) "
            + "WHERE \(storage.entityColumn.quotedSQLIdentifier) = ? AND \(column.quotedSQLIdentifier) IS NOT NULL ORDER BY \(storage.primaryKey.quotedSQLIdentifier)"
        var (count, changed) = (0, 0)
        var first: String?
        try store.database.read { db in
            let rows = try Row.fetchCursor(db, sql: sql, arguments: [storage.discriminator])
            while let row = try rows.next() {
                count += 1
                guard let value = try? store.strategy.decode(row[columns.count - 1], as: from),
                      case .success(let converted) = ValueRules.coerce(value, to: to) else { continue }
                let before = shown(value, as: from), after = shown(converted, as: to)
                // Changed when neither the number nor what `dump` shows of it is the same: a decimal's
                // 0.1 made a double still shows 0.1, a double 2^40 made a float is still 2^40 (if
                // shown 1.0995116e+12); a float's 0.1 made a decimal is 0.10000000149011612.
                let same = Value.compare(value, converted) == .orderedSame || before.decimal.flatMap { b in after.decimal.map { b == $0 } } == true
                guard !same else { continue }
                changed += 1
                // Read as values that may be damaged: GRDB's plain subscripts trap on a cell they cannot convert.
                if first == nil, let key: Int64 = try row.storedIfPresent(0, "a row key") {
                    let stored: String? = storage.idColumn == nil ? nil : try row.storedIfPresent(1, "an object id")
                    first = "\(entity) '\(store.strategy.objectID(entity: entity, key: key, stored: stored))': \(before.text) becomes \(after.text)"
                }
            }
        }
        guard changed > 0, let first else { return nil }
        return "\(changed) of \(English.count(count, "value")) (\(first))"
    }

    /// A number as `dump` writes a value of `type`, and the decimal that text is (nil for none:
    /// an infinity, or a double beyond a decimal's range).
    private static func shown(_ value: Value, as type: AttributeType) -> (text: String, decimal: Decimal?) {
        let json = DataFile.json(value, type: type)
        let text: String = if case .string(let written) = json { written } else { json.serialized() }
        guard case .success(.decimal(let decimal)) = ValueParser.parse(text, as: .decimal) else { return (text, nil) }
        return (text, decimal)
    }
}
