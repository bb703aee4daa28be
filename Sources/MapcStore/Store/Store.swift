internal import CMapcSystem
import Foundation
package import GRDB
import MapcFoundation
import MapcModel

/// A SQLite store laid out for one schema version, in a `StoreFormat` (mapc's or Core Data's).
///
/// Open it with `Store.create(at:schema:format:)`, `Store.open(at:schema:)`, `Store.open(at:catalog:)`
/// or `Store.inMemory(schema:format:)`; the format of an existing file is detected from it.
/// Reading and writing objects goes through `ObjectData` (see `Store+Objects.swift`).
public final class Store: @unchecked Sendable {
    /// The SQLite connection (GRDB serializes access to it), until `close()`.
    private let queue: DatabaseQueue
    /// The SQLite connection; a store used after `close()` throws rather than touching a closed
    /// connection (which SQLite does not survive).
    package var database: DatabaseQueue {
        get throws {
            guard !lock.withLock({ isClosed }) else {
                throw MapcError.store("\(path ?? "the store") was closed (Store.close()); open it again to use it")
            }
            return queue
        }
    }
    /// Whether `close()` was called.
    private var isClosed = false
    /// The schema the store is laid out for.
    public let schema: Schema
    /// Tables and columns of each entity.
    package let layout: StoreLayout
    /// The store's format.
    public let format: StoreFormat
    /// The format's strategy, which also encodes and decodes values.
    package var strategy: any StoreFormatStrategy { format.strategy }
    /// The file's path; nil for in-memory stores.
    public let path: String?
    /// The file `path` named just after the store's connection opened it (nil in memory): another
    /// connection opened later by `path` reads the same store only if the path still names it.
    let fileIdentity: Files.FileIdentity?
    /// Seconds to wait for another process's lock before reporting the store as in use.
    static let busyTimeout: TimeInterval = 2

    /// Work-lifetime state: the read transaction a migration holds on the store (so its many small
    /// reads on this connection share one snapshot and no per-read transaction), and each entity's
    /// read plan.
    private let lock = NSLock()
    private var activeReader: Database?
    private var readPlans: [ReadPlanKey: ReadPlan] = [:]

    /// A store laid out as `layout` says, or (nil) as its format lays out a new store.
    private init(database: DatabaseQueue, schema: Schema, format: StoreFormat, path: String?, layout: StoreLayout? = nil) {
        self.queue = database
        self.schema = schema
        self.format = format
        self.layout = layout ?? format.strategy.layout(for: schema)
        self.path = path
        fileIdentity = path.flatMap(Files.identity(of:))
    }

    /// Creates an empty store file for the schema. Refuses to overwrite an existing non-empty file.
    /// `carrying` is the metadata of a store being migrated into it (a Core Data store keeps its UUID and app keys).
    public static func create(at path: String, schema: Schema, format: StoreFormat = .mapc, carrying previous: StoreMetadata? = nil) throws -> Store {
        try create(at: path, schema: schema, format: format, carrying: previous, writingBehind: false)
    }

    /// Creates a store file; with `writingBehind`, opened through the write-behind VFS so that
    /// `beginWritingBehind` can start (a migration step's temporary file, and nothing else).
    /// `joinTableNames` and `columnNames`: a store's join tables and columns named otherwise than
    /// this layout predicts, which the new store keeps where it has the same tables and columns
    /// (a migration's destination).
    package static func create(at path: String, schema: Schema, format: StoreFormat, carrying previous: StoreMetadata?, writingBehind: Bool,
                               joinTableNames: [JoinTableNaming] = [], columnNames: [ColumnNaming] = []) throws -> Store {
        if let refusal = format.refusal(writing: schema) { throw MapcError.store(refusal) }
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber, size.intValue > 0 {
            throw MapcError.store("\(path) already exists; choose a new path or delete the file first")
        }
        let queue = try openQueue(path: path, readOnly: false, openingAs: writingBehind ? writeBehindPath(path) : nil)
        let layout = joinTableNames.isEmpty && columnNames.isEmpty ? nil : format.strategy.layout(for: schema).namingJoinTables(as: joinTableNames).namingColumns(as: columnNames)
        let store = Store(database: queue, schema: schema, format: format, path: path, layout: layout)
        try store.createTables(carrying: previous)
        return store
    }

    /// This store's attribute columns named otherwise than mapc predicts for its version.
    package var columnDepartures: [ColumnNaming] {
        strategy.layout(for: schema).columnDepartures(in: layout)
    }

    /// This store's join tables named otherwise than mapc predicts for its version.
    package var joinTableDepartures: [JoinTableNaming] {
        strategy.layout(for: schema).joinTableDepartures(in: layout)
    }

    /// Creates an empty in-memory store, for tests and previews.
    public static func inMemory(schema: Schema, format: StoreFormat = .mapc) throws -> Store {
        let store = Store(database: try DatabaseQueue(), schema: schema, format: format, path: nil)
        try store.createTables(carrying: nil)
        return store
    }

    /// Opens an existing store and checks that its hashes match the schema's.
    public static func open(at path: String, schema: Schema, readOnly: Bool = false) throws -> Store {
        let queue = try openQueue(path: path, readOnly: readOnly)
        let (format, metadata) = try readMetadata(queue, path: path)
        guard metadata.matches(schema, format: format) else {
            let details = metadata.differences(from: schema, format: format).joined(separator: "; ")
            throw MapcError.store("\(path) was written by \(metadata.version.map { "version \($0)" } ?? "another version") and does not match version \(schema.version): \(details)")
        }
        return try Store(database: queue, schema: schema, format: format, path: path, layout: try existingLayout(queue, schema: schema, format: format)).checkingTables()
    }

    /// The layout of an existing store, as its file keeps it.
    private static func existingLayout(_ queue: DatabaseQueue, schema: Schema, format: StoreFormat) throws -> StoreLayout {
        try queue.read { try format.strategy.layout(for: schema, in: $0) }
    }

    /// Opens an existing store with whichever catalog version matches its hashes.
    public static func open(at path: String, catalog: SchemaCatalog, readOnly: Bool = false) throws -> Store {
        let queue = try openQueue(path: path, readOnly: readOnly)
        let (format, metadata) = try readMetadata(queue, path: path)
        guard let schema = catalog.version(of: metadata, format: format) else {
            throw catalog.unidentifiedStore(at: path, format: format, metadata: metadata)
        }
        return try Store(database: queue, schema: schema, format: format, path: path, layout: try existingLayout(queue, schema: schema, format: format)).checkingTables()
    }

    /// The store, once every table and column its layout reads is there: a store whose metadata
    /// matches a version but which lacks one of them (dropped, or damaged) is refused at once,
    /// naming it, rather than failing with "no such table/column" at whichever read comes first.
    private func checkingTables() throws -> Store {
        let present = try database.read { db in
            Set(try String.fetchAll(db, sql: "SELECT lower(name) FROM sqlite_master WHERE type = 'table'"))
        }
        // A generated column (which neither Core Data nor mapc makes) is computed by SQLite's
        // integrity check, every row: an expression building a value of a gigabyte per row took
        // memory without bound. Refused before any check runs.
        // Virtual tables are not asked: their columns are their module's, which may be missing.
        let generated = try database.read { db in
            let virtual = try Self.virtualTableNames(db)
            var found: [(table: String, column: String)] = []
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") where !virtual.contains(table.lowercased()) && found.count < 5 {
                found += try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3)", arguments: [table]).map { (table: table, column: $0) }
            }
            return found
        }
        if let first = generated.first {
            throw MapcError.store("\(path ?? "the store") has generated columns (\(generated.map { "\($0.table).\($0.column)" }.joined(separator: ", "))), which neither Core Data nor mapc makes "
                                  + "and which SQLite computes for every row it checks, at any cost; remove them (SQLite: ALTER TABLE \(first.table.quotedSQLIdentifier) DROP COLUMN \(first.column.quotedSQLIdentifier)), and run again")
        }
        // A view in a table's place (another tool's) is named as such: "no table" alone sends
        // the reader looking for a table that was dropped.
        let views = try database.read { db in
            Set(try String.fetchAll(db, sql: "SELECT lower(name) FROM sqlite_master WHERE type = 'view'"))
        }
        for table in layout.tables where !present.contains(table.name.lowercased()) && views.contains(table.name.lowercased()) {
            throw MapcError.store("\(path ?? "the store")'s \(table.name) is a view, where version \(schema.version) keeps a table of its objects or links: "
                                  + "neither Core Data nor mapc makes views in their tables' places; the store was changed by another program: restore it from a backup")
        }
        for table in layout.tables where !present.contains(table.name.lowercased()) {
            let members = layout.entities.values.filter { $0.table == table.name }.compactMap { schema.entity(named: $0.entity) }
            // The hierarchy's root names a shared table.
            if let owner = members.first(where: { $0.parent == nil }) ?? members.min(by: { $0.name < $1.name }) {
                throw MapcError.store("\(path ?? "the store") has no table \(table.name), where entity '\(owner.name)' of version \(schema.version) keeps its objects: "
                                      + "the store is damaged or was changed by another program; restore it from a backup")
            }
            // A join table: its name follows Core Data's observed rule, which a store may not.
            let joins = present.filter { $0.hasPrefix("z_") && $0.dropFirst(2).first?.isNumber == true }.sorted()
            throw MapcError.store("\(path ?? "the store") has no table \(table.name), where version \(schema.version) keeps a to-many relationship's links (a many-to-many, or an ordered to-many without an inverse)"
                                  + (joins.isEmpty ? "" : " (the store has \(joins.joined(separator: ", ")))")
                                  + ": if Core Data wrote the store, it named the table otherwise than mapc expects; please report it with the model")
        }
        // Every column an entity's objects are read from (keys, entity, identity, attributes, to-one
        // relationships): a dropped one is named with what it keeps. Columns only written (Core
        // Data's Z_OPT) or named by rules observed rather than documented (join tables' and
        // ordering columns) are not required here.
        var columnsByTable: [String: Set<String>] = [:]
        for storage in layout.entities.values.sorted(by: { $0.entity < $1.entity }) {
            if columnsByTable[storage.table] == nil {
                columnsByTable[storage.table] = try database.read { db in
                    Set(try String.fetchAll(db, sql: "SELECT lower(name) FROM pragma_table_info(?)", arguments: [storage.table]))
                }
            }
            let present = columnsByTable[storage.table] ?? []
            var kept: [(column: String, what: String)] = [(storage.primaryKey, "the objects' keys"), (storage.entityColumn, "the objects' entity")]
            if let idColumn = storage.idColumn { kept.append((idColumn, "the objects' identities")) }
            kept += storage.attributeColumns.sorted { $0.key < $1.key }.map { ($0.value, "attribute '\($0.key)' of entity '\(storage.entity)'") }
            for (name, relationship) in storage.relationships.sorted(by: { $0.key < $1.key }) {
                switch relationship {
                case .foreignKey(let column, _, _): kept.append((column, "relationship '\(name)' of entity '\(storage.entity)'"))
                case .joinTable(let table, let owner, let other, let ownerOrder, let otherOrder, _, _):
                    // A join table's columns, named as the store names them (`reconciled`): one missing is named with what it keeps.
                    let columns = try database.read { db in try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table]) }
                    let present = Set(columns.map { $0.lowercased() })
                    if let missing = ([owner, other] + [ownerOrder, otherOrder].compactMap { $0 }).first(where: { !present.contains($0.lowercased()) }) {
                        throw MapcError.store("\(path ?? "the store") has no column \(missing) in table \(table), where relationship '\(name)' of entity '\(storage.entity)' of version \(schema.version) is kept "
                                              + "(the table has \(columns.joined(separator: ", "))): the store is damaged or was changed by another program; restore it from a backup")
                    }
                default: break
                }
            }
            if let missing = kept.first(where: { !present.contains($0.column.lowercased()) }) {
                throw MapcError.store("\(path ?? "the store") has no column \(missing.column) in table \(storage.table), where \(missing.what) of version \(schema.version) \(missing.what.hasPrefix("the") ? "are" : "is") kept: "
                                      + "the store is damaged or was changed by another program; restore it from a backup")
            }
        }
        return self
    }

    /// Puts a store file a run wrote in WAL mode, as the store it replaces was: the mode is kept
    /// in the file, and an app that does not set it on opening finds it as it left it. Closing
    /// folds the log in and removes it, so the file goes into place alone.
    package static func keepWriteAheadLogMode(at path: String) throws {
        let queue = try openQueue(path: path, readOnly: false)
        let mode = try queue.writeWithoutTransaction { try String.fetchOne($0, sql: "PRAGMA journal_mode = WAL") }
        try queue.close()
        guard mode?.lowercased() == "wal" else {
            throw MapcError.store("\(path): the migrated store could not be put in WAL mode, as the store it replaces was (SQLite answered \(mode ?? "nothing"))")
        }
    }

    /// Whether the SQLite file at `path` is in WAL mode, read from its header (bytes 18 and 19
    /// are 2): for a store no connection of this run may lock.
    package static func isInWriteAheadLogMode(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        return header[18] == 2 && header[19] == 2
    }

    /// Reads a store's format and metadata without needing its schema.
    public static func metadata(at path: String) throws -> (format: StoreFormat, metadata: StoreMetadata) {
        let queue = try openQueue(path: path, readOnly: true)
        defer { try? queue.close() }
        return try readMetadata(queue, path: path)
    }

    /// Runs `body` inside one read transaction on the store: every read the store makes meanwhile
    /// on its connection (objects, keys, counts, whatever thread-compatible code asks) uses it, as
    /// one snapshot, with no transaction of its own. A migration reads its source this way; the
    /// batches it reads ahead on a connection of their own (`BatchReadAhead`) see the same rows
    /// only because no process can commit to the store meanwhile.
    package func readingInOneTransaction<T>(_ body: () throws -> T) throws -> T {
        try database.read { db in
            lock.withLock { activeReader = db }
            defer { lock.withLock { activeReader = nil } }
            return try body()
        }
    }

    /// Runs a read on the store: in the transaction `readingInOneTransaction` holds, or in a read
    /// transaction of its own.
    package func reading<T>(_ body: (Database) throws -> T) throws -> T {
        if let reader = lock.withLock({ activeReader }) { return try body(reader) }
        return try database.read(body)
    }

    /// The read plan of an entity, worked out once.
    func readPlan(_ entity: String, properties: Set<String>? = nil, make: () throws -> ReadPlan) rethrows -> ReadPlan {
        let key = ReadPlanKey(entity: entity, properties: properties)
        if let plan = lock.withLock({ readPlans[key] }) { return plan }
        let plan = try make()
        lock.withLock { readPlans[key] = plan }
        return plan
    }

    /// A read plan is for an entity and the properties read (nil: all).
    struct ReadPlanKey: Hashable {
        var entity: String
        var properties: Set<String>?
    }

    /// Closes the store's connection now rather than when the store is released (after which the
    /// store cannot be used).
    public func close() throws {
        guard !lock.withLock({ isClosed }) else { return }
        try queue.close()
        lock.withLock { isClosed = true }
    }

    /// The store's metadata.
    public func metadata() throws -> StoreMetadata {
        try Self.readMetadata(database, path: path ?? ":memory:").1
    }

    private static func readMetadata(_ queue: DatabaseQueue, path: String) throws -> (StoreFormat, StoreMetadata) {
        do {
            return try queue.read { db in
                let format = try StoreFormat.detect(db)
                return (format, try format.strategy.readMetadata(db))
            }
        } catch let error as MapcError {
            if case .store(let message) = error {
                // SQLite takes an empty file for an empty database: say what it is.
                if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber, size.intValue == 0 {
                    throw MapcError.store("\(path) is empty (0 bytes): not a store. For a new store there, remove the file and run 'mapc init' or 'mapc load'; a store copied or downloaded cut short must be restored from where it came")
                }
                throw MapcError.store("\(path): \(message)")
            }
            throw error
        } catch let error as DatabaseError {
            throw storeError(error, path: path, doing: "cannot read the store")
        }
    }

    package static func storeError(_ error: DatabaseError, path: String, doing: String) -> MapcError {
        if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            return MapcError.storeInUse(inUseMessage(path))
        }
        if error.resultCode == .SQLITE_READONLY, Files.holdsUnfinishedWrite(journal: path + "-journal") {
            if Files.modeForbidsWriting(path) {
                return MapcError.store("\(path) has an unfinished write (\(path)-journal, left by a writer that was stopped) that SQLite must roll back before it can be read, "
                                       + "and the store is read-only (its mode lets no one write it, which mapc respects as root too); make it writable (chmod u+w) and run again, "
                                       + "or copy it together with its -journal and use the copy")
            }
            return MapcError.store("\(path) has an unfinished write (\(path)-journal) that must be rolled back before it can be read, and mapc could not do it here "
                                   + "(\(error.message ?? "read-only")); run any mapc command with write access to the store and its folder, or open it once with the sqlite3 shell")
        }
        if error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            if let cut = truncation(of: path) { return MapcError.store("\(path) is damaged: \(cut)") }
            return MapcError.store("\(path) is not a SQLite store, or is damaged: \(error.message ?? "\(error)")")
        }
        if let message = error.message, message.hasPrefix("no such function: ") {
            // SQL the store's own schema runs (a trigger, a CHECK), written for functions its app registers.
            let function = String(message.dropFirst("no such function: ".count))
            return MapcError.store("\(path): \(doing): the store's schema (a trigger, a CHECK constraint or an index on an expression) calls the SQL function \(function), which the app that made the store "
                                   + "registers with SQLite and mapc does not have"
                                   + (function.hasPrefix("NSCoreData") ? " (NSCoreData… functions are Core Data's own: its triggers keep derived attributes up to date)" : "")
                                   + ", so mapc cannot write what it watches. A migration writes a new store from the model, without that schema; "
                                   + "to add objects, load them into a new store (`mapc load FILE NEW_STORE`) or add them with the app")
        }
        return MapcError.store("\(path): \(doing): \(error.message ?? "\(error)")")
    }

    /// Runs an app's call on the store: SQLite's failures reach the app as mapc's own errors,
    /// which it can catch and show (GRDB is not part of the API). The engine calls the package
    /// functions below these, whose SQLite errors it tells apart (an interrupted statement).
    func failingAsStoreErrors<T>(_ doing: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw Store.storeError(error, path: path ?? ":memory:", doing: doing)
        }
    }

    /// When a SQLite file is shorter than its header says it is (an incomplete copy, or a file cut
    /// short), what to say; nil otherwise. The header's size counts only when SQLite vouches for it
    /// (its "version-valid-for" number equals the change counter).
    static func truncation(of path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 100), header.count == 100, header.starts(with: Array("SQLite format 3\u{0}".utf8)) else { return nil }
        let bytes = [UInt8](header)
        func word(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        let rawPageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let pages = word(28)
        guard pageSize >= 512, pages > 0, word(24) == word(92), let size = try? handle.seekToEnd() else { return nil }
        let expected = pageSize * pages
        guard Int(size) < expected else { return nil }
        return "the file is \(size) bytes, but its header says \(expected): an incomplete copy, or a file cut short; "
            + "copy the store again (with its -wal and -shm files, if it has them)"
    }

    /// What to say when another process holds a lock on a store.
    package static func inUseMessage(_ path: String) -> String {
        "\(path) is in use: another process holds a lock on it (an app reading or writing it, or another mapc command); "
            + "wait for it to finish or close the app, then try again"
    }

    /// Told the path of a store whose unfinished write (a hot `-journal`, left by a writer that
    /// was stopped) SQLite rolled back as mapc opened it: the file changed, its committed content
    /// did not. Set once, before any store is opened (the command line says it in a note).
    nonisolated(unsafe) package static var unfinishedWriteRolledBack: ((String) -> Void)?

    /// Opens a connection to a store file. A read-only one first lets SQLite roll back a write a
    /// kill interrupted, unless `recovering` is off (a second connection to a store whose own
    /// connection is open: it recovered then, and a connection that only reads makes no write).
    package static func openQueue(path: String, readOnly: Bool, recovering: Bool = true, openingAs name: String? = nil) throws -> DatabaseQueue {
        // A store must be a regular file: a FIFO would block forever, a directory or device fail obscurely.
        if readOnly || Files.kind(of: path) != .missing { _ = try Files.existingStore(path) }
        let unfinishedWrite = Files.holdsUnfinishedWrite(journal: path + "-journal")
        defer {
            if unfinishedWrite, !Files.holdsUnfinishedWrite(journal: path + "-journal") { unfinishedWriteRolledBack?(path) }
        }
        if readOnly && recovering { recoverInterruptedWrite(path) }
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(Store.busyTimeout)
        // An app's own collation in an index would otherwise make SQLite refuse to read the store.
        configuration.prepareDatabase { db in _ = mapc_collation_fallback(UnsafeMutableRawPointer(db.sqliteConnection)) }
        do {
            let queue = try DatabaseQueue(path: name ?? path, configuration: configuration)
            // Touch the file so that "not a database" surfaces here, with the path.
            _ = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master") }
            return queue
        } catch let error as DatabaseError {
            if let problem = Files.unreadableFileProblem(of: path) { throw MapcError.store(problem) }
            if error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN,
               let problem = Files.kind(of: path) == .missing ? Files.uncreatableFileProblem(of: path) : Files.unwritableFolderProblem(of: path, for: readOnly ? .reading : .replacing) {
                throw MapcError.store(problem)
            }
            throw storeError(error, path: path, doing: "cannot open as a SQLite store")
        }
    }

    /// Readies a read-only connection opened beside a migration's own (its source checks, its
    /// reading ahead) to make no file operation: closing never folds a WAL store's log into its
    /// file (as the write lock's connection does not), and sorting stays in memory. The
    /// fault-injection counter numbers nothing from its thread.
    package static func quietSideConnection(_ queue: DatabaseQueue) throws {
        try queue.writeWithoutTransaction { db in
            _ = mapc_no_checkpoint_on_close(UnsafeMutableRawPointer(db.sqliteConnection))
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
    }

    /// A write interrupted by a kill or a full disk leaves a hot `-journal`, which only a
    /// connection with write access can roll back; until then read-only connections fail. Opening
    /// the store read-write once lets SQLite roll it back, as any of its readers would.
    private static func recoverInterruptedWrite(_ path: String) {
        // Not into a store whose mode lets no one write it: root respects that too, and the
        // read that follows then fails saying why.
        guard Files.holdsUnfinishedWrite(journal: path + "-journal"), !Files.isReadOnlyStore(path) else { return }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return }
        _ = try? queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master") }
        try? queue.close()
    }

    private func createTables(carrying previous: StoreMetadata?) throws {
        if let problem = layout.problems.first {
            throw MapcError.store("version \(schema.version) cannot be stored: \(problem)")
        }
        try database.writeWithoutTransaction { db in
            try strategy.configureNewFile(db)
            try db.inTransaction {
                try strategy.createStore(for: schema, layout: layout, in: db, carrying: previous)
                return .commit
            }
        }
    }

    /// The number of objects of an entity, sub-entities included unless `exactly` is set.
    public func count(of entity: String, exactly: Bool = false) throws -> Int {
        try failingAsStoreErrors("cannot count the \(entity) objects") { try countObjects(of: entity, exactly: exactly) }
    }

    /// Whether the store holds an object of exactly `entity` (its sub-entities' aside), without
    /// counting them: what planning asks of a store whose step is blocked.
    package func holdsObjects(of entity: String) throws -> Bool {
        let storage = try layout.storage(of: entity)
        return try reading { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(storage.table.quotedSQLIdentifier) WHERE \(storage.entityColumn.quotedSQLIdentifier) = ?)",
                              arguments: [storage.discriminator]) ?? true
        }
    }

    /// Whether an object of exactly `entity` has no value for `attribute` (a stored attribute of
    /// it), without counting them: what planning asks of a store whose step makes the attribute
    /// required with nothing to fill a nil with.
    package func holdsNil(of attribute: String, in entity: String) throws -> Bool {
        let storage = try layout.storage(of: entity)
        guard let column = storage.attributeColumns[attribute] else { return true }
        return try reading { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(storage.table.quotedSQLIdentifier) WHERE \(storage.entityColumn.quotedSQLIdentifier) = ? AND \(column.quotedSQLIdentifier) IS NULL)",
                              arguments: [storage.discriminator]) ?? true
        }
    }

    /// Whether an object of exactly `entity` has a value for `property` (an attribute not nil, a
    /// relationship with a link; with `linkedTo`, a link to an object of exactly one of those
    /// entities), or, with no property, whether there is such an object at all, without counting
    /// them: what a run asks of its store before a step drops those values. A property the entity
    /// does not store, or a link to entities the store does not keep together, is taken to hold values.
    package func holdsValues(of property: String?, in entity: String, linkedTo targets: Set<String>? = nil) throws -> Bool {
        guard let property else { return try holdsObjects(of: entity) }
        let storage = try layout.storage(of: entity)
        let table = storage.table.quotedSQLIdentifier, kind = storage.entityColumn.quotedSQLIdentifier
        // The keys of the objects of exactly the entity, for a link kept in another table.
        let owners = "SELECT \(storage.primaryKey.quotedSQLIdentifier) FROM \(table) WHERE \(kind) = ?"
        // The objects linked to, when only some count: their table's rows of exactly those entities.
        var linked: (table: String, key: String, kind: String, values: String)?
        if let targets {
            let stored = try targets.sorted().map { try layout.storage(of: $0) }
            guard let first = stored.first else { return false }
            guard stored.allSatisfy({ $0.table == first.table }) else { return true }
            linked = (first.table.quotedSQLIdentifier, first.primaryKey.quotedSQLIdentifier, first.entityColumn.quotedSQLIdentifier,
                      stored.map { Self.sqlLiteral($0.discriminator) }.joined(separator: ", "))
        }
        /// Keys in `column` that name a linked object (any key when every link counts).
        func linking(_ column: String) -> String {
            guard let linked else { return "\(column) IS NOT NULL" }
            return "\(column) IN (SELECT \(linked.key) FROM \(linked.table) WHERE \(linked.kind) IN (\(linked.values)))"
        }
        let sql: String
        if let column = storage.attributeColumns[property] {
            sql = "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(kind) = ? AND \(column.quotedSQLIdentifier) IS NOT NULL)"
        } else {
            switch storage.relationships[property] {
            case .foreignKey(let column, _, _)?:
                sql = "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(kind) = ? AND \(linking(column.quotedSQLIdentifier)))"
            case .inverseForeignKey(let other, let column, _, _)?:
                // The linked objects' own rows hold the link: those of the entities counted.
                let counted = linked.map { " AND \($0.kind) IN (\($0.values))" } ?? ""
                sql = "SELECT EXISTS (SELECT 1 FROM \(other.quotedSQLIdentifier) WHERE \(column.quotedSQLIdentifier) IN (\(owners))\(counted))"
            case .joinTable(let join, let ownerColumn, let otherColumn, _, _, _, _)?:
                let counted = linked == nil ? "" : " AND \(linking(otherColumn.quotedSQLIdentifier))"
                sql = "SELECT EXISTS (SELECT 1 FROM \(join.quotedSQLIdentifier) WHERE \(ownerColumn.quotedSQLIdentifier) IN (\(owners))\(counted))"
            case nil:
                return true
            }
        }
        return try reading { db in try Bool.fetchOne(db, sql: sql, arguments: [storage.discriminator]) ?? true }
    }

    /// `count(of:exactly:)` for the engine: SQLite's failures stay SQLite's.
    package func countObjects(of entity: String, exactly: Bool = false) throws -> Int {
        let storage = try layout.storage(of: entity)
        let values = exactly ? [storage.discriminator] : storage.discriminators
        let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
        return try reading { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM \(storage.table.quotedSQLIdentifier) WHERE \(storage.entityColumn.quotedSQLIdentifier) IN (\(placeholders))",
                             arguments: StatementArguments(values)) ?? 0
        }
    }
}

extension Store {
    /// Runs SQLite's quick integrity check; throws with its findings when the file is damaged.
    public func checkIntegrity() throws {
        try failingAsStoreErrors("cannot check the store") { try verifyIntegrity() }
    }

    /// `checkIntegrity()` for the engine: SQLite's failures stay SQLite's (the run's own checks
    /// are interrupted when it is cancelled, which is no finding).
    package func verifyIntegrity() throws {
        let findings = try database.read { try String.fetchAll($0, sql: Self.quickCheck) }
        guard findings != ["ok"] else { return }
        throw Self.damaged(path ?? "the store", findings: findings)
    }

    /// SQLite's quick check, its first findings.
    private static let quickCheck = "PRAGMA quick_check(20)"

    /// The error for a store SQLite's integrity check finds damaged.
    static func damaged(_ name: String, findings: [String]) -> MapcError {
        MapcError.store("\(name) is damaged (SQLite's integrity check: \(findings.prefix(5).joined(separator: "; "))); nothing was changed. "
                        + "Restore it from a backup, or recover what can be with the sqlite3 shell's .recover")
    }

    /// The error for the file at `path` when SQLite's integrity check finds it damaged (it is
    /// opened read only), nil when it is sound or cannot be checked.
    package static func damage(at path: String, naming name: String? = nil) -> MapcError? {
        guard let queue = try? openQueue(path: path, readOnly: true, recovering: false) else { return nil }
        defer { try? queue.close() }
        guard let findings = try? queue.read({ try String.fetchAll($0, sql: quickCheck) }) else { return nil }
        return findings == ["ok"] ? nil : damaged(name ?? path, findings: findings)
    }

    /// Whether a table's key column is SQLite's row id (`INTEGER PRIMARY KEY`, the key alone):
    /// then every row has a whole number of its own.
    private static func keyIsRowid(_ key: String, of table: String, _ db: Database) throws -> Bool {
        let keyed = try Row.fetchAll(db, sql: "SELECT name, upper(type) FROM pragma_table_info(?) WHERE pk > 0", arguments: [table])
        guard keyed.count == 1, let name = String.fromDatabaseValue(keyed[0][0] as DatabaseValue), name.lowercased() == key.lowercased(),
              String.fromDatabaseValue(keyed[0][1] as DatabaseValue) == "INTEGER" else { return false }
        // A WITHOUT ROWID table's INTEGER PRIMARY KEY is no row id.
        let definition = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) ?? ""
        return !definition.uppercased().replacingOccurrences(of: " ", with: "").contains("WITHOUTROWID")
    }

    /// Throws when a table holds rows whose entity the schema does not have (or has as abstract):
    /// such rows would be silently left out of a migration or a dump, so they stop both instead.
    package func checkEveryRowIsRecognised() throws {
        var problems: [String] = []
        try database.read { db in
            for (table, members) in layout.entityTables {
                guard let column = members.first?.entityColumn else { continue }
                let known = members.filter { schema.entity(named: $0.entity)?.isAbstract == false }.map(\.discriminator)
                let placeholders = Array(repeating: "?", count: known.count).joined(separator: ", ")
                let filter = known.isEmpty ? "1" : "\(column.quotedSQLIdentifier) IS NULL OR \(column.quotedSQLIdentifier) NOT IN (\(placeholders))"
                let rows = try Row.fetchAll(db, sql: "SELECT \(column.quotedSQLIdentifier), count(*) FROM \(table.quotedSQLIdentifier) WHERE \(filter) GROUP BY 1 LIMIT 5",
                                            arguments: StatementArguments(known))
                for row in rows {
                    let value = row[0] as DatabaseValue
                    let count = Int64.fromDatabaseValue(row[1] as DatabaseValue) ?? 0
                    let named = layout.entity(withDiscriminator: value, inTable: table)
                    let entity = named ?? (value.isNull ? "nil" : StoreValidator.text(value))
                    // The number of an entity whose rows are kept in another table: misplaced, not unknown.
                    if named == nil, let elsewhere = layout.entities.values.filter({ $0.discriminator == value && $0.table != table }).min(by: { $0.entity < $1.entity }) {
                        problems.append("table \(table) has \(English.count(Int(count), "row")) of entity \(entity), which is \(elsewhere.entity), whose rows belong in table \(elsewhere.table)")
                        continue
                    }
                    problems.append("table \(table) has \(English.count(Int(count), "row")) of entity \(entity), which version \(schema.version) does not have"
                                    + (named != nil ? " as a concrete entity" : ""))
                }
                // A key shared by two rows (the table rebuilt by another writer without its PRIMARY
                // KEY, which otherwise makes one row per key): objects that would become one, or be lost.
                if let key = members.first?.primaryKey, try !Self.keyIsRowid(key, of: table, db) {
                    let shared = try Row.fetchAll(db, sql: "SELECT \(key.quotedSQLIdentifier), count(*) FROM \(table.quotedSQLIdentifier) GROUP BY 1 HAVING count(*) > 1 OR \(key.quotedSQLIdentifier) IS NULL "
                                                  + "OR typeof(\(key.quotedSQLIdentifier)) != 'integer' LIMIT 5")
                    if !shared.isEmpty {
                        let listed = shared.map { row in "\(StoreValidator.text(row[0] as DatabaseValue)) (\(Int64.fromDatabaseValue(row[1] as DatabaseValue) ?? 0) rows)" }
                        problems.append("table \(table) has rows whose key \(key) is not one whole number of its own: \(listed.joined(separator: ", "))")
                    }
                }
            }
        }
        guard !problems.isEmpty else { return }
        throw MapcError.store("\(path ?? "the store") holds objects mapc cannot read, which would be lost: \(problems.joined(separator: "; ")); nothing was changed. "
                              + "Correct or delete those rows (with the sqlite3 shell), or open the store with the schema that wrote them")
    }
}

extension MapcError {
    /// A SQLite error that escaped as such, in mapc's words ("in use" for another process's lock);
    /// nil for errors that are not SQLite's. Lets callers report store errors without knowing SQLite.
    public init?(sqlite error: any Error) {
        guard let error = error as? DatabaseError else { return nil }
        let said = error.message ?? "\(error)"
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: self = .storeInUse(Store.inUseMessage("the store"))
        case .SQLITE_FULL: self = .store("the disk is full (SQLite: \(said)); nothing was changed: free some space where the new file is written (beside the store, or in the folder of `--output`) and run again")
        case .SQLITE_IOERR: self = .store("a file could not be written or read (SQLite: \(said)); nothing was changed: check the disk (its space, its errors) and run again")
        case .SQLITE_ABORT:
            // A write failed and SQLite rolled back its transaction: what was still reading stops here.
            self = .store("a write failed and SQLite rolled back the work (SQLite: \(said)); nothing was changed: the disk may be full, free some space and run again")
        case .SQLITE_NOMEM: self = .store("SQLite ran out of memory (\(said)); nothing was changed")
        default: self = .store("SQLite: \(said)")
        }
    }
}
