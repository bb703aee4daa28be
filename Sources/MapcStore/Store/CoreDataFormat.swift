import Foundation
package import GRDB
import MapcFoundation
import MapcModel

/// Core Data's SQLite store format, read and written as Core Data does, so that a migrated Core
/// Data store stays one an app opens:
///
/// - one table per inheritance hierarchy, `Z` + the root entity's name in capitals, with `Z_PK`
///   (the key), `Z_ENT` (the entity's number) and `Z_OPT` (Core Data's save counter), then a
///   column `Z` + NAME per attribute and to-one relationship, grouped as Core Data groups them
///   (integers, then foreign keys and their `Z_FOK_` order columns, then dates and doubles by name,
///   then strings, then blobs), the root's properties before each sub-entity's;
/// - entities numbered 1… depth first, siblings by name; `Z_PRIMARYKEY` with each entity's number,
///   name, parent and (on the root) the largest key handed out;
/// - many-to-many relationships in join tables `Z_<n><NAME>`;
/// - `Z_METADATA` with the store's UUID and a binary property list holding the entity version
///   hashes (`NSStoreModelVersionHashes`, computed as `CoreDataVersionHash` does), the version
///   identifiers, the store type and the app's own keys, which a migration carries over;
/// - `Z_MODELCACHE`, the compiled model Core Data caches, which mapc cannot write: a migrated
///   store has it empty, and Core Data fills it again on the app's next save;
/// - dates as seconds since 2001-01-01, UUIDs as 16 bytes, booleans as 0 and 1, decimals as numbers
///   when SQLite holds them exactly and as text otherwise.
///
/// mapc keeps its migration history in the metadata under `mapc.history` (an app key, which Core
/// Data keeps and ignores). Objects have no stored identities: they are named `Entity/p<key>`, as
/// in Core Data's object URIs.
struct CoreDataFormat: StoreFormatStrategy {
    /// Creates the format.
    init() {}

    var identifier: String { "core-data" }
    var name: String { "Core Data" }

    static let historyKey = "mapc.history"
    /// Keys mapc writes itself in the metadata; every other key of a migrated store is kept.
    static let ownKeys: Set<String> = ["NSStoreModelVersionHashes", "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesVersion",
                                       "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey", "NSStoreType", historyKey]

    // MARK: Layout

    /// The entities in the numbering of an existing store, as its `Z_PRIMARYKEY` says (its rows'
    /// `Z_ENT` follow it), in number order; the predicted one (`numbering(of:)`) when the table
    /// does not number every entity of the schema, each once. Core Data's order of names differing
    /// in case, and rows a store keeps for entities its model no longer has, make the two differ.
    static func numbering(of schema: Schema, in db: Database) throws -> [(entity: Entity, number: Int)] {
        let predicted = numbering(of: schema)
        guard try db.tableExists("Z_PRIMARYKEY") else { return predicted }
        var stored: [String: Int] = [:]
        let names = Set(predicted.map(\.entity.name))
        for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE typeof(Z_ENT) = 'integer' AND typeof(Z_NAME) = 'text' ORDER BY Z_ENT") {
            guard let number = row[0] as Int64?, let name = row[1] as String?, number > 0, number <= Int64(Int32.max) else { continue }
            // Which number the version's entity has is then unknown: reading by either could take one entity's rows for another's.
            if let first = stored.updateValue(Int(number), forKey: name), names.contains(name) {
                throw MapcError.store("Z_PRIMARYKEY numbers entity '\(name)' twice (\(first) and \(number)), so which rows are its objects is not known: the store is damaged; restore it from a backup")
            }
        }
        let numbers = predicted.compactMap { stored[$0.entity.name] }
        guard numbers.count == predicted.count, Set(numbers).count == numbers.count else { return predicted }
        return predicted.map { ($0.entity, stored[$0.entity.name] ?? $0.number) }.sorted { $0.1 < $1.1 }
    }

    /// The entities in Core Data's numbering: depth first, roots and siblings by name, from 1.
    static func numbering(of schema: Schema) -> [(entity: Entity, number: Int)] {
        var result: [(Entity, Int)] = []
        func visit(_ entity: Entity) {
            result.append((entity, result.count + 1))
            for child in schema.subentities(of: entity).sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) }) { visit(child) }
        }
        for root in schema.entities.filter({ $0.parent.flatMap(schema.entity(named:)) == nil }).sorted(by: { CoreDataVersionHash.nsCompare($0.name, $1.name) }) {
            visit(root)
        }
        return result
    }

    /// Core Data's column name for a property: `Z` and the name in capitals.
    static func columnName(_ property: String) -> String { "Z" + property.uppercased() }

    /// Core Data's declared type of an attribute's column.
    static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .int16, .int32, .int64, .bool: return "INTEGER"
        case .double, .float: return "FLOAT"
        case .date: return "TIMESTAMP"
        case .decimal: return "DECIMAL"
        case .string, .uri: return "VARCHAR"
        case .binary, .transformable, .uuid: return "BLOB"
        }
    }

    /// A name as Core Data writes it in SQL: bare, unless it is not a plain identifier.
    static func sqlName(_ name: String) -> String {
        let plain = name.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        return plain ? name : name.quotedSQLIdentifier
    }

    // MARK: Values

    func encodingName(of type: AttributeType) -> String {
        switch type {
        case .date: return "date: REAL seconds since 2001"
        case .uuid: return "uuid: BLOB 16 bytes"
        case .decimal: return "decimal: DECIMAL (REAL when exact, text otherwise)"
        case .bool: return "bool: INTEGER 0 or 1"
        default: return "\(type.rawValue): \(MapcFormat.sqlType(of: type))"
        }
    }

    func storageClasses(of type: AttributeType) -> [String] {
        switch Self.sqlType(of: type) {
        case "INTEGER": return ["integer"]
        case "FLOAT", "TIMESTAMP": return ["real", "integer"]
        case "DECIMAL": return ["real", "integer", "text"]
        case "VARCHAR": return ["text"]
        default: return ["blob"]
        }
    }

    /// Seconds since 2001, Foundation's count, as Core Data stores dates.
    var dateEpoch: Timestamp.Epoch { .reference }

    func encode(_ value: Value, as type: AttributeType) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return flag.databaseValue
        case .integer(let number): return number.databaseValue
        case .double(let number): return number.databaseValue
        case .decimal(let number): return Self.decimalCell(number)
        case .string(let text): return text.databaseValue
        // Seconds since 2001, Core Data's own count: a date read from such a store comes back bit for bit.
        case .date(let date): return date.seconds(since: dateEpoch).databaseValue
        case .binary(let data): return data.databaseValue
        case .uuid(let uuid): return withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        case .uri(let text): return text.databaseValue
        case .nonUTF8Text(let bytes): return Self.textBytes(bytes)
        }
    }

    func storageProblem(_ value: Value, as type: AttributeType) -> String? {
        // NaN is written as the text 'NaN', which the column keeps.
        guard case .decimal(let number) = value, !number.isNaN else { return nil }
        guard Self.exactDecimalCell(number) == nil else { return nil }
        let stored = Double(number.description) ?? .nan
        return "decimal \(number) has more digits than a Core Data DECIMAL column keeps (it holds a 64-bit integer or a double, about 15 significant digits) and would be stored as \(stored): round it to 15 significant digits, or keep it in a string attribute"
    }

    /// The cell a DECIMAL column holds exactly for a decimal, nil when it holds none: SQLite's
    /// numeric affinity turns numeric text into an INTEGER or a REAL, so what the column keeps
    /// is a whole number within 64 bits, a double, or text that is no number ('NaN'). The double
    /// is Swift's correctly rounded one (Foundation's `doubleValue` of a decimal is off in the
    /// last bits), bound as such rather than left to SQLite's conversion of the text.
    private static func exactDecimalCell(_ number: Decimal) -> DatabaseValue? {
        if number.isNaN { return "NaN".databaseValue }
        let text = number.description
        if let whole = Int64(text) { return whole.databaseValue }
        guard let double = Double(text), double.isFinite, ValueParser.parseDecimal("\(double)") == number else { return nil }
        return double.databaseValue
    }

    /// A decimal's cell: the exact one, or (for a value `storageProblem` refuses, never written)
    /// its text.
    private static func decimalCell(_ number: Decimal) -> DatabaseValue {
        exactDecimalCell(number) ?? number.description.databaseValue
    }

    func decode(_ value: DatabaseValue, as type: AttributeType) throws -> Value {
        let decoded: Value
        func mismatch() -> MapcError { Self.unreadable(value, as: type) }
        switch (type, value.storage) {
        case (_, .null): return .null
        case (.int16, .int64(let n)), (.int32, .int64(let n)), (.int64, .int64(let n)): decoded = .integer(n)
        case (.bool, .int64(let n)):
            guard let flag = Self.bool(n) else { throw Self.notABoolean(n) }
            decoded = .bool(flag)
        case (.double, .double(let d)), (.float, .double(let d)): decoded = .double(d)
        case (.double, .int64(let n)), (.float, .int64(let n)): decoded = .double(Double(n))
        case (.date, .double(let d)): decoded = try Self.date(d, since: dateEpoch)
        case (.date, .int64(let n)): decoded = try Self.date(Double(n), since: dateEpoch)
        case (.decimal, .double(let d)):
            // The shortest digits of the double: what the column holds, as a decimal (nil beyond a decimal's range).
            guard let number = ValueParser.parseDecimal("\(d)") else { throw mismatch() }
            decoded = .decimal(number)
        case (.decimal, .int64(let n)): decoded = .decimal(Decimal(n))
        case (.decimal, .string(let text)):
            guard let number = Self.decimal(text) else { throw mismatch() }
            decoded = .decimal(number)
        case (.string, .string(let text)): decoded = .string(text)
        case (.uri, .string(let text)): decoded = .uri(text)
        // Core Data keeps a UUID as its 16 bytes; text is not one (validation refuses it too).
        case (.uuid, .blob(let data)) where data.count == 16:
            decoded = .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
        case (.uuid, .string(let text)) where UUID(uuidString: text) != nil:
            throw MapcError.store("stored value '\(text)' cannot be read as uuid: Core Data keeps a UUID as its 16 bytes, and another writer stored this one as text; "
                                  + "store its bytes instead (in SQLite, unhex(replace(<column>, '-', '')) with SQLite 3.41 or later) and run again")
        case (.binary, .blob(let data)), (.transformable, .blob(let data)): decoded = .binary(data)
        default: throw mismatch()
        }
        if let problem = ValueLimits.problem(decoded, for: type) {
            throw Self.unreadable(value, as: type, problem: problem)
        }
        return decoded
    }

    // MARK: Identities and keys

    func objectID(entity: String, key: Int64, stored: String?) -> String { "\(entity)/p\(key)" }

    /// The key of the id this format gives an object of `entity`, or nil: only that exact text
    /// (`Note/p012` and `Note/p+12` name no object, though `Int64(_:)` reads 12 from them).
    func key(fromObjectID id: String, entity: String) -> Int64? {
        let prefix = "\(entity)/p"
        guard id.hasPrefix(prefix), let key = Int64(id.dropFirst(prefix.count)), objectID(entity: entity, key: key, stored: nil) == id else { return nil }
        return key
    }

    func highestKey(inTable table: String, layout: StoreLayout, _ db: Database) throws -> Int64 {
        let largest = try Int64.fetchOne(db, sql: "SELECT max(Z_PK) FROM \(Self.sqlName(table))") ?? 0
        // Z_MAX is kept on the root's row; -1 (seen after an in-place migration) means "count again".
        let members = layout.members(ofTable: table).map { Store.sqlLiteral($0.discriminator) }
        guard !members.isEmpty else { return largest }
        let counter = try Int64.fetchOne(db, sql: "SELECT max(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT IN (\(members.joined(separator: ", "))) AND typeof(Z_MAX) = 'integer'") ?? 0
        return max(largest, counter)
    }

    func raiseKeyCounter(inTable table: String, layout: StoreLayout, to key: Int64, _ db: Database) throws {
        guard let root = Self.root(of: table, layout) else { return }
        try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(\(Self.storedKeyCounter), ?) WHERE Z_ENT = ?", arguments: [key, root.discriminator])
    }

    /// `Z_MAX` where it is a number, else 0: what another tool left there (text, a blob, NULL)
    /// is no high-water mark (`highestKey` reads none), and SQLite's `max` would keep it over
    /// any number (text sorts after numbers), leaving the counter an app reads unwritten.
    private static let storedKeyCounter = "CASE WHEN typeof(Z_MAX) = 'integer' THEN Z_MAX ELSE 0 END"

    /// The storage of a table's root entity: the one whose hierarchy holds every member.
    private static func root(of table: String, _ layout: StoreLayout) -> EntityStorage? {
        layout.members(ofTable: table).max(by: { $0.discriminators.count < $1.discriminators.count })
    }

    func finishWriting(_ db: Database, layout: StoreLayout) throws {
        // Z_MAX, kept on each hierarchy's root row, covers every key handed out.
        for (table, _) in layout.entityTables {
            guard let root = Self.root(of: table, layout) else { continue }
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(\(Self.storedKeyCounter), (SELECT COALESCE(max(Z_PK), 0) FROM \(Self.sqlName(table)))) WHERE Z_ENT = ?", arguments: [root.discriminator])
        }
        // Each to-one's destination-entity column: the entity number of the object it names, nil
        // with it (only the rows where it differs are written).
        for derived in layout.derivedColumns {
            let column = derived.column.quotedSQLIdentifier, key = derived.foreignKey.quotedSQLIdentifier
            let entity = "(SELECT d.Z_ENT FROM \(derived.destinationTable.quotedSQLIdentifier) d WHERE d.Z_PK = t.\(key))"
            try db.execute(sql: "UPDATE \(derived.table.quotedSQLIdentifier) AS t SET \(column) = \(entity) WHERE t.\(column) IS NOT \(entity)")
        }
    }
}
