import Foundation
import GRDB

extension Store {
    // MARK: Writing

    /// Validates the objects against the schema and writes them in one transaction: all of them,
    /// or (on any problem) none.
    ///
    /// Relationships may name objects in `objects` or objects already in the store, which then
    /// gain the links (a to-one relationship an existing object already has is never changed).
    /// Everything checked for a new store holds against the existing objects too: ids are new,
    /// uniqueness constraints, counts and one-to-one inverses hold across the whole store
    /// (checked after writing, inside the transaction, which is rolled back on any problem).
    ///
    /// Throws `DataValidationError` listing the problems by entity, object and key.
    public func insert(_ objects: [ObjectData]) throws {
        try database.write { db in
            let hadObjects = try self.hasObjects(db)
            var resolver = ObjectGraphResolver(schema: schema, objects: objects, existing: hadObjects ? { id in try self.readObject(id: id, db) } : nil)
            try resolver.resolve()
            try self.checkIDsAreFree(objects, db)
            var primaryKeys = [Int64](repeating: 0, count: resolver.objects.count)
            var insertStatements: [String: Statement] = [:]
            for (index, object) in resolver.objects.enumerated() {
                if resolver.isExisting(index) {
                    primaryKeys[index] = try self.primaryKey(ofID: object.id, entity: object.entity, db) ?? 0
                    continue
                }
                let storage = try layout.storage(of: object.entity)
                guard let entity = schema.entity(named: object.entity) else { continue }
                let attributes = schema.allAttributes(of: entity).filter { !$0.isTransient }
                let statement: Statement
                if let cached = insertStatements[object.entity] {
                    statement = cached
                } else {
                    let columns = [storage.entityColumn, storage.idColumn] + attributes.compactMap { storage.attributeColumns[$0.name] }
                    let sql = "INSERT INTO \(storage.table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
                    statement = try db.makeStatement(sql: sql)
                    insertStatements[object.entity] = statement
                }
                var arguments: [DatabaseValue] = [object.entity.databaseValue, object.id.databaseValue]
                for attribute in attributes {
                    arguments.append(strategy.encode(resolver.values[index][attribute.name] ?? .null, as: attribute.type))
                }
                try statement.execute(arguments: StatementArguments(arguments))
                primaryKeys[index] = db.lastInsertedRowID
            }
            try self.writeRelationships(resolver: resolver, primaryKeys: primaryKeys, db)
            if hadObjects { try self.validateWhole(db) }
        }
    }

    /// Whether any table of the store holds a row.
    private func hasObjects(_ db: Database) throws -> Bool {
        for table in Set(layout.entities.values.map(\.table)) where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table.quotedDatabaseIdentifier))") == true {
            return true
        }
        return false
    }

    /// Checks the whole store against its schema (after adding objects to it), as data problems.
    private func validateWhole(_ db: Database) throws {
        let (violations, total) = try StoreValidator(store: self, db: db).validate { _, _ in nil }
        guard total > 0 else { return }
        throw DataValidationError(problems: violations.map { violation in
            DataProblem(entity: violation.entity, objectID: violation.object, key: violation.property, message: "\(violation.rule) (value: \(violation.value))")
        }, total: total)
    }

    private func checkIDsAreFree(_ objects: [ObjectData], _ db: Database) throws {
        var problems = ProblemList()
        var checks: [String: Statement] = [:]
        for object in objects {
            guard let storage = layout.entities[object.entity] else { continue }
            for table in Set(layout.entities.values.map(\.table)).sorted() {
                let statement = try checks[table] ?? db.makeStatement(sql: "SELECT \(storage.entityColumn.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier) WHERE \(storage.idColumn.quotedDatabaseIdentifier) = ?")
                checks[table] = statement
                if let existing = try String.fetchOne(statement, arguments: [object.id]) {
                    problems.add(object.entity, object.id, "id", "the store already has \(English.withArticle(existing)) object with id '\(object.id)'")
                }
            }
        }
        try problems.throwIfAny()
    }

    /// Writes each relationship link once, where the layout keeps it: from new objects, and from
    /// existing objects only what the new ones add (placed after what they already hold).
    private func writeRelationships(resolver: ObjectGraphResolver, primaryKeys: [Int64], _ db: Database) throws {
        let objects = resolver.objects
        var statements: [String: Statement] = [:]
        func statement(_ sql: String) throws -> Statement {
            if let cached = statements[sql] { return cached }
            let made = try db.makeStatement(sql: sql)
            statements[sql] = made
            return made
        }
        /// Where `member` stands in `owner`'s list for `relationship`.
        func position(of member: Int, in owner: Int, _ relationship: String) -> Int {
            let offset = resolver.isExisting(owner) ? (resolver.storedCounts[owner][relationship] ?? 0) : 0
            return offset + (resolver.related[owner][relationship]?.firstIndex(of: member) ?? 0)
        }
        for (index, object) in objects.enumerated() {
            guard let entity = schema.entity(named: object.entity), let storage = layout.entities[object.entity] else { continue }
            for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
                let targets = resolver.related[index][relationship.name] ?? []
                guard !targets.isEmpty else { continue }
                switch storage.relationships[relationship.name] {
                case .foreignKey(let column, _, let orderColumn)?:
                    guard let target = targets.first else { continue }
                    var assignments = "\(column.quotedDatabaseIdentifier) = ?"
                    var arguments: [DatabaseValue] = [primaryKeys[target].databaseValue]
                    if let orderColumn, let inverse = schema.inverse(of: relationship) {
                        assignments += ", \(orderColumn.quotedDatabaseIdentifier) = ?"
                        arguments.append(position(of: index, in: target, inverse.name).databaseValue)
                    }
                    arguments.append(primaryKeys[index].databaseValue)
                    try statement("UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(assignments) WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?")
                        .execute(arguments: StatementArguments(arguments))
                case .joinTable(let table, let ownerColumn, let otherColumn, let orderColumn, _)? where ownerColumn == "owner":
                    let inverse = schema.inverse(of: relationship)
                    var columns = [ownerColumn, otherColumn]
                    if orderColumn != nil { columns.append("owner_order") }
                    if inverse?.isOrdered == true { columns.append("other_order") }
                    let sql = "INSERT INTO \(table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
                    for target in targets {
                        var arguments: [DatabaseValue] = [primaryKeys[index].databaseValue, primaryKeys[target].databaseValue]
                        if orderColumn != nil { arguments.append(position(of: target, in: index, relationship.name).databaseValue) }
                        if let inverse, inverse.isOrdered { arguments.append(position(of: index, in: target, inverse.name).databaseValue) }
                        try statement(sql).execute(arguments: StatementArguments(arguments))
                    }
                default:
                    // Kept by the other side: an inverse foreign key, or a join table the inverse owns.
                    continue
                }
            }
        }
    }

    /// The primary key of the object with this identity and entity, in an open database.
    private func primaryKey(ofID id: String, entity: String, _ db: Database) throws -> Int64? {
        let storage = try layout.storage(of: entity)
        return try Int64.fetchOne(db, sql: "SELECT \(storage.primaryKey.quotedDatabaseIdentifier) FROM \(storage.table.quotedDatabaseIdentifier) WHERE \(storage.idColumn.quotedDatabaseIdentifier) = ?", arguments: [id])
    }

    // MARK: Reading

    /// Calls `body` for each object whose own entity is `entity` (sub-entities excluded), in
    /// primary-key order, reading row by row so memory stays flat on large stores.
    public func forEachObject(ofExactEntity entityName: String, _ body: (ObjectData) throws -> Void) throws {
        try readObjects(ofExactEntity: entityName, id: nil, body)
    }

    /// The object with this identity, whatever its entity; nil when the store has none.
    public func object(id: String) throws -> ObjectData? {
        guard let entity = try entityName(ofID: id) else { return nil }
        var found: ObjectData?
        try readObjects(ofExactEntity: entity, id: id) { found = $0 }
        return found
    }

    /// Objects of one entity (sub-entities excluded) by identity, read a few hundred per query.
    public func objects(ids: [String], ofExactEntity entity: String) throws -> [String: ObjectData] {
        var found: [String: ObjectData] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            try readObjects(ofExactEntity: entity, ids: Array(ids[start..<min(ids.count, start + 500)])) { found[$0.id] = $0 }
        }
        return found
    }

    /// The entity of the object with this identity.
    public func entityName(ofID id: String) throws -> String? {
        try database.read { try entityName(ofID: id, $0) }
    }

    private func entityName(ofID id: String, _ db: Database) throws -> String? {
        for table in Set(layout.entities.values.map(\.table)).sorted() {
            if let entity = try String.fetchOne(db, sql: "SELECT \(MapcLayout.entityColumn.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier) WHERE \(MapcLayout.idColumn.quotedDatabaseIdentifier) = ?", arguments: [id]) {
                return entity
            }
        }
        return nil
    }

    /// The object with this identity, read on a connection already open (inside a write).
    func readObject(id: String, _ db: Database) throws -> ObjectData? {
        guard let entity = try entityName(ofID: id, db), schema.entity(named: entity) != nil else { return nil }
        var found: ObjectData?
        try readObjects(ofExactEntity: entity, id: id, in: db) { found = $0 }
        return found
    }

    func readObjects(ofExactEntity entityName: String, primaryKeys: ClosedRange<Int64>, _ body: (ObjectData) throws -> Void) throws {
        try readObjects(ofExactEntity: entityName, id: nil, primaryKeys: primaryKeys, body)
    }

    private func readObjects(ofExactEntity entityName: String, id: String? = nil, ids: [String]? = nil, primaryKeys: ClosedRange<Int64>? = nil, in connection: Database? = nil,
                             _ body: (ObjectData) throws -> Void) throws {
        guard let entity = schema.entity(named: entityName) else { throw MapcError.notFound("no entity '\(entityName)' in version \(schema.version)") }
        let storage = try layout.storage(of: entityName)
        let attributes = schema.allAttributes(of: entity).filter { !$0.isTransient && storage.attributeColumns[$0.name] != nil }
        let relationships = schema.allRelationships(of: entity).filter { !$0.isTransient && storage.relationships[$0.name] != nil }
        let table = storage.table.quotedDatabaseIdentifier
        var selections = ["t.\(storage.primaryKey.quotedDatabaseIdentifier)", "t.\(storage.idColumn.quotedDatabaseIdentifier)"]
        selections += attributes.map { "t.\(storage.attributeColumns[$0.name]!.quotedDatabaseIdentifier)" }
        var toManyQueries: [(name: String, sql: String)] = []
        for relationship in relationships {
            switch storage.relationships[relationship.name]! {
            case .foreignKey(let column, let destinationTable, _):
                selections.append("(SELECT d.\(storage.idColumn.quotedDatabaseIdentifier) FROM \(destinationTable.quotedDatabaseIdentifier) d WHERE d.\(storage.primaryKey.quotedDatabaseIdentifier) = t.\(column.quotedDatabaseIdentifier))")
            case .inverseForeignKey(let destinationTable, let column, let orderColumn, let discriminators):
                let order = orderColumn.map { "\($0.quotedDatabaseIdentifier), " } ?? ""
                let filter = discriminators.map { "'\($0.replacingOccurrences(of: "'", with: "''"))'" }.joined(separator: ", ")
                toManyQueries.append((relationship.name, "SELECT \(storage.idColumn.quotedDatabaseIdentifier) FROM \(destinationTable.quotedDatabaseIdentifier) WHERE \(column.quotedDatabaseIdentifier) = ? AND \(storage.entityColumn.quotedDatabaseIdentifier) IN (\(filter)) ORDER BY \(order)\(storage.primaryKey.quotedDatabaseIdentifier)"))
            case .joinTable(let joinTable, let ownerColumn, let otherColumn, let orderColumn, let destinationTable):
                let order = orderColumn.map { "j.\($0.quotedDatabaseIdentifier), " } ?? ""
                toManyQueries.append((relationship.name, "SELECT d.\(storage.idColumn.quotedDatabaseIdentifier) FROM \(joinTable.quotedDatabaseIdentifier) j JOIN \(destinationTable.quotedDatabaseIdentifier) d ON d.\(storage.primaryKey.quotedDatabaseIdentifier) = j.\(otherColumn.quotedDatabaseIdentifier) WHERE j.\(ownerColumn.quotedDatabaseIdentifier) = ? ORDER BY \(order)d.\(storage.primaryKey.quotedDatabaseIdentifier)"))
            }
        }
        let toOne = relationships.filter { if case .foreignKey = storage.relationships[$0.name]! { return true } else { return false } }
        var idFilter = id == nil ? "" : " AND t.\(storage.idColumn.quotedDatabaseIdentifier) = ?"
        if let ids {
            idFilter += " AND t.\(storage.idColumn.quotedDatabaseIdentifier) IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", ")))"
        }
        if let primaryKeys {
            idFilter += " AND t.\(storage.primaryKey.quotedDatabaseIdentifier) BETWEEN \(primaryKeys.lowerBound) AND \(primaryKeys.upperBound)"
        }
        let sql = "SELECT \(selections.joined(separator: ", ")) FROM \(table) t WHERE t.\(storage.entityColumn.quotedDatabaseIdentifier) = ?\(idFilter) ORDER BY t.\(storage.primaryKey.quotedDatabaseIdentifier)"
        func read(_ db: Database) throws {
            let manyStatements = try toManyQueries.map { ($0.name, try db.makeStatement(sql: $0.sql)) }
            let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments([entityName] + (id.map { [$0] } ?? []) + (ids ?? [])))
            while let row = try rows.next() {
                let primaryKey: Int64 = try row.stored(0, "a row key of \(entityName)")
                var object = ObjectData(id: try row.stored(1, "an object id of \(entityName)"), entity: entityName)
                var column = 2
                for attribute in attributes {
                    do {
                        object.attributes[attribute.name] = try strategy.decode(row[column] as DatabaseValue, as: attribute.type)
                    } catch let error as MapcError {
                        throw MapcError.store("\(entityName) '\(object.id)', attribute '\(attribute.name)': \(error)")
                    }
                    column += 1
                }
                for relationship in toOne {
                    let id: String? = try row.storedIfPresent(column, "the id of \(object.id).\(relationship.name)")
                    object.relationships[relationship.name] = id.map { [$0] } ?? []
                    column += 1
                }
                for (name, statement) in manyStatements {
                    object.relationships[name] = try String.fetchAll(statement, arguments: [primaryKey])
                }
                try body(object)
            }
        }
        if let connection { try read(connection) } else { try database.read(read) }
    }

    /// All objects of an entity's own (sub-entities excluded), in primary-key order.
    public func objects(ofExactEntity entity: String) throws -> [ObjectData] {
        var result: [ObjectData] = []
        try forEachObject(ofExactEntity: entity) { result.append($0) }
        return result
    }

    /// All objects of an entity and its sub-entities: a fetch of `Attachment` also yields `ImageAttachment` objects.
    public func objects(of entity: String) throws -> [ObjectData] {
        let storage = try layout.storage(of: entity)
        return try storage.discriminators.flatMap { try objects(ofExactEntity: $0) }
    }
}
