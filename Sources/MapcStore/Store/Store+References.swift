import Foundation
internal import GRDB
import MapcFoundation
import MapcModel

/// References in a store that lead nowhere: a to-one key, or a join table's row, naming no object
/// of the relationship's destination (a missing row, a row of another entity, a key that is not
/// a whole number). An app reading such a reference finds nothing (Core Data raises when it fires
/// the fault); a migration can only make it nil, so it is found before one does.
extension Store {
    /// What `danglingReferences` found: how many, and a few examples in words.
    package struct DanglingReferences: Sendable {
        package var count = 0
        package var examples: [String] = []
        /// In a sentence, for errors and notes.
        package var described: String {
            "\(English.count(count, "reference")) to no object (\(listed))"
        }
        /// The examples in a list, "…" marking that more were found than are shown.
        package var listed: String {
            examples.joined(separator: "; ") + (count > examples.count ? "; …" : "")
        }
    }

    /// The store's references that lead nowhere, with up to `examples` of them described.
    package func danglingReferences(examples limit: Int = 3) throws -> DanglingReferences {
        var found = DanglingReferences()
        try database.read { db in
            for entity in schema.entities where !entity.isAbstract {
                let storage = try layout.storage(of: entity.name)
                let table = storage.table.quotedSQLIdentifier
                let key = "t.\(storage.primaryKey.quotedSQLIdentifier)"
                let own = "t.\(storage.entityColumn.quotedSQLIdentifier) = \(Self.sqlLiteral(storage.discriminator))"
                let identity = storage.idColumn.map { "t.\($0.quotedSQLIdentifier)" } ?? "NULL"
                for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
                    guard let kept = storage.relationships[relationship.name], let destination = layout.entities[relationship.destination] else { continue }
                    let allowed = destination.discriminatorsSQL
                    let missing = { (column: String, destinationTable: String) in
                        "NOT EXISTS (SELECT 1 FROM \(destinationTable.quotedSQLIdentifier) d WHERE d.\(destination.primaryKey.quotedSQLIdentifier) = \(column) "
                            + "AND \(StoreLayout.entityCheck("d.\(destination.entityColumn.quotedSQLIdentifier)", allowed: allowed)))"
                    }
                    let sql: String
                    switch kept {
                    case .foreignKey(let columnName, let destinationTable, _):
                        let column = "t.\(columnName.quotedSQLIdentifier)"
                        sql = "SELECT \(key), \(identity), \(column) FROM \(table) t WHERE \(own) AND \(column) IS NOT NULL AND \(missing(column, destinationTable))"
                    case .joinTable(let joinTable, let ownerColumn, let otherColumn, _, _, let destinationTable, _):
                        // A row whose owner is gone loses nothing anyone reads; one whose other end is gone does.
                        let other = "j.\(otherColumn.quotedSQLIdentifier)"
                        sql = "SELECT \(key), \(identity), \(other) FROM \(joinTable.quotedSQLIdentifier) j JOIN \(table) t ON \(key) = j.\(ownerColumn.quotedSQLIdentifier) "
                            + "WHERE \(own) AND \(missing(other, destinationTable))"
                    case .inverseForeignKey:
                        // The destination's key column: its own relationship's check, or (a hidden
                        // key of a to-many without an inverse) a row whose owner is gone.
                        continue
                    }
                    let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(sql))") ?? 0
                    guard count > 0 else { continue }
                    found.count += count
                    for row in try Row.fetchAll(db, sql: sql + " LIMIT \(max(0, limit - found.examples.count))") {
                        let stored = String.fromDatabaseValue(row[1] as DatabaseValue)
                        let object = Int64.fromDatabaseValue(row[0] as DatabaseValue).map { strategy.objectID(entity: entity.name, key: $0, stored: stored) } ?? "?"
                        found.examples.append("\(entity.name) '\(object)', \(relationship.name): key \(StoreValidator.text(row[2] as DatabaseValue)) is no \(relationship.destination)")
                    }
                }
            }
            // A to-many without an inverse is kept as a hidden key on its destination's rows
            // (`Z2TAGS`), naming the owner: one naming no object of the owner's entity drops the
            // object from every list. Checked once, at the entity declaring it (abstract or not).
            for entity in schema.entities {
                for relationship in entity.relationships where !relationship.isTransient {
                    guard case .inverseForeignKey(let destinationTable, let columnName, _, let members)? = layout.entities[entity.name]?.relationships[relationship.name],
                          schema.mutualInverse(of: relationship) == nil, !members.isEmpty,
                          let owner = layout.entities[entity.name], let destination = layout.entities[relationship.destination] else { continue }
                    let held = "d.\(columnName.quotedSQLIdentifier)", kind = "d.\(destination.entityColumn.quotedSQLIdentifier)"
                    let identity = destination.idColumn.map { "d.\($0.quotedSQLIdentifier)" } ?? "NULL"
                    let sql = "SELECT d.\(destination.primaryKey.quotedSQLIdentifier), \(identity), \(held), \(kind) FROM \(destinationTable.quotedSQLIdentifier) d "
                        + "WHERE \(kind) IN (\(members.map(Self.sqlLiteral).joined(separator: ", "))) AND \(held) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(owner.table.quotedSQLIdentifier) t "
                        + "WHERE t.\(owner.primaryKey.quotedSQLIdentifier) = \(held) AND \(StoreLayout.entityCheck("t.\(owner.entityColumn.quotedSQLIdentifier)", allowed: owner.discriminatorsSQL)))"
                    let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(sql))") ?? 0
                    guard count > 0 else { continue }
                    found.count += count
                    for row in try Row.fetchAll(db, sql: sql + " LIMIT \(max(0, limit - found.examples.count))") {
                        let heldEntity = layout.entity(withDiscriminator: row[3] as DatabaseValue, inTable: destinationTable) ?? relationship.destination
                        let object = Int64.fromDatabaseValue(row[0] as DatabaseValue).map { strategy.objectID(entity: heldEntity, key: $0, stored: String.fromDatabaseValue(row[1] as DatabaseValue)) } ?? "?"
                        found.examples.append("\(heldEntity) '\(object)' is in the \(relationship.name) of \(entity.name) key \(StoreValidator.text(row[2] as DatabaseValue)), which is no \(entity.name)")
                    }
                }
            }
        }
        return found
    }

    /// To-one keys whose destination-entity column (Core Data's `Z5_OWNER`) names another entity
    /// than the object the key names (a writer that set the key alone): Core Data makes the
    /// reference's fault of the entity the column names, which fails or finds another object. A
    /// migration reads the object by its key, and the migrated store's column names its entity.
    package func disagreeingDestinationEntities(examples limit: Int = 3) throws -> DanglingReferences {
        var found = DanglingReferences()
        try database.read { db in
            for derived in layout.derivedColumns {
                // The to-one this column follows, on one of its table's entities.
                let owners = layout.members(ofTable: derived.table).compactMap { storage in
                    storage.relationships.first { _, kept in
                        if case .foreignKey(let column, _, _) = kept { return column == derived.foreignKey }
                        return false
                    }.map { (storage, $0.key) }
                }
                guard let (owner, relationship) = owners.first, let ownerEntity = schema.entity(named: owner.entity), let destinationName = schema.allRelationships(of: ownerEntity).first(where: { $0.name == relationship })?.destination,
                      let destination = layout.entities[destinationName] else { continue }
                let column = "t.\(derived.column.quotedSQLIdentifier)", kind = "d.\(destination.entityColumn.quotedSQLIdentifier)"
                let sql = "SELECT t.\(owner.primaryKey.quotedSQLIdentifier), t.\(owner.entityColumn.quotedSQLIdentifier), \(column), t.\(derived.foreignKey.quotedSQLIdentifier), \(kind) "
                    + "FROM \(derived.table.quotedSQLIdentifier) t JOIN \(derived.destinationTable.quotedSQLIdentifier) d ON d.\(destination.primaryKey.quotedSQLIdentifier) = t.\(derived.foreignKey.quotedSQLIdentifier) "
                    + "WHERE \(column) IS NOT NULL AND \(column) IS NOT \(kind) AND \(StoreLayout.entityCheck(kind, allowed: destination.discriminatorsSQL))"
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(sql))") ?? 0
                guard count > 0 else { continue }
                found.count += count
                for row in try Row.fetchAll(db, sql: sql + " LIMIT \(max(0, limit - found.examples.count))") {
                    let entity = layout.entity(withDiscriminator: row[1] as DatabaseValue, inTable: derived.table) ?? owner.entity
                    let object = Int64.fromDatabaseValue(row[0] as DatabaseValue).map { strategy.objectID(entity: entity, key: $0, stored: nil) } ?? "?"
                    let said = layout.entity(withDiscriminator: row[2] as DatabaseValue, inTable: derived.destinationTable) ?? "entity number \(StoreValidator.text(row[2] as DatabaseValue))"
                    let held = layout.entity(withDiscriminator: row[4] as DatabaseValue, inTable: derived.destinationTable) ?? destinationName
                    found.examples.append("\(entity) '\(object)', \(relationship): \(derived.table).\(derived.column) says \(said), key \(StoreValidator.text(row[3] as DatabaseValue)) is \(English.withArticle(held))")
                }
            }
        }
        return found
    }

    /// Values in a hierarchy table's columns on rows of an entity that has no such column (a
    /// Continent's `ZNUMBEROFCOUNTRIES` filled on a Country's row, by a batch update or another
    /// writer): no app reads them (Core Data reads a row's own entity's columns), and a migration,
    /// which carries each object's own properties, leaves them out. How many values, and each
    /// column holding some, in words (a table's columns are few: all of them).
    package func valuesOfOtherEntities() throws -> (values: Int, columns: [String]) {
        var found: (values: Int, columns: [String]) = (0, [])
        try database.read { db in
            for (table, members) in layout.entityTables where members.count > 1 {
                guard let kindColumn = members.first?.entityColumn else { continue }
                // Each column of the table, with the entities whose rows may hold it.
                var owners: [String: [EntityStorage]] = [:]
                for member in members {
                    var columns = Set(member.attributeColumns.values)
                    for case .foreignKey(let column, _, let order) in member.relationships.values {
                        columns.insert(column)
                        if let order { columns.insert(order) }
                    }
                    for column in columns { owners[column, default: []].append(member) }
                }
                let kind = kindColumn.quotedSQLIdentifier
                let shared = owners.filter { $0.value.count < members.count }.sorted { $0.key < $1.key }
                guard !shared.isEmpty else { continue }
                let sums = shared.map { column, holders in
                    "total(\(column.quotedSQLIdentifier) IS NOT NULL AND \(kind) NOT IN (\(holders.map { Self.sqlLiteral($0.discriminator) }.joined(separator: ", "))))"
                }
                guard let row = try Row.fetchOne(db, sql: "SELECT \(sums.joined(separator: ", ")) FROM \(table.quotedSQLIdentifier)") else { continue }
                for (index, (column, holders)) in shared.enumerated() {
                    let count = Int(Double.fromDatabaseValue(row[index] as DatabaseValue) ?? 0)
                    guard count > 0 else { continue }
                    found.values += count
                    found.columns.append("\(table).\(column), \(holders.map(\.entity).sorted().joined(separator: " and "))'s, filled on \(English.count(count, "row")) of another entity")
                }
            }
        }
        return found
    }

    /// The values of attributes kept in Core Data's external form that name a file missing from
    /// the store's external data folder (a backup taken without the hidden support folder): the
    /// app finds no data there. Only rows whose value is a file reference are read.
    package func missingExternalFiles(in files: CoreDataExternalData, examples limit: Int = 3) throws -> DanglingReferences {
        var found = DanglingReferences()
        try database.read { db in
            for entity in schema.entities where !entity.isAbstract {
                let marked = schema.allAttributes(of: entity).filter { !$0.isTransient && CoreDataExternalValue.isMarked($0, in: format) }
                guard !marked.isEmpty else { continue }
                let storage = try layout.storage(of: entity.name)
                let identity = storage.idColumn.map(\.quotedSQLIdentifier) ?? "NULL"
                for attribute in marked {
                    guard let column = storage.attributeColumns[attribute.name]?.quotedSQLIdentifier else { continue }
                    let rows = try Row.fetchCursor(db, sql: "SELECT \(storage.primaryKey.quotedSQLIdentifier), \(identity), \(column) FROM \(storage.table.quotedSQLIdentifier) "
                                                       + "WHERE \(storage.entityColumn.quotedSQLIdentifier) = \(Self.sqlLiteral(storage.discriminator)) AND substr(\(column), 1, 1) = x'02'")
                    while let row = try rows.next() {
                        guard let stored = Data.fromDatabaseValue(row[2] as DatabaseValue), case .success(.file(let name)) = CoreDataExternalValue.form(of: stored),
                              Files.kind(of: (files.dataFolder as NSString).appendingPathComponent(name)) == .missing else { continue }
                        found.count += 1
                        if found.examples.count < limit {
                            let object = Int64.fromDatabaseValue(row[0] as DatabaseValue).map { strategy.objectID(entity: entity.name, key: $0, stored: String.fromDatabaseValue(row[1] as DatabaseValue)) } ?? "?"
                            found.examples.append("\(entity.name) '\(object)', \(attribute.name): file \(name)")
                        }
                    }
                }
            }
        }
        return found
    }
}
