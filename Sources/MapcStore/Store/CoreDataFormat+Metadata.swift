import Foundation
package import GRDB
import MapcFoundation
import MapcModel

extension CoreDataFormat {
    func recognizes(_ db: Database) throws -> Bool {
        try db.tableExists("Z_METADATA") && db.tableExists("Z_PRIMARYKEY")
    }

    func entityHashes(of schema: Schema) -> [String: String] {
        CoreDataVersionHash.entityHashes(of: schema)
    }

    /// The decoded `Z_PLIST` of the store's metadata row, with its UUID; `exact` (to write it
    /// back) refuses a value Foundation's types do not hold as it is (`PropertyList.decode`),
    /// throwing its `PropertyList.Problem`.
    func metadataPlist(_ db: Database, exact: Bool = false) throws -> (uuid: String?, plist: [String: Any], data: Data) {
        guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1") else {
            throw MapcError.store("the Core Data metadata is missing: Z_METADATA has no row")
        }
        let uuid = String.fromDatabaseValue(row[0] as DatabaseValue)
        guard let data = Data.fromDatabaseValue(row[1] as DatabaseValue) else {
            throw MapcError.store("the Core Data metadata is damaged: Z_METADATA.Z_PLIST is not a property list")
        }
        let plist: Any
        do { plist = try PropertyList.decode(data, maxExpandedObjects: Self.maxMetadataObjects, perObject: 4, exact: exact, rewritten: Self.rewrittenKeys) } catch {
            let damaged = (error as? PropertyList.Problem)?.isMalformed == true
            if let problem = error as? PropertyList.Problem, problem.isInexact { throw problem }
            throw MapcError.store("the Core Data metadata (Z_METADATA.Z_PLIST) cannot be read: \(error)" + (damaged ? "; the store is damaged, and its metadata tells its version: restore it from a backup" : ""))
        }
        guard let dictionary = plist as? [String: Any] else {
            throw MapcError.store("the Core Data metadata is damaged: Z_METADATA.Z_PLIST is not a dictionary")
        }
        return (uuid, dictionary, data)
    }

    /// The most objects a store's metadata may expand to through shared references, unless it
    /// holds a quarter as many itself: Core Data writes tens, and every object past the limit
    /// costs its share of writing the list back (which keeps no sharing), so a few objects
    /// standing for many stop here, within seconds; an app's large value is read.
    static let maxMetadataObjects = 100_000

    func readMetadata(_ db: Database) throws -> StoreMetadata {
        let (uuid, plist, data) = try metadataPlist(db)
        guard let stored = plist["NSStoreModelVersionHashes"] as? [String: Any] else {
            if let found = plist["NSStoreModelVersionHashes"] {
                throw MapcError.store("the Core Data metadata's NSStoreModelVersionHashes, which identify the store's version, is \(Self.describe(found, limit: 80)), not a dictionary of entity names and hashes: the metadata is damaged")
            }
            throw MapcError.store("the Core Data metadata has no NSStoreModelVersionHashes, which identify the store's version")
        }
        var hashes: [String: String] = [:]
        for (name, value) in stored {
            guard let data = value as? Data else { throw MapcError.store("the Core Data metadata's hash of entity '\(name)' is not data") }
            hashes[name] = data.base64EncodedString()
        }
        let identifiers = (plist["NSStoreModelVersionIdentifiers"] as? [Any])?.compactMap { $0 as? String } ?? []
        var properties: [String: String] = [:]
        for (key, value) in plist where key != "NSStoreModelVersionHashes" && key != Self.historyKey {
            properties[key] = Self.describe(value)
        }
        properties[Self.rawPlistKey] = data.base64EncodedString()
        // The entities the metadata names must be the store's: an unknown one gets no table.
        let known = Set(try String.fetchAll(db, sql: "SELECT Z_NAME FROM Z_PRIMARYKEY WHERE typeof(Z_NAME) = 'text'"))
        let unknown = hashes.keys.sorted().filter { !known.contains($0) }
        if !unknown.isEmpty {
            let names = unknown.prefix(5).map { "'\($0)'" }.joined(separator: ", ") + (unknown.count > 5 ? " and \(unknown.count - 5) more" : "")
            // A store Core Data keeps for one configuration of several has the hashes of the whole
            // model but the tables and keys of its configuration's entities only.
            throw MapcError.store("the Core Data metadata names \(unknown.count == 1 ? "entity" : "entities") \(names), which Z_PRIMARYKEY does not list; the store is damaged, "
                                  + "from another model, or one Core Data keeps for a single configuration of a model with several (the other entities in another store file): "
                                  + "mapc keeps every entity of a version in one store and does not migrate such a store")
        }
        return StoreMetadata(format: identifier, model: nil, version: identifiers.filter { !$0.isEmpty }.joined(separator: ", ").nilIfEmpty,
                             entityHashes: hashes, storeUUID: uuid, properties: properties)
    }

    /// A metadata value as text, for `mapc status`: text inside a list or dictionary is quoted,
    /// so an empty identifier shows (`[""]`) and a comma does not split one.
    ///
    /// At most `limit` characters, then "…": a property list shares its parts by reference, so a
    /// few hundred bytes can stand for a value of millions of elements, and only what is shown is
    /// walked (a value of 2^16 shared leaves took seconds to describe whole).
    static func describe(_ value: Any, quotingText: Bool = false, limit: Int = 2_000) -> String {
        var text = ""
        write(value, quotingText: quotingText, into: &text, limit: limit)
        return text.utf8.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    /// Appends `value` to `text` until `text` is past `limit` bytes.
    private static func write(_ value: Any, quotingText: Bool, into text: inout String, limit: Int) {
        guard text.utf8.count <= limit else { return }
        switch value {
        case let string as String: text += quotingText ? JSONValue.string(string).serialized() : string
        // A boolean as one (the decoder's booleans are NSNumbers of Objective-C's `char`).
        case _ where PropertyList.boolean(value) != nil: text += PropertyList.boolean(value) == true ? "true" : "false"
        case let number as NSNumber: text += number.stringValue
        case let data as Data: text += "<\(data.count) bytes>"
        // A date as its instant; one no calendar holds (NaN, infinite, past a year's digits) as
        // its seconds (`Date.description` traps on NaN).
        case let date as Date:
            let seconds = date.timeIntervalSinceReferenceDate
            text += Timestamp(seconds: seconds, since: .reference).map { ISO8601.format($0) } ?? "<a date \(seconds) seconds after 2001-01-01>"
        case let array as [Any]:
            text += "["
            for (index, element) in array.enumerated() {
                guard text.utf8.count <= limit else { return }
                if index > 0 { text += ", " }
                write(element, quotingText: true, into: &text, limit: limit)
            }
            text += "]"
        case let dictionary as [String: Any]:
            text += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                guard text.utf8.count <= limit else { return }
                if index > 0 { text += ", " }
                write(key, quotingText: true, into: &text, limit: limit)
                text += ": "
                write(dictionary[key] ?? "", quotingText: true, into: &text, limit: limit)
            }
            text += "}"
        default: text += "\(value)"
        }
    }

    /// Core Data's stores vacuum incrementally (its `_NSAutoVacuumLevel` 2), which SQLite takes
    /// only before the first table and outside a transaction.
    func configureNewFile(_ db: Database) throws {
        try db.execute(sql: "PRAGMA auto_vacuum = 2")
    }

    func createStore(for schema: Schema, layout: StoreLayout, in db: Database, carrying previous: StoreMetadata?) throws {
        for table in layout.tables {
            let columns = table.columns.map { "\(Self.sqlName($0.name)) \($0.sqlType)\($0.constraints.isEmpty ? "" : " " + $0.constraints)" } + table.constraints
            // Written as Core Data writes them: `CREATE TABLE ZNOTE ( Z_PK …, … )`, with no space
            // after an entity table's last constraint, and `CREATE TABLE Z_1BOOKS ( …, PRIMARY KEY (…) )`.
            let isEntityTable = table.columns.first?.name == "Z_PK"
            let body = columns.joined(separator: ", ")
            let sql = "CREATE TABLE \(Self.sqlName(table.name)) ( \(body)\(isEntityTable && !table.constraints.isEmpty ? "" : " "))"
            try db.execute(sql: sql)
        }
        try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try db.execute(sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        try db.execute(sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        for table in layout.tables {
            for index in table.indexes {
                try db.execute(sql: "CREATE INDEX \(Self.sqlName(index.name)) ON \(Self.sqlName(table.name)) (\(index.columns.map(Self.sqlName).joined(separator: ", ")))")
            }
        }
        let numbering = Self.numbering(of: schema)
        let numbers = Dictionary(numbering.map { ($0.entity.name, $0.number) }, uniquingKeysWith: { first, _ in first })
        for (entity, number) in numbering {
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                           arguments: [number, entity.name, entity.parent.flatMap { numbers[$0] } ?? 0])
        }
        try writeMetadata(schema: schema, carrying: previous, history: nil, db)
    }

    /// Writes the metadata row: this version's hashes and identifiers, and everything else the
    /// previous store recorded (its UUID, the app's keys).
    func writeMetadata(schema: Schema?, carrying previous: StoreMetadata?, history: [HistoryEntry]?, _ db: Database) throws {
        var plist: [String: Any] = [:]
        var uuid = previous?.storeUUID ?? UUID().uuidString.uppercased()
        // An app's value that would not be written back as it is stops the write: a key of the
        // app's changed by a migration is data changed without a word.
        func carried<T>(_ read: () throws -> T) throws -> T? {
            do { return try read() } catch let problem as PropertyList.Problem where problem.isInexact { throw Self.notWrittenBack(problem) } catch { return nil }
        }
        if let previous, previous.format == identifier, let carried = try carried({ try Self.previousPlist(previous) }) {
            plist = carried
        } else if try db.tableExists("Z_METADATA"), let current = try carried({ try metadataPlist(db, exact: true) }), current.plist["NSStoreModelVersionHashes"] != nil {
            plist = current.plist
            uuid = current.uuid ?? uuid
        }
        if let schema {
            let hashes = CoreDataVersionHash.entityHashes(of: schema)
            plist["NSStoreModelVersionHashes"] = hashes.mapValues { Data(base64Encoded: $0) ?? Data() }
            plist["NSStoreModelVersionIdentifiers"] = [schema.versionIdentifier ?? ""]
            plist["NSStoreModelVersionHashesVersion"] = 3
            plist["NSStoreType"] = "SQLite"
            if plist["NSPersistenceFrameworkVersion"] == nil { plist["NSPersistenceFrameworkVersion"] = 1_000 }
            if plist["_NSAutoVacuumLevel"] == nil { plist["_NSAutoVacuumLevel"] = "2" }
            if plist["NSStoreModelVersionHashesDigest"] != nil { plist["NSStoreModelVersionHashesDigest"] = CoreDataVersionHash.digest(of: hashes) }
            plist["NSStoreModelVersionChecksumKey"] = nil
        }
        if let history {
            plist[Self.historyKey] = JSONValue.array(history.map(Self.json)).serialized()
        }
        guard let data = PropertyList.binaryData(plist) else {
            throw MapcError.store("the Core Data metadata holds a value that cannot be written back as a property list")
        }
        try db.execute(sql: "DELETE FROM Z_METADATA")
        try db.execute(sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)", arguments: [uuid, data])
    }

    /// The property list a previous Core Data store's metadata came from (kept as text in `properties`).
    private static func previousPlist(_ metadata: StoreMetadata) throws -> [String: Any] {
        guard let encoded = metadata.properties[rawPlistKey], let data = Data(base64Encoded: encoded),
              let plist = try PropertyList.decode(data, maxExpandedObjects: maxMetadataObjects, perObject: 4, exact: true, rewritten: rewrittenKeys) as? [String: Any] else { return [:] }
        return plist
    }

    /// The metadata keys a write replaces (the version's hashes and identifiers, mapc's history):
    /// theirs are not carried, so they need not decode exactly (Core Data's identifiers may be a set).
    static let rewrittenKeys: Set<String> = ["NSStoreModelVersionHashes", "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesDigest",
                                             "NSStoreModelVersionChecksumKey", historyKey]

    /// Why the metadata is not written: a value of the app's in it would change.
    private static func notWrittenBack(_ problem: PropertyList.Problem) -> MapcError {
        MapcError.store("the Core Data metadata (Z_METADATA.Z_PLIST) key \(problem.description) by mapc, so writing the store would change the app's value: "
                        + "nothing was written; have the app change or remove that key (NSPersistentStoreCoordinator's setMetadata), then run again")
    }

    /// Where the whole metadata property list travels with a `StoreMetadata` (base64 of the binary plist).
    static let rawPlistKey = "mapc.raw-metadata"

    func ownsTable(_ name: String) -> Bool {
        ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains(name.uppercased())
    }

    /// Core Data's own tables are read as Core Data writes them; the history is in the metadata.
    var ownTableColumns: [String: [String]] { [:] }

    func readHistory(_ db: Database) throws -> [HistoryEntry] {
        let (_, plist, _) = try metadataPlist(db)
        guard let text = plist[Self.historyKey] as? String, case .array(let items)? = try? JSONValue.parse(Data(text.utf8), path: "history") else { return [] }
        return items.compactMap(Self.entry)
    }

    func writeHistory(_ entries: [HistoryEntry], _ db: Database) throws {
        try writeMetadata(schema: nil, carrying: nil, history: entries, db)
    }

    private static func json(_ entry: HistoryEntry) -> JSONValue {
        .object([("from", .string(entry.fromVersion)), ("fromHash", .string(entry.fromHash)), ("to", .string(entry.toVersion)), ("toHash", .string(entry.toHash)),
                 ("inferred", .bool(entry.inferred)), ("mappingSHA256", .string(entry.mappingSHA256)), ("startedAt", .string(entry.startedAt)),
                 ("finishedAt", .string(entry.finishedAt)), ("created", entry.createdObject)]
                + (entry.tool.map { [("tool", JSONValue.string($0))] } ?? []))
    }

    private static func entry(_ json: JSONValue) -> HistoryEntry? {
        func text(_ key: String) -> String { if case .string(let value)? = json[key] { return value } else { return "(missing)" } }
        var created: [String: Int] = [:]
        if case .object(let pairs)? = json["created"] { for (name, value) in pairs { if case .integer(let n) = value { created[name] = Int(n) } } }
        let inferred: Bool = { if case .bool(let flag)? = json["inferred"] { return flag } else { return false } }()
        return HistoryEntry(fromVersion: text("from"), fromHash: text("fromHash"), toVersion: text("to"), toHash: text("toHash"), inferred: inferred,
                            mappingSHA256: text("mappingSHA256"), startedAt: text("startedAt"), finishedAt: text("finishedAt"), created: created,
                            tool: { if case .string(let value)? = json["tool"] { return value } else { return nil } }())
    }
}

extension String {
    /// Nil for the empty string.
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
