import Foundation
package import GRDB
import MapcFoundation
import MapcModel

extension Store {
    /// Validates the objects against the schema and writes them in one transaction: all of them,
    /// or (on any problem) none.
    ///
    /// Relationships may name objects in `objects` or objects already in the store, which then
    /// gain the links (a to-one relationship an existing object already has is never changed).
    /// Everything checked for a new store holds against the existing objects too: ids are new,
    /// uniqueness constraints, counts and one-to-one inverses hold across the whole store
    /// (checked after writing, inside the transaction, which is rolled back on any problem, by
    /// `StoreValidator`, which validates a migration's result too).
    /// Formats that do not keep identities (Core Data's) give the new objects identities made from
    /// their keys; the data's ids only serve to relate the objects to each other.
    ///
    /// Throws `DataValidationError` listing the problems by entity, object and key, and
    /// `MapcError.store` when the store cannot be written (opened read only, a full disk).
    public func insert(_ objects: [ObjectData]) throws {
        do {
            try insertObjects(objects)
        } catch let error as DatabaseError {
            // SQLite's failures reach an app as mapc's own errors (GRDB is not part of the API).
            throw Store.storeError(error, path: path ?? ":memory:", doing: "cannot add the objects")
        }
    }

    private func insertObjects(_ objects: [ObjectData]) throws {
        // A damaged store is not written into: rows no command can read (or keys two rows share) stay as they are.
        try checkEveryRowIsRecognised()
        let appOrdered = try indexesOfAppCollations()
        guard appOrdered.isEmpty else {
            throw MapcError.store("cannot add objects to \(path ?? "the store"): its \(appOrdered.count == 1 ? "index" : "indexes") \(appOrdered.joined(separator: ", ")) "
                                  + "\(appOrdered.count == 1 ? "orders" : "order") text by a collation the app that made the store registers with SQLite, which mapc does not have: "
                                  + "rows mapc added would be out of that order, and the app's queries through the index would miss them. "
                                  + "Load the objects into a new store (`mapc load FILE NEW_STORE`), or add them with the app")
        }
        var hadObjects = false
        do {
            try writeObjects(objects) { hadObjects = $0 }
        } catch let invalid as WholeStoreInvalid {
            // The store's own triggers on the tables written ran on the rows: what they did is part of what broke.
            let written = Set(layout.tables.map { $0.name.lowercased() })
            let triggers = try database.read { db in
                try Row.fetchAll(db, sql: "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
                    .compactMap { row -> String? in written.contains(((row[1] as String?) ?? "").lowercased()) ? row[0] : nil }
            }
            var error = invalid.error
            if hadObjects {
                // The transaction is undone: the store as it was says which problems were already there.
                let before = try violations()
                error = invalid.error(knowing: before.violations.map(Self.dataProblem), allKnown: before.total >= invalid.error.total)
            }
            if !triggers.isEmpty {
                error.problems.append(DataProblem(entity: "store", objectID: nil, key: nil, message: "the store has triggers of its own (\(triggers.prefix(5).joined(separator: ", "))\(triggers.count > 5 ? ", …" : "")), "
                                                  + "which ran on the objects written and may have changed or removed others: nothing was written; see what they do (sqlite3: .schema), or load into a new store"))
            }
            throw error
        }
    }

    /// Every rule of the schema this store breaks as it is (what `load` and a migration check).
    package func violations() throws -> StoreValidator.Findings {
        try database.read { db in try StoreValidator(store: self, db: db).validate { _, _ in nil } }
    }

    /// The whole store broke a rule after the objects were added (`validateWhole`); the error is
    /// said once it is known which problems the store had before.
    private struct WholeStoreInvalid: Error {
        var error: DataValidationError

        /// The error, each problem the store already had marked as such; when every one was, a
        /// last line saying what to do about the store.
        func error(knowing before: [DataProblem], allKnown: Bool) -> DataValidationError {
            var marked = error
            var allOld = allKnown
            for index in marked.problems.indices {
                if before.contains(marked.problems[index]) { marked.problems[index].message += " (so in the store before this load)" } else { allOld = false }
            }
            if allOld {
                // The way out of a reference to no object is mapc's own; any other rule is the data's to mend.
                let dangling = marked.problems.contains { $0.message.contains(StoreValidator.danglingReferenceRule) }
                marked.problems.append(DataProblem(entity: "store", objectID: nil, key: nil, message: "every problem above was in the store before this load, which checks the whole store: "
                                                   + (dangling ? "repair the store first (a migration with `mapc run` leaves a reference to no object out, as nil)"
                                                               : "repair the store first (with the sqlite3 shell, or the app that wrote it), then load again")))
            }
            return marked
        }
    }

    private func writeObjects(_ objects: [ObjectData], hadObjects report: (Bool) -> Void) throws {
        try database.write { db in
            let hadObjects = try self.hasObjects(db)
            report(hadObjects)
            var resolver = ObjectGraphResolver(schema: schema, objects: objects, existing: hadObjects ? { id in try self.readObject(id: id, db) } : nil)
            let format = self.format
            resolver.storedDefault = { attribute in attribute.defaultValue.map { CoreDataExternalValue.storedForm(of: $0, for: attribute, in: format) } }
            try resolver.resolve()
            try self.checkExternalStorageForms(resolver)
            try self.checkIDsAreFree(objects, db)
            let writer = RowWriter(store: self, db: db, refusal: \.dataProblem)
            var keys = [Int64](repeating: 0, count: resolver.objects.count)
            for (index, object) in resolver.objects.enumerated() {
                if resolver.isExisting(index) {
                    keys[index] = object.key ?? 0
                    continue
                }
                guard schema.entity(named: object.entity) != nil else { continue }
                // A uniqueness constraint the layout keeps as a UNIQUE index (Core Data's) stops the
                // insert itself; the writer says it as the data problem it is (`refusal`).
                do {
                    keys[index] = try writer.insert(entity: object.entity, id: object.id, attributes: resolver.values[index])
                } catch let error as RowWriter.UnstorableValue {
                    throw error.dataProblem
                }
            }
            try self.writeRelationships(resolver: resolver, keys: keys, writer: writer, db)
            try strategy.finishWriting(db, layout: layout)
            // The store is then held to the rules a migrated store is validated with, by the same
            // validator (`StoreValidator`): what `load` accepts, `run` accepts. The data's own
            // checks above come first, to name problems in the data's terms.
            do { try self.validateWhole(db) } catch let error as DataValidationError { throw WholeStoreInvalid(error: error) }
        }
    }

    /// The uniqueness constraint of an object's entity (or an ancestor's), given its values, that an object already
    /// in the store shares its values with, as a data problem naming both objects; nil when none
    /// is found (the failure was another constraint).
    func uniquenessProblem(entity entityName: String, objectID: String, values: [String: Value], _ db: Database) throws -> DataValidationError? {
        guard let entity = schema.entity(named: entityName) else { return nil }
        let storage = try layout.storage(of: entityName)
        for owner in schema.ancestry(of: entity) {
            for constraint in owner.uniquenessConstraints {
                var conditions: [String] = [], arguments: [DatabaseValue] = [], shown: [String] = []
                for name in constraint {
                    // A constraint does not apply to nils (`Entity.constraintApplies(to:)`), nor does a UNIQUE index fail on them.
                    guard case .attribute(let attribute)? = schema.property(named: name, in: entity), let column = storage.attributeColumns[name],
                          let value = values[name], value != .null else { break }
                    conditions.append("\(column.quotedSQLIdentifier) IS \(strategy.placeholder(for: attribute.type))")
                    arguments.append(strategy.argument(value, as: attribute.type))
                    shown.append("\(name) \(value)")
                }
                guard conditions.count == constraint.count else { continue }
                let columns = [storage.primaryKey, storage.entityColumn] + (storage.idColumn.map { [$0] } ?? [])
                guard let row = try Row.fetchOne(db, sql: "SELECT \(columns.map(\.quotedSQLIdentifier).joined(separator: ", ")) FROM \(storage.table.quotedSQLIdentifier) WHERE \(conditions.joined(separator: " AND ")) LIMIT 1",
                                                 arguments: StatementArguments(arguments)),
                      let key: Int64 = try row.storedIfPresent(0, "a row key") else { continue }
                let discriminator: DatabaseValue = row[1]
                let existingEntity = layout.entity(withDiscriminator: discriminator, inTable: storage.table) ?? owner.name
                let stored: String? = storage.idColumn == nil ? nil : try row.storedIfPresent(2, "an object id")
                let existing = strategy.objectID(entity: existingEntity, key: key, stored: stored)
                return DataValidationError(problems: [DataProblem(entity: entityName, objectID: objectID, key: constraint.joined(separator: ","),
                    message: "breaks the uniqueness constraint (\(constraint.joined(separator: ", "))) of \(owner.name): \(existingEntity) '\(existing)' in the store has the same \(shown.joined(separator: ", "))")], total: 1)
            }
        }
        return nil
    }

    /// Whether any table of the store holds a row.
    private func hasObjects(_ db: Database) throws -> Bool {
        for (table, _) in layout.entityTables where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table.quotedSQLIdentifier))") == true {
            return true
        }
        return false
    }

    /// Checks the whole store against its schema (after adding objects to it), as data problems.
    private func validateWhole(_ db: Database) throws {
        let findings = try StoreValidator(store: self, db: db).validate { _, _ in nil }
        guard findings.total > 0 else { return }
        throw DataValidationError(problems: findings.violations.map(Self.dataProblem), total: findings.total)
    }

    /// A rule a stored object breaks, as a problem of data.
    private static func dataProblem(_ violation: ValidationViolation) -> DataProblem {
        DataProblem(entity: violation.entity, objectID: violation.object, key: violation.property, message: "\(violation.rule) (value: \(English.abbreviated(violation.value)))")
    }

    /// Whether the store keeps its objects' identities (mapc's format does; Core Data's names an
    /// object by its entity and key).
    package var keepsIdentities: Bool { layout.entities.values.contains { $0.idColumn != nil } }

    /// New values of attributes that allow external storage are given in a Core Data store's
    /// column form (`CoreDataExternalValue`): plain bytes there would read as a marker and the rest.
    private func checkExternalStorageForms(_ resolver: ObjectGraphResolver) throws {
        var marked: [String: [String]] = [:]
        for entity in schema.entities {
            let names = schema.allAttributes(of: entity).filter { !$0.isTransient && CoreDataExternalValue.isMarked($0, in: format) }.map(\.name)
            if !names.isEmpty { marked[entity.name] = names }
        }
        guard !marked.isEmpty else { return }
        var problems = ProblemList()
        for index in 0..<resolver.newCount {
            let object = resolver.objects[index]
            for name in marked[object.entity] ?? [] {
                if let value = resolver.values[index][name], let problem = CoreDataExternalValue.problem(storing: value) { problems.add(object.entity, object.id, name, problem) }
            }
        }
        try problems.throwIfAny()
    }

    /// New objects may not take an identity the store already has (for formats that keep them).
    /// Asked table by table for many ids at once, and not at all of an empty store: one question
    /// per object and table made `load` cost objects times entities (20,000 objects under a
    /// model of 100 entities: 21 s).
    private func checkIDsAreFree(_ objects: [ObjectData], _ db: Database) throws {
        guard keepsIdentities, try hasObjects(db) else { return }
        var taken: [ExactText: String] = [:]
        for (table, members) in layout.entityTables {
            guard let storage = members.first, let idColumn = storage.idColumn else { continue }
            for start in stride(from: 0, to: objects.count, by: Self.idsPerQuestion) {
                let ids = objects[start..<min(start + Self.idsPerQuestion, objects.count)].map(\.id)
                let sql = "SELECT \(storage.entityColumn.quotedSQLIdentifier), \(idColumn.quotedSQLIdentifier) FROM \(table.quotedSQLIdentifier) "
                    + "WHERE \(idColumn.quotedSQLIdentifier) IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", ")))"
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(ids)) {
                    guard let id = String.fromDatabaseValue(row[1] as DatabaseValue),
                          let entity = layout.entity(withDiscriminator: row[0] as DatabaseValue, inTable: table) else { continue }
                    if taken[ExactText(id)] == nil { taken[ExactText(id)] = entity }
                }
            }
        }
        var problems = ProblemList()
        for object in objects {
            if let existing = taken[ExactText(object.id)] {
                problems.add(object.entity, object.id, "id", "the store already has \(English.withArticle(existing)) object with id '\(object.id)'")
            }
        }
        try problems.throwIfAny()
    }

    /// How many ids one question about taken ids names (SQLite binds up to 32,766).
    static let idsPerQuestion = 500

    /// Writes each relationship link once, where the layout keeps it: from new objects, and from
    /// existing objects only what the new ones add (placed after what they already hold).
    private func writeRelationships(resolver: ObjectGraphResolver, keys: [Int64], writer: RowWriter, _ db: Database) throws {
        // Positions in long lists (a tag on every recipe) are looked up in an index made once per
        // list: searching the list for each of its members is quadratic.
        var indexes: [Int: [String: [Int: Int]]] = [:]
        var nextPositions: [Int: [String: Int]] = [:]
        /// Where `member` stands in `owner`'s list for `relationship`.
        func position(of member: Int, in owner: Int, _ relationship: String) throws -> Int {
            var offset = 0
            if resolver.isExisting(owner) {
                if let known = nextPositions[owner]?[relationship] {
                    offset = known
                } else {
                    offset = try nextPosition(in: relationship, of: resolver.objects[owner].entity, key: keys[owner], db) ?? (resolver.storedCounts[owner][relationship] ?? 0)
                    nextPositions[owner, default: [:]][relationship] = offset
                }
            }
            guard let list = resolver.related[owner][relationship] else { return offset }
            if list.count <= 16 { return try place(offset, list.firstIndex(of: member) ?? 0, owner, relationship) }
            if indexes[owner]?[relationship] == nil {
                var index: [Int: Int] = [:]
                for (position, item) in list.enumerated() where index[item] == nil { index[item] = position }
                indexes[owner, default: [:]][relationship] = index
            }
            return try place(offset, indexes[owner]?[relationship]?[member] ?? 0, owner, relationship)
        }
        /// The place `index` after `offset`, or an error when positions would run past the largest SQLite counts.
        func place(_ offset: Int, _ index: Int, _ owner: Int, _ relationship: String) throws -> Int {
            let (sum, overflow) = offset.addingReportingOverflow(index)
            guard !overflow else {
                throw MapcError.store("\(resolver.objects[owner].entity) '\(resolver.objects[owner].id)' holds positions in '\(relationship)' so large that the new objects would go past the largest SQLite can count: renumber the positions first")
            }
            return sum
        }
        for (index, object) in resolver.objects.enumerated() {
            guard let entity = schema.entity(named: object.entity), let storage = layout.entities[object.entity] else { continue }
            for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
                let targets = resolver.related[index][relationship.name] ?? []
                guard !targets.isEmpty else { continue }
                let inverse = schema.mutualInverse(of: relationship)
                switch storage.relationships[relationship.name] {
                case .foreignKey?:
                    guard let target = targets.first else { continue }
                    try writer.link(relationship.name, of: storage, owner: keys[index], target: keys[target],
                                    inversePosition: try inverse.map { try position(of: index, in: target, $0.name) })
                case .joinTable(_, _, _, _, _, _, writesRows: true)?:
                    for target in targets {
                        try writer.link(relationship.name, of: storage, owner: keys[index], target: keys[target],
                                        position: try position(of: target, in: index, relationship.name),
                                        inversePosition: try inverse.map { try position(of: index, in: target, $0.name) })
                    }
                case .inverseForeignKey? where inverse == nil:
                    // A to-many without an inverse, kept in a hidden key on its objects' rows.
                    for target in targets {
                        do { try writer.link(relationship.name, of: storage, owner: keys[index], target: keys[target]) } catch let conflict as OwnerConflict {
                            // Keys are numbered per table (Core Data's per hierarchy): the holder is the object of that key in the owner's table.
                            let holderIndex = keys.indices.first { keys[$0] == conflict.holder && (try? layout.storage(of: resolver.objects[$0].entity))?.table == storage.table }
                            let holder = holderIndex.map { "\(resolver.objects[$0].entity) '\(resolver.objects[$0].id)'" } ?? "the \(conflict.ownerEntity) with key \(conflict.holder)"
                            throw DataValidationError(problems: [DataProblem(entity: object.entity, objectID: object.id, key: relationship.name,
                                                                             message: conflict.explanation(target: "\(resolver.objects[target].entity) '\(resolver.objects[target].id)'", holder: holder))], total: 1)
                        }
                    }
                default:
                    // Kept by the other side: an inverse foreign key, or a join table the inverse writes.
                    continue
                }
            }
        }
    }
}

extension Store {
    /// The position after the last one an existing object's ordered relationship holds: stored
    /// positions need not be 0, 1, 2… (a store may number them from 1 or leave gaps), so a new
    /// member goes after the highest, not at the count. Nil when the relationship keeps no positions.
    /// `load` and a migration's to-one side both place new members with it.
    package func nextPosition(in relationship: String, of entity: String, key: Int64, _ db: Database) throws -> Int? {
        let found: (table: String, owner: String, order: String)
        switch layout.entities[entity]?.relationships[relationship] {
        case .inverseForeignKey(let table, let column, let order?, _)?: found = (table, column, order)
        case .joinTable(let table, let owner, _, let order?, _, _, _)?: found = (table, owner, order)
        default: return nil
        }
        // Prepared once per connection: a run asks it once per owner of a list, which may be every object.
        let highest = try Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(\(found.order.quotedSQLIdentifier)) FROM \(found.table.quotedSQLIdentifier) WHERE \(found.owner.quotedSQLIdentifier) = ?"), arguments: [key])
        guard let highest else { return 0 }
        guard highest < Int.max else {
            throw MapcError.store("\(entity) with key \(key) holds the largest position SQLite can count in '\(relationship)' (\(found.table).\(found.order)): no object can go after it; renumber the positions first")
        }
        return highest + 1
    }

    /// The column of a to-one relationship that `link` sets with one column of the owner's row
    /// and nothing else (no position in an ordered inverse, no one-to-one inverse's column): such
    /// a link may be written with the row itself. Nil for any other relationship.
    package func linkColumn(_ relationship: String, of storage: EntityStorage) -> String? {
        guard case .foreignKey(let column, _, nil)? = storage.relationships[relationship], oneToOneInverse(relationship, of: storage) == nil else { return nil }
        return column
    }

    /// For a to-one relationship whose inverse is to-one too: the inverse's column (both sides keep one).
    func oneToOneInverse(_ relationship: String, of storage: EntityStorage) -> (column: String, table: String)? {
        guard let entity = schema.entity(named: storage.entity), case .relationship(let description)? = schema.property(named: relationship, in: entity),
              let inverse = schema.mutualInverse(of: description), !inverse.isToMany, let destination = schema.entity(named: description.destination),
              let owner = schema.ancestry(of: destination).first(where: { $0.relationships.contains { $0.name == inverse.name } }),
              case .foreignKey(let column, let table, _)? = layout.entities[owner.name]?.relationships[inverse.name] else { return nil }
        return (column, table)
    }
}
