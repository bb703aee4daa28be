import GRDB

/// Row-level writes on one open write connection, with prepared statements cached: what the
/// migration manager uses to build a destination store without per-object validation passes
/// (the whole store is validated once at the end instead).
public final class StoreWriter {
    /// The store written.
    public let store: Store
    private let db: Database
    private var statements: [String: Statement] = [:]
    /// Per entity: the prepared INSERT and the stored attributes in its column order.
    private var insertPlans: [String: (statement: Statement, attributes: [(name: String, type: AttributeType)])] = [:]

    /// Creates a writer on a connection of `store` that the caller keeps open (inside `writeWithoutTransaction`).
    public init(store: Store, db: Database) {
        self.store = store
        self.db = db
    }

    private func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] { return cached }
        let made = try db.makeStatement(sql: sql)
        statements[sql] = made
        return made
    }

    /// Inserts a row for an object with its stored attribute values; returns its primary key.
    public func insert(entity: String, id: String, attributes: [String: Value]) throws -> Int64 {
        let plan = try insertPlan(entity)
        var arguments: [DatabaseValue] = [entity.databaseValue, id.databaseValue]
        arguments.reserveCapacity(plan.attributes.count + 2)
        for attribute in plan.attributes {
            arguments.append(store.strategy.encode(attributes[attribute.name] ?? .null, as: attribute.type))
        }
        try plan.statement.execute(arguments: StatementArguments(arguments))
        return db.lastInsertedRowID
    }

    private func insertPlan(_ entity: String) throws -> (statement: Statement, attributes: [(name: String, type: AttributeType)]) {
        if let plan = insertPlans[entity] { return plan }
        let schema = store.schema
        guard let entityDescription = schema.entity(named: entity) else { throw MapcError.notFound("no entity '\(entity)' in version \(schema.version)") }
        let storage = try store.layout.storage(of: entity)
        let stored = schema.allAttributes(of: entityDescription).filter { storage.attributeColumns[$0.name] != nil }
        let columns = [storage.entityColumn, storage.idColumn] + stored.map { storage.attributeColumns[$0.name]! }
        let sql = "INSERT INTO \(storage.table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        let plan = (statement: try db.makeStatement(sql: sql), attributes: stored.map { (name: $0.name, type: $0.type) })
        insertPlans[entity] = plan
        return plan
    }

    /// The primary key of the object with this identity, looked up through the unique `_id` index.
    public func primaryKey(ofID id: String, entity: String) throws -> Int64? {
        let storage = try store.layout.storage(of: entity)
        return try Int64.fetchOne(try statement("SELECT \(storage.primaryKey.quotedDatabaseIdentifier) FROM \(storage.table.quotedDatabaseIdentifier) WHERE \(storage.idColumn.quotedDatabaseIdentifier) = ?"), arguments: [id])
    }

    /// Sets a relationship of an object to the given related objects (primary keys, in order),
    /// writing wherever the layout keeps it, and the inverse side where it is stored separately.
    public func setRelationship(_ name: String, of entity: String, owner: Int64, targets: [Int64]) throws {
        let schema = store.schema
        guard let entityDescription = schema.entity(named: entity), case .relationship(let relationship)? = schema.property(named: name, in: entityDescription) else {
            throw MapcError.notFound("no relationship '\(name)' on \(entity)")
        }
        let storage = try store.layout.storage(of: entity)
        switch storage.relationships[name] {
        case .foreignKey(let column, let destinationTable, let orderColumn)?:
            guard targets.count <= 1 else { throw MapcError.data(["to-one relationship '\(entity).\(name)' was given \(targets.count) objects"]) }
            let target = targets.first
            var assignments = "\(column.quotedDatabaseIdentifier) = ?"
            var arguments: [DatabaseValue] = [target?.databaseValue ?? .null]
            if let orderColumn {
                // Appended at the end of the inverse ordered relationship, unless the other side already
                // placed this object there (SQLite evaluates the CASE against the row's old values).
                let order = orderColumn.quotedDatabaseIdentifier, link = column.quotedDatabaseIdentifier
                assignments += ", \(order) = CASE WHEN \(link) IS ? THEN \(order) ELSE (SELECT COALESCE(MAX(\(order)), -1) + 1 FROM \(storage.table.quotedDatabaseIdentifier) WHERE \(link) = ?) END"
                arguments.append(target?.databaseValue ?? .null)
                arguments.append(target?.databaseValue ?? .null)
            }
            arguments.append(owner.databaseValue)
            try statement("UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(assignments) WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?").execute(arguments: StatementArguments(arguments))
            // One-to-one: the inverse keeps its own column; mirror it.
            if let inverse = schema.inverse(of: relationship), !inverse.isToMany, let target,
               let destination = schema.entity(named: relationship.destination),
               let inverseOwner = schema.ancestry(of: destination).first(where: { $0.relationships.contains { $0.name == inverse.name } }),
               case .foreignKey(let inverseColumn, _, _)? = store.layout.entities[inverseOwner.name]?.relationships[inverse.name] {
                try statement("UPDATE \(destinationTable.quotedDatabaseIdentifier) SET \(inverseColumn.quotedDatabaseIdentifier) = ? WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?")
                    .execute(arguments: [owner, target])
            }
        case .inverseForeignKey(let table, let column, let orderColumn, _)?:
            for (position, target) in targets.enumerated() {
                if let orderColumn {
                    try statement("UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ?, \(orderColumn.quotedDatabaseIdentifier) = ? WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?")
                        .execute(arguments: [owner, position, target])
                } else {
                    try statement("UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ? WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?")
                        .execute(arguments: [owner, target])
                }
            }
        case .joinTable(let table, let ownerColumn, let otherColumn, let orderColumn, _)?:
            for (position, target) in targets.enumerated() {
                if let orderColumn {
                    try statement("INSERT INTO \(table.quotedDatabaseIdentifier) (\(ownerColumn.quotedDatabaseIdentifier), \(otherColumn.quotedDatabaseIdentifier), \(orderColumn.quotedDatabaseIdentifier)) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET \(orderColumn.quotedDatabaseIdentifier) = excluded.\(orderColumn.quotedDatabaseIdentifier)")
                        .execute(arguments: [owner, target, position])
                } else {
                    try statement("INSERT OR IGNORE INTO \(table.quotedDatabaseIdentifier) (\(ownerColumn.quotedDatabaseIdentifier), \(otherColumn.quotedDatabaseIdentifier)) VALUES (?, ?)")
                        .execute(arguments: [owner, target])
                }
            }
        case nil:
            throw MapcError.notFound("relationship '\(entity).\(name)' is not stored (transient?)")
        }
    }
}
