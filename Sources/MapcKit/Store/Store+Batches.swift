import GRDB

extension Store {
    /// Reads the objects of an entity (sub-entities excluded) in batches, in primary-key order.
    /// Each batch is read in its own short read and handed to `body` outside it, so `body` may
    /// read the store again (expressions following relationships do) and memory stays bounded by
    /// the batch size.
    public func forEachBatch(ofExactEntity entity: String, batchSize: Int = 1_000, _ body: ([ObjectData]) throws -> Void) throws {
        let storage = try layout.storage(of: entity)
        var lastKey: Int64 = .min
        while true {
            var keys: [Int64] = []
            let sql = "SELECT \(storage.primaryKey.quotedDatabaseIdentifier), \(storage.idColumn.quotedDatabaseIdentifier) FROM \(storage.table.quotedDatabaseIdentifier) WHERE \(storage.entityColumn.quotedDatabaseIdentifier) = ? AND \(storage.primaryKey.quotedDatabaseIdentifier) > ? ORDER BY \(storage.primaryKey.quotedDatabaseIdentifier) LIMIT ?"
            var ids: [String] = []
            try database.read { db in
                for row in try Row.fetchAll(db, sql: sql, arguments: [entity, lastKey, batchSize]) {
                    keys.append(try row.stored(0, "a row key of \(entity)"))
                    ids.append(try row.stored(1, "an object id of \(entity)"))
                }
            }
            guard let last = keys.last else { return }
            lastKey = last
            var batch: [ObjectData] = []
            batch.reserveCapacity(ids.count)
            try readObjects(ofExactEntity: entity, primaryKeys: keys[0]...last) { batch.append($0) }
            try body(batch)
            if keys.count < batchSize { return }
        }
    }
}
