import Foundation
package import GRDB
import MapcFoundation
import MapcModel

extension Store {
    // MARK: Identities

    /// Where the object with this identity is: its entity and key; nil when the store has none.
    /// Formats that keep identities (mapc's `_id`) are searched by them; for the others the
    /// identity says it (`Note/p12`).
    package func locate(id: String) throws -> (entity: String, key: Int64)? {
        try reading { try locate(id: id, $0) }
    }

    package func locate(id: String, _ db: Database) throws -> (entity: String, key: Int64)? {
        for (table, members) in layout.entityTables {
            guard let storage = members.first else { continue }
            if let idColumn = storage.idColumn {
                guard let row = try Row.fetchOne(db, sql: "SELECT \(storage.entityColumn.quotedSQLIdentifier), \(storage.primaryKey.quotedSQLIdentifier) FROM \(table.quotedSQLIdentifier) WHERE \(idColumn.quotedSQLIdentifier) = ?", arguments: [id]),
                      let entity = layout.entity(withDiscriminator: row[0] as DatabaseValue, inTable: table) else { continue }
                return (entity, try row.stored(1, "a row key"))
            }
            for member in members {
                guard let key = strategy.key(fromObjectID: id, entity: member.entity),
                      let value = try DatabaseValue.fetchOne(db, sql: "SELECT \(member.entityColumn.quotedSQLIdentifier) FROM \(table.quotedSQLIdentifier) WHERE \(member.primaryKey.quotedSQLIdentifier) = ?", arguments: [key]),
                      let entity = layout.entity(withDiscriminator: value, inTable: table), member.discriminators.contains(value),
                      // A sub-entity's object is named by its own entity, not by a parent's (`Dog/p2`, not `Animal/p2`).
                      strategy.objectID(entity: entity, key: key, stored: nil) == id else { continue }
                return (entity, key)
            }
        }
        return nil
    }

    /// The entity of the object with this identity.
    package func entityName(ofID id: String) throws -> String? {
        try locate(id: id)?.entity
    }

    // MARK: Objects

    /// Calls `body` for each object whose own entity is `entity` (sub-entities excluded), in key
    /// order, reading row by row so memory stays flat on large stores.
    public func forEachObject(ofExactEntity entityName: String, _ body: (ObjectData) throws -> Void) throws {
        // What the read returns (how many rows) is not this call's answer; its errors are.
        _ = try failingAsStoreErrors("cannot read the \(entityName) objects") { try readObjects(ofExactEntity: entityName, body) }
    }

    /// The object with this identity, whatever its entity; nil when the store has none. In a
    /// Core Data store an identity is the object's own entity and key exactly (`Dog/p2`: not
    /// `Dog/p02`, nor a parent entity's `Animal/p2`).
    public func object(id: String) throws -> ObjectData? {
        try failingAsStoreErrors("cannot read the object '\(id)'") { try readObject(id: id) }
    }

    /// The object with this key in the table of an entity's hierarchy (whichever entity of the
    /// hierarchy it is); nil when there is none.
    public func object(entity: String, key: Int64) throws -> ObjectData? {
        try failingAsStoreErrors("cannot read the \(entity) object with key \(key)") { try readObject(entity: entity, key: key) }
    }

    /// `object(entity:key:)` for the engine: SQLite's failures stay SQLite's (an interrupted
    /// statement is a cancellation, a full disk the store's failure, not the expression's).
    package func readObject(entity: String, key: Int64) throws -> ObjectData? {
        if let known = schema.entity(named: entity), schema.subentities(of: known).isEmpty {
            // No sub-entity: the row is most likely of this very entity, which the read checks.
            // Alone in its hierarchy, it can be of no other.
            var found: ObjectData?
            try readObjects(ofExactEntity: entity, keys: [key]) { found = $0 }
            if found != nil || known.parent == nil { return found }
        }
        let storage = try layout.storage(of: entity)
        let discriminator = try reading { db in
            try DatabaseValue.fetchOne(db.cachedStatement(sql: "SELECT \(storage.entityColumn.quotedSQLIdentifier) FROM \(storage.table.quotedSQLIdentifier) WHERE \(storage.primaryKey.quotedSQLIdentifier) = ?"), arguments: [key])
        }
        guard let discriminator, let exact = layout.entity(withDiscriminator: discriminator, inTable: storage.table) else { return nil }
        var found: ObjectData?
        try readObjects(ofExactEntity: exact, keys: [key]) { found = $0 }
        return found
    }

    /// Objects of one entity (sub-entities excluded) by key, read a few hundred per query; with
    /// `properties`, only those attributes and relationships are read (`ObjectData.isPartial`).
    /// The stored attributes of the object under `key` of an entity, read on `connection` (a
    /// migration's own, which sees the rows it has written), or nil when there is none.
    package func attributeValues(ofKey key: Int64, entity: String, in connection: Database) throws -> [String: Value]? {
        let names = Set(schema.entity(named: entity).map { schema.allAttributes(of: $0).filter { !$0.isTransient }.map(\.name) } ?? [])
        var found: [String: Value]?
        _ = try readObjects(ofExactEntity: entity, keys: [key], in: connection, properties: names) { found = $0.attributes }
        return found
    }

    package func objects(keys: [Int64], ofExactEntity entity: String, properties: Set<String>? = nil) throws -> [Int64: ObjectData] {
        var found: [Int64: ObjectData] = [:]
        for start in stride(from: 0, to: keys.count, by: 500) {
            try readObjects(ofExactEntity: entity, keys: Array(keys[start..<min(keys.count, start + 500)]), properties: properties) { object in
                if let key = object.key { found[key] = object }
            }
        }
        return found
    }

    /// `object(id:)` for the engine: SQLite's failures stay SQLite's.
    package func readObject(id: String) throws -> ObjectData? {
        try reading { try readObject(id: id, $0) }
    }

    /// The object with this identity, read on a connection already open (inside a write).
    func readObject(id: String, _ db: Database) throws -> ObjectData? {
        guard let (entity, key) = try locate(id: id, db), schema.entity(named: entity) != nil else { return nil }
        var found: ObjectData?
        try readObjects(ofExactEntity: entity, keys: [key], in: db) { found = $0 }
        return found
    }

    /// All objects of an entity's own (sub-entities excluded), in key order.
    public func objects(ofExactEntity entity: String) throws -> [ObjectData] {
        var result: [ObjectData] = []
        try forEachObject(ofExactEntity: entity) { result.append($0) }
        return result
    }

    /// All objects of an entity and its sub-entities: a fetch of `Attachment` also yields `ImageAttachment` objects.
    public func objects(of entity: String) throws -> [ObjectData] {
        guard let root = schema.entity(named: entity) else { throw MapcError.notFound("no entity '\(entity)' in version \(schema.version)") }
        return try schema.hierarchy(under: root).flatMap { try objects(ofExactEntity: $0.name) }
    }

    /// A related row: its entity, key and identity (its stored identity, or one made from its entity and key).
    private func related(table: String, key: Int64, discriminator: DatabaseValue, stored: String?) -> (StoredKey, String) {
        let entity = layout.entity(withDiscriminator: discriminator, inTable: table) ?? "?"
        return (StoredKey(entity: entity, key: key), strategy.objectID(entity: entity, key: key, stored: stored))
    }

    /// Reads objects of one entity (sub-entities excluded) in key order: all of them, those with
    /// the given keys, or the first `limit` after a key. With `only`, the attributes and
    /// relationships read are those of the set (the objects are partial).
    @discardableResult
    func readObjects(ofExactEntity entityName: String, keys: [Int64]? = nil, after: Int64? = nil, limit: Int? = nil, byteBudget: Int? = nil,
                     in connection: Database? = nil, properties only: Set<String>? = nil, _ body: (ObjectData) throws -> Void) throws -> Bool {
        let plan = try readPlan(entityName, properties: only) { try ReadPlan(entity: entityName, store: self, properties: only) }
        let isPartial = plan.isPartial
        let attributeNames = plan.attributeNames, attributeTypes = plan.attributeTypes
        let toOne = plan.toOne, toManyQueries = plan.toMany
        let key = plan.key
        var filter = ""
        if let keys { filter += " AND t.\(key) IN (\(Array(repeating: "?", count: keys.count).joined(separator: ", ")))" }
        if after != nil { filter += " AND t.\(key) > ?" }
        let sql = plan.select + filter + " ORDER BY t.\(key)" + (limit != nil ? " LIMIT ?" : "")
        var arguments = [plan.discriminator] + (keys ?? []).map(\.databaseValue)
        if let after { arguments.append(after.databaseValue) }
        if let limit { arguments.append(limit.databaseValue) }
        // Whether the objects read reached `byteBudget` (their texts and data, at least one object) before the rows ended.
        var spent = 0, reachedBudget = false
        func read(_ db: Database) throws {
            // Cached statements: prepared once per connection, not per read.
            let manyStatements = try toManyQueries.map { ($0.name, $0.table, try db.cachedStatement(sql: $0.sql)) }
            let statement = try db.cachedStatement(sql: sql)
            let row = StatementColumns(statement)
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
            while try rows.next() != nil {
                let primaryKey = try row.integer(0, "a row key of \(entityName)")
                let stored = try row.textIfPresent(1, "an object id of \(entityName)")
                var object = ObjectData(id: strategy.objectID(entity: entityName, key: primaryKey, stored: stored), entity: entityName, key: primaryKey)
                object.isPartial = isPartial
                var column = 2
                // Made at its final size (`reserveCapacity` looked up generic metadata per object).
                var values = [String: Value](minimumCapacity: attributeNames.count)
                for (name, type) in zip(attributeNames, attributeTypes) {
                    do {
                        values[name] = try row.attributeValue(column, as: type, strategy)
                    } catch let error as MapcError {
                        throw MapcError.store("\(entityName) '\(object.id)', attribute '\(name)': \(error)")
                    }
                    column += 1
                }
                object.attributes = values
                for (name, destinationTable) in toOne {
                    if !row.value(column + 1).isNull, let target = try row.integerIfPresent(column, "the key of \(object.id).\(name)") {
                        let targetID = try row.textIfPresent(column + 2, "the id of \(object.id).\(name)")
                        let (stored, id) = related(table: destinationTable, key: target, discriminator: row.value(column + 1), stored: targetID)
                        object.relationships[name] = [id]
                        object.relatedKeys[name] = [stored]
                    } else {
                        object.relationships[name] = []
                        object.relatedKeys[name] = []
                    }
                    column += 3
                }
                for (name, destinationTable, statement) in manyStatements {
                    var ids: [String] = [], keys: [StoredKey] = []
                    let target = StatementColumns(statement)
                    let targets = try Row.fetchCursor(statement, arguments: [primaryKey])
                    while try targets.next() != nil {
                        let (stored, id) = related(table: destinationTable, key: try target.integer(0, "a related key of \(object.id).\(name)"),
                                                   discriminator: target.value(1), stored: try target.textIfPresent(2, "a related id of \(object.id).\(name)"))
                        ids.append(id)
                        keys.append(stored)
                    }
                    object.relationships[name] = ids
                    object.relatedKeys[name] = keys
                }
                if byteBudget != nil { spent += object.byteCount }
                try body(object)
                if let byteBudget, spent >= byteBudget {
                    reachedBudget = true
                    return
                }
            }
        }
        if let connection { try read(connection) } else { try reading(read) }
        return reachedBudget
    }

    /// The bytes of values one batch of objects may hold (their texts and data): a batch of 2,000
    /// objects of a megabyte each would be 2 GB, where a migration's memory is flat. A batch ends
    /// at its count or at this, whichever comes first.
    package static let batchByteBudget = 16 << 20

    /// A value written into SQL text (for discriminator lists in subqueries; never user text unquoted).
    static func sqlLiteral(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let n): return String(n)
        case .double(let d): return "\(d)"
        case .string(let text): return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): return "x'" + Hex.lowercase(data) + "'"
        }
    }

    /// Reads the objects of an entity (sub-entities excluded) in batches, in key order. Each batch
    /// is read in its own short read (one query: the next `batchSize` rows after the last key) and
    /// handed to `body` outside it, so `body` may read the store again (expressions following
    /// relationships do) and memory stays bounded by the batch size. With `properties`, only those
    /// attributes and relationships are read (`ObjectData.isPartial`).
    package func forEachBatch(ofExactEntity entity: String, batchSize: Int = 1_000, properties: Set<String>? = nil, _ body: ([ObjectData]) throws -> Void) throws {
        try forEachBatch(ofExactEntity: entity, batchSize: batchSize, properties: properties, readingAhead: false, body)
    }

    /// `forEachBatch`, with `readingAhead`, on a file store: each batch is read while `body` works
    /// on the previous one, on another thread and connection (`BatchReadAhead`). Only for a store
    /// no process can commit to meanwhile, as a migration's source under its write lock. Where the
    /// reader cannot open its connection or fails to read a batch, the batches from there on are
    /// read in line: what is reported is what this connection finds.
    package func forEachBatch(ofExactEntity entity: String, batchSize: Int, properties: Set<String>?, readingAhead: Bool, _ body: ([ObjectData]) throws -> Void) throws {
        var lastKey: Int64?
        if readingAhead, let path {
            let reader = BatchReadAhead(store: self, path: path, entity: entity, batchSize: batchSize, properties: properties)
            defer { reader.stop() }
            if reader.isAvailable() {
                while true {
                    let next: [ObjectData]?
                    do { next = try reader.next() } catch { break }
                    guard var batch = next else { return }
                    lastKey = batch.last?.key ?? lastKey
                    try body(batch)
                    reader.giveBack(&batch)
                }
            }
        }
        while true {
            var batch: [ObjectData] = []
            batch.reserveCapacity(Swift.min(batchSize, 4_096))
            let reachedBudget = try readObjects(ofExactEntity: entity, after: lastKey, limit: batchSize, byteBudget: Self.batchByteBudget, properties: properties) { batch.append($0) }
            guard let last = batch.last?.key else { return }
            lastKey = last
            try body(batch)
            if batch.count < batchSize && !reachedBudget { return }
        }
    }
}

/// How the objects of one entity are read: the columns, the to-one lookups and the to-many
/// queries, worked out once per entity rather than per read. How many columns it selects is
/// `StoreLayout.readWidth`, which `mapc check` holds to SQLite's limit.
struct ReadPlan {
    let storage: EntityStorage
    let discriminator: DatabaseValue
    /// The quoted key column.
    let key: String
    /// `SELECT … FROM table t WHERE t.entity = ?`, to which filters are added.
    let select: String
    /// The attributes read, in column order: names and types apart, as iterating the attributes
    /// themselves copied each (a large value) per object.
    let attributeNames: [String]
    let attributeTypes: [AttributeType]
    let toOne: [(name: String, table: String)]
    let toMany: [(name: String, table: String, sql: String)]
    /// Whether some stored properties are left out (a plan for those a reader needs).
    let isPartial: Bool

    init(entity entityName: String, store: Store, properties only: Set<String>? = nil) throws {
        let schema = store.schema
        guard let entity = schema.entity(named: entityName) else { throw MapcError.notFound("no entity '\(entityName)' in version \(schema.version)") }
        let storage = try store.layout.storage(of: entityName)
        self.storage = storage
        discriminator = storage.discriminator
        let stored = schema.allAttributes(of: entity).compactMap { attribute in
            storage.attributeColumns[attribute.name].map { (attribute: attribute, column: $0) }
        }.filter { !$0.attribute.isTransient }
        let attributes = only.map { names in stored.filter { names.contains($0.attribute.name) } } ?? stored
        attributeNames = attributes.map(\.attribute.name)
        attributeTypes = attributes.map(\.attribute.type)
        let storedRelationships = schema.allRelationships(of: entity).compactMap { relationship in
            storage.relationships[relationship.name].map { (relationship: relationship, kept: $0) }
        }.filter { !$0.relationship.isTransient }
        let relationships = only.map { names in storedRelationships.filter { names.contains($0.relationship.name) } } ?? storedRelationships
        isPartial = attributes.count < stored.count || relationships.count < storedRelationships.count
        let table = storage.table.quotedSQLIdentifier, key = storage.primaryKey.quotedSQLIdentifier, kind = storage.entityColumn.quotedSQLIdentifier
        self.key = key
        let idSelection = storage.idColumn.map { "d.\($0.quotedSQLIdentifier)" } ?? "NULL"
        var selections = ["t.\(key)", storage.idColumn.map { "t.\($0.quotedSQLIdentifier)" } ?? "NULL"]
        selections += attributes.map { "t.\($0.column.quotedSQLIdentifier)" }
        var toOne: [(name: String, table: String)] = []
        var toMany: [(name: String, table: String, sql: String)] = []
        // The related rows are found by the relationship's key, their entity checked on each (`StoreLayout.entityCheck`).
        for (relationship, kept) in relationships {
            switch kept {
            case .foreignKey(let column, let destinationTable, _):
                // Only an object of the destination entity is the relationship's: a key naming no
                // row, or another entity's, reads as none (`danglingReferences` finds them first).
                let allowed = store.layout.discriminatorsSQL(of: relationship.destination)
                let target = "(SELECT d.%@ FROM \(destinationTable.quotedSQLIdentifier) d WHERE d.\(key) = t.\(column.quotedSQLIdentifier)"
                    + (allowed.isEmpty ? ")" : " AND \(StoreLayout.entityCheck("d.\(kind)", allowed: allowed)))")
                selections += ["t.\(column.quotedSQLIdentifier)", target.replacingOccurrences(of: "%@", with: kind), target.replacingOccurrences(of: "d.%@", with: idSelection)]
                toOne.append((relationship.name, destinationTable))
            case .inverseForeignKey(let destinationTable, let column, let orderColumn, let discriminators):
                let order = orderColumn.map { "d.\($0.quotedSQLIdentifier), " } ?? ""
                let filter = discriminators.map(Store.sqlLiteral).joined(separator: ", ")
                toMany.append((relationship.name, destinationTable,
                               "SELECT d.\(key), d.\(kind), \(idSelection) FROM \(destinationTable.quotedSQLIdentifier) d WHERE d.\(column.quotedSQLIdentifier) = ? AND \(StoreLayout.entityCheck("d.\(kind)", allowed: filter)) ORDER BY \(order)d.\(key)"))
            case .joinTable(let joinTable, let ownerColumn, let otherColumn, let ownerOrderColumn, _, let destinationTable, _):
                let order = ownerOrderColumn.map { "j.\($0.quotedSQLIdentifier), " } ?? ""
                // As for a to-one: a row naming another entity's object is not the relationship's.
                let allowed = store.layout.discriminatorsSQL(of: relationship.destination)
                let ofDestination = allowed.isEmpty ? "" : " AND \(StoreLayout.entityCheck("d.\(kind)", allowed: allowed))"
                toMany.append((relationship.name, destinationTable,
                               "SELECT d.\(key), d.\(kind), \(idSelection) FROM \(joinTable.quotedSQLIdentifier) j JOIN \(destinationTable.quotedSQLIdentifier) d ON d.\(key) = j.\(otherColumn.quotedSQLIdentifier)\(ofDestination) WHERE j.\(ownerColumn.quotedSQLIdentifier) = ? ORDER BY \(order)d.\(key)"))
            }
        }
        self.toOne = toOne
        self.toMany = toMany
        select = "SELECT \(selections.joined(separator: ", ")) FROM \(table) t WHERE t.\(kind) = ?"
    }
}
