import Foundation
import GRDB

/// Row-level writes on one open write connection, with prepared statements cached: inserting
/// objects under keys it hands out and setting relationship links, in any format. The data loader
/// and the migration manager both write through it.
final class RowWriter {
    let store: Store
    let db: Database
    /// The store's format, held: `Store.strategy` copies it out of the format per call.
    private let strategy: any StoreFormatStrategy
    private var statements: [String: Statement] = [:]
    private var writeStatements: [String: WriteStatement] = [:]
    /// Per entity: the prepared INSERT and the stored attributes in its column order.
    private var insertPlans: [String: InsertPlan] = [:]
    /// Per entity and relationships written with the row: the same, with their foreign keys.
    private var linkedInsertPlans: [RowLinks: InsertPlan] = [:]

    /// How an entity's rows are inserted, with what each row takes from its storage: worked out
    /// once per entity (a copy of the whole `EntityStorage` per row showed in the profile). A
    /// class, so that handing it out per row is one retain.
    final class InsertPlan {
        fileprivate let statement: WriteStatement
        fileprivate let attributes: [(name: String, type: AttributeType)]
        /// The stored attributes, in the order a row's values are given.
        let attributeNames: [String]
        fileprivate let discriminator: DatabaseValue
        /// Whether the format stores the object's identity in a column of its own.
        let keepsIdentity: Bool
        fileprivate let insertedValues: [DatabaseValue]
        /// The relationships whose foreign keys the row takes, after its attributes.
        let links: [String]

        fileprivate init(statement: WriteStatement, attributes: [(name: String, type: AttributeType)], discriminator: DatabaseValue, keepsIdentity: Bool,
                         insertedValues: [DatabaseValue], links: [String]) {
            self.statement = statement
            self.attributes = attributes
            self.attributeNames = attributes.map(\.name)
            self.discriminator = discriminator
            self.keepsIdentity = keepsIdentity
            self.insertedValues = insertedValues
            self.links = links
        }
    }

    /// A value the store's format cannot hold exactly (a decimal with more digits than Core Data's
    /// `DECIMAL` column keeps): a data problem when loading, a mapping's failure when migrating.
    struct UnstorableValue: Error {
        var entity: String
        var id: String
        var property: String
        var problem: String

        var dataProblem: MapcError { .data(["\(entity) '\(id)', property '\(property)': \(problem)"]) }
    }

    /// An entity's to-one relationships written with its rows.
    private struct RowLinks: Hashable {
        var entity: String
        var relationships: [String]
    }
    private var foreignKeyLinks: [PropertyName: ForeignKeyLink] = [:]
    /// The next key to hand out, per table.
    private var nextKeys: [String: Int64] = [:]
    /// Per table, the highest key set aside for objects written under keys of their own.
    private var reservedThrough: [String: Int64] = [:]

    init(store: Store, db: Database) {
        self.store = store
        self.db = db
        strategy = store.strategy
    }

    func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] { return cached }
        let made = try db.makeStatement(sql: sql)
        statements[sql] = made
        return made
    }

    /// A cached statement that writes, run once per object with its values bound directly.
    func writeStatement(_ sql: String) throws -> WriteStatement {
        if let cached = writeStatements[sql] { return cached }
        let made = try WriteStatement(db, sql: sql)
        writeStatements[sql] = made
        return made
    }

    /// Hands out `count` consecutive keys in an entity's table, returning the first.
    func reserveKeys(_ count: Int64, for storage: EntityStorage) throws -> Int64 {
        var first = try nextKeys[storage.table] ?? store.strategy.firstFreeKey(in: storage, db)
        if let reserved = reservedThrough[storage.table], reserved >= first { first = reserved + 1 }
        nextKeys[storage.table] = first + count
        return first
    }

    /// Sets aside every key of a table up to `last`: keys are never handed out there again, so
    /// objects written under keys of their own (`insert(…key:)`, or by SQL) in that range cannot
    /// meet an object written later.
    func reserve(through last: Int64, in table: String) {
        reservedThrough[table] = max(reservedThrough[table] ?? last, last)
        if let next = nextKeys[table], next <= last { nextKeys[table] = last + 1 }
    }

    /// Forgets the keys handed out for a table, after rows were inserted there another way (SQL).
    func rowsInserted(into table: String) {
        nextKeys[table] = nil
    }

    /// Inserts a row for an object with its stored attribute values, under `key` (which the caller
    /// has reserved) or a key handed out now; returns the key.
    func insert(entity: String, id: String, attributes: [String: Value], key chosen: Int64? = nil) throws -> Int64 {
        let plan = try insertPlan(entity)
        return try insert(plan, entity: entity, id: id, values: plan.attributeNames.map { attributes[$0] ?? .null }, key: chosen)
    }

    /// Inserts a row by a plan (`insertPlan(_:linking:)`): the stored attributes' values in the
    /// plan's order (`attributeNames`), and the keys of the objects its linked relationships
    /// point to (nil for none).
    func insert(_ plan: InsertPlan, entity: String, id: String, values: [Value], key chosen: Int64?, linkedTo targets: [Int64?] = []) throws -> Int64 {
        guard values.count == plan.attributes.count, targets.count == plan.links.count else {
            throw MapcError.data(["\(entity) '\(id)': \(values.count) values and \(targets.count) related objects for a row of \(plan.attributes.count) attributes and \(plan.links.count) relationships"])
        }
        let key = try chosen ?? reserveKeys(1, for: store.layout.storage(of: entity))
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(3 + plan.insertedValues.count + values.count + targets.count)
        arguments.append(key.databaseValue)
        arguments.append(plan.discriminator)
        if plan.keepsIdentity { arguments.append(id.databaseValue) }
        arguments.append(contentsOf: plan.insertedValues)
        for (attribute, value) in zip(plan.attributes, values) {
            if let problem = strategy.storageProblem(value, as: attribute.type) {
                throw UnstorableValue(entity: entity, id: id, property: attribute.name, problem: problem)
            }
            arguments.append(strategy.encode(value, as: attribute.type))
        }
        for target in targets { arguments.append(target?.databaseValue ?? .null) }
        try plan.statement.execute(arguments)
        return key
    }

    /// Whether the format stores an entity's objects' identities in a column of their own.
    func keepsIdentity(of entity: String) throws -> Bool {
        try insertPlan(entity).keepsIdentity
    }

    /// How an entity's rows are inserted, with the foreign keys of `relationships` when given:
    /// each must be a to-one the row alone keeps (`linkColumn`), or this fails.
    func insertPlan(_ entity: String, linking relationships: [String] = []) throws -> InsertPlan {
        if relationships.isEmpty, let plan = insertPlans[entity] { return plan }
        let links = RowLinks(entity: entity, relationships: relationships)
        if let plan = linkedInsertPlans[links] { return plan }
        let storage = try store.layout.storage(of: entity)
        let schema = store.schema
        guard let description = schema.entity(named: entity) else { throw MapcError.notFound("no entity '\(entity)' in version \(schema.version)") }
        let stored = schema.allAttributes(of: description).filter { !$0.isTransient && storage.attributeColumns[$0.name] != nil }
        let linkColumns = try relationships.map { name in
            guard let column = store.linkColumn(name, of: storage) else { throw MapcError.notFound("relationship '\(entity).\(name)' is not a foreign key its rows keep alone") }
            return column
        }
        let columns = [storage.primaryKey, storage.entityColumn] + (storage.idColumn.map { [$0] } ?? []) + storage.insertedColumns.map(\.name)
            + stored.compactMap { storage.attributeColumns[$0.name] } + linkColumns
        let sql = "INSERT INTO \(storage.table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        let plan = InsertPlan(statement: try WriteStatement(db, sql: sql), attributes: stored.map { (name: $0.name, type: $0.type) }, discriminator: storage.discriminator,
                              keepsIdentity: storage.idColumn != nil, insertedValues: storage.insertedColumns.map(\.value), links: relationships)
        if relationships.isEmpty { insertPlans[entity] = plan } else { linkedInsertPlans[links] = plan }
        return plan
    }

    /// Links `owner` to `target` through a relationship of `owner`'s entity, where the layout keeps
    /// it. `position` is the target's place in an ordered relationship, `inversePosition` the
    /// owner's place in the inverse's list when that is ordered. One-to-one pairs set both sides.
    func link(_ relationship: String, of storage: EntityStorage, owner: Int64, target: Int64, position: Int = 0, inversePosition: Int? = nil) throws {
        switch try foreignKeyLink(relationship, of: storage) {
        case .foreignKey(let update, let ordered, let inverse)?:
            // A row the other side already placed in its ordered list keeps its place (SQLite
            // evaluates the CASE against the row's old values).
            try update.execute(ordered ? [target.databaseValue, target.databaseValue, (inversePosition ?? 0).databaseValue, owner.databaseValue]
                                       : [target.databaseValue, owner.databaseValue])
            try inverse?.execute([owner.databaseValue, target.databaseValue])
            return
        case .inverseForeignKey(let update, let ordered)?:
            try update.execute(ordered ? [owner.databaseValue, position.databaseValue, target.databaseValue] : [owner.databaseValue, target.databaseValue])
            return
        case nil:
            break
        }
        guard case .joinTable(let table, let ownerColumn, let otherColumn, let ownerOrder, let otherOrder, _, _)? = storage.relationships[relationship] else {
            throw MapcError.notFound("relationship '\(storage.entity).\(relationship)' is not stored (transient?)")
        }
        // Each side writes the positions it knows; a row the other side wrote keeps its own.
        var columns = [ownerColumn, otherColumn]
        var arguments: [DatabaseValue] = [owner.databaseValue, target.databaseValue]
        var written: [String] = []
        if let ownerOrder { columns.append(ownerOrder); arguments.append(position.databaseValue); written.append(ownerOrder) }
        if let otherOrder, let inversePosition { columns.append(otherOrder); arguments.append(inversePosition.databaseValue); written.append(otherOrder) }
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let update = written.map { "\($0.quotedDatabaseIdentifier) = excluded.\($0.quotedDatabaseIdentifier)" }
        let conflict = update.isEmpty ? "ON CONFLICT DO NOTHING" : "ON CONFLICT DO UPDATE SET \(update.joined(separator: ", "))"
        try writeStatement("INSERT INTO \(table.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(placeholders)) \(conflict)")
            .execute(arguments)
    }

    /// How a link through a foreign key is written: the statements, prepared once per entity and
    /// relationship rather than spelled out per link. Nil for a join table or a relationship the
    /// layout does not store.
    private func foreignKeyLink(_ relationship: String, of storage: EntityStorage) throws -> ForeignKeyLink? {
        let key = PropertyName(entity: storage.entity, property: relationship)
        if let known = foreignKeyLinks[key] { return known }
        let link: ForeignKeyLink
        let owner = storage.primaryKey.quotedDatabaseIdentifier
        switch storage.relationships[relationship] {
        case .foreignKey(let column, let destinationTable, let orderColumn)?:
            var assignments = "\(column.quotedDatabaseIdentifier) = ?"
            if let orderColumn {
                let order = orderColumn.quotedDatabaseIdentifier
                assignments += ", \(order) = CASE WHEN \(column.quotedDatabaseIdentifier) IS ? THEN \(order) ELSE ? END"
            }
            let inverse = try store.oneToOneInverse(relationship, of: storage).map { inverseColumn, _ in
                try writeStatement("UPDATE \(destinationTable.quotedDatabaseIdentifier) SET \(inverseColumn.quotedDatabaseIdentifier) = ? WHERE \(owner) = ?")
            }
            link = .foreignKey(update: try writeStatement("UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(assignments) WHERE \(owner) = ?"),
                               ordered: orderColumn != nil, inverse: inverse)
        case .inverseForeignKey(let table, let column, let orderColumn, _)?:
            let order = orderColumn.map { ", \($0.quotedDatabaseIdentifier) = ?" } ?? ""
            link = .inverseForeignKey(update: try writeStatement("UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ?\(order) WHERE \(owner) = ?"),
                                      ordered: orderColumn != nil)
        default:
            return nil
        }
        foreignKeyLinks[key] = link
        return link
    }

    /// A link kept in a foreign key: on the owner's row (with the inverse's column of a
    /// one-to-one pair), or on the target's row for a to-many whose inverse keeps it.
    private enum ForeignKeyLink {
        case foreignKey(update: WriteStatement, ordered: Bool, inverse: WriteStatement?)
        case inverseForeignKey(update: WriteStatement, ordered: Bool)
    }

    /// Clears a to-one relationship.
    func unlink(_ relationship: String, of storage: EntityStorage, owner: Int64) throws {
        guard case .foreignKey(let column, _, let orderColumn)? = storage.relationships[relationship] else { return }
        let order = orderColumn.map { ", \($0.quotedDatabaseIdentifier) = NULL" } ?? ""
        try writeStatement("UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = NULL\(order) WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?")
            .execute([owner.databaseValue])
    }
}
