import Foundation
package import GRDB
import MapcFoundation
import MapcModel

/// A store format: mapc's own (`.mapc`, "mapc-1") or Core Data's (`.coreData`). A format owns
/// everything about the file: how it is recognised, its metadata and the hashes that identify its
/// version, table and column names, keys, entity discriminators, bookkeeping columns and value
/// encodings. The format of an existing file is detected from it.
public struct StoreFormat: Sendable, CustomStringConvertible {
    /// mapc's own format, "mapc-1": one table per entity hierarchy, stored identities, ISO dates
    /// as seconds since 1970, decimals as text.
    public static let mapc = StoreFormat(MapcFormat())
    /// Core Data's SQLite format, read and written as Core Data does (see docs/core-data.md).
    public static let coreData = StoreFormat(CoreDataFormat())
    /// Every format, in the order they are tried on a file.
    public static let all: [StoreFormat] = [.mapc, .coreData]

    /// The strategy that does the work.
    package let strategy: any StoreFormatStrategy

    init(_ strategy: any StoreFormatStrategy) {
        self.strategy = strategy
    }

    /// A short identifier, recorded or recognised in the file ("mapc-1", "core-data").
    public var identifier: String { strategy.identifier }
    /// The format's name in messages ("mapc", "Core Data").
    public var name: String { strategy.name }
    public var description: String { name }
    /// The name `--layout` takes and a data file's `layout` gives ("mapc", "core-data").
    package var layoutName: String { identifier == "mapc-1" ? "mapc" : identifier }

    /// The format named by an identifier or name (`mapc`, `mapc-1`, `core-data`, `coredata`).
    public static func named(_ name: String) -> StoreFormat? {
        let wanted = name.lowercased().replacingOccurrences(of: "-", with: "")
        return all.first { $0.identifier.lowercased().replacingOccurrences(of: "-", with: "") == wanted || $0.name.lowercased().replacingOccurrences(of: " ", with: "") == wanted
            || ($0.identifier == "mapc-1" && wanted == "mapc") }
    }

    /// The entity hashes this format records for a schema: what identifies a store's version.
    public func entityHashes(of schema: Schema) -> [String: String] {
        strategy.entityHashes(of: schema)
    }

    /// Why SQLite could not hold a schema in this format (a table with too many columns), for
    /// `mapc check` to report before a store is created.
    public func problems(storing schema: Schema) -> [String] {
        strategy.layout(for: schema).problems
    }

    /// Why SQLite could not hold a schema in some format, each said once (both formats meet the
    /// same limit on an entity's columns), as errors of its file: what `mapc check` and an editor
    /// report of a version.
    package static func storageDiagnostics(of schema: Schema, in path: String) -> [Diagnostic] {
        var seen: Set<String> = []
        return all.flatMap { $0.problems(storing: schema) }.filter { seen.insert($0).inserted }
            .map { .error("this version cannot be stored: \($0)", at: FileLocation(path: path, line: 1, column: 1)) }
    }

    /// Why a store of `schema` in this format would not be the one its app reads, or nil: a Core
    /// Data store of a version whose Core Data hashes cannot be reproduced (`Entity.notImported`)
    /// would match no version of the app's model.
    package func refusal(writing schema: Schema) -> String? {
        guard identifier == StoreFormat.coreData.identifier else { return nil }
        let problems = schema.entities.compactMap(\.coreDataHashProblem)
        guard !problems.isEmpty else { return nil }
        return "version \(schema.version) cannot be written as a Core Data store: \(problems.joined(separator: "; ")), so a store mapc wrote would match no version "
            + "of the app's model. Migrate stores to this version with Core Data (mapc takes them to the version before), or keep them in mapc's format"
    }

    /// The format of an open database, or an error saying it is none of them.
    static func detect(_ db: Database) throws -> StoreFormat {
        for format in all where try format.strategy.recognizes(db) { return format }
        if try db.tableExists("Z_METADATA") {
            throw MapcError.store("the store has Core Data's metadata (Z_METADATA) but not its Z_PRIMARYKEY table, which every Core Data store has: "
                                  + "it is incomplete (copied without all of its tables, or damaged); take a complete copy of the store (with its -wal file)")
        }
        throw MapcError.store("not a store mapc knows: it has neither mapc's metadata (_mapc_metadata) nor Core Data's (Z_METADATA); stores are made by mapc ('mapc init', 'mapc load', a migration) or by Core Data")
    }
}

/// How a format does its work. The store, the validator, the migration manager and the SQL
/// compiler ask the format's strategy and its `StoreLayout`; none of them assumes one format.
package protocol StoreFormatStrategy: Sendable {
    /// A short identifier, recorded or recognised in the file ("mapc-1", "core-data").
    var identifier: String { get }
    /// The format's name in messages ("mapc", "Core Data").
    var name: String { get }
    /// Whether an open database is a store of this format (from its tables, without reading objects).
    func recognizes(_ db: Database) throws -> Bool
    /// The store's metadata: the hashes that identify its version, and what it records besides.
    func readMetadata(_ db: Database) throws -> StoreMetadata
    /// The entity hashes this format records for a schema: what identifies a store's version.
    func entityHashes(of schema: Schema) -> [String: String]
    /// The tables, columns, keys and relationship storage for a schema. Depends only on what the
    /// format's hashes cover, so that stores with equal hashes have equal layouts.
    func layout(for schema: Schema) -> StoreLayout
    /// The layout of an existing store of this format: `layout(for:)`, with what the store keeps
    /// otherwise read from it (Core Data's stores of earlier eras).
    func layout(for schema: Schema, in db: Database) throws -> StoreLayout
    /// Sets what a new database file must have before its first table (page-level settings such
    /// as auto-vacuum), outside any transaction.
    func configureNewFile(_ db: Database) throws
    /// Creates an empty store for a schema in an empty database: tables, indexes, bookkeeping and
    /// metadata. `carrying` is the metadata of the store being migrated into it, whose identity
    /// (a store UUID, an app's own keys) the new file keeps.
    func createStore(for schema: Schema, layout: StoreLayout, in db: Database, carrying previous: StoreMetadata?) throws
    /// Brings the format's bookkeeping up to date after objects were written (Core Data's key counters).
    func finishWriting(_ db: Database, layout: StoreLayout) throws
    /// The highest key ever handed out in a table: its largest key, or the format's counter when
    /// that is higher (Core Data's `Z_MAX` survives deletions); 0 for none.
    func highestKey(inTable table: String, layout: StoreLayout, _ db: Database) throws -> Int64
    /// Raises the format's counter of a table's keys to at least `key`, when the format keeps one
    /// (Core Data's `Z_MAX`): a step that keeps the keys of a store keeps its high-water mark, so
    /// that the keys of deleted objects are not handed out again under the same store UUID.
    func raiseKeyCounter(inTable table: String, layout: StoreLayout, to key: Int64, _ db: Database) throws
    /// The identity string of an object: the stored one, or one made from the key.
    func objectID(entity: String, key: Int64, stored: String?) -> String
    /// The key an identity string made by `objectID` stands for, when the format makes them.
    func key(fromObjectID id: String, entity: String) -> Int64?
    /// The SQLite value stored for an attribute value.
    func encode(_ value: Value, as type: AttributeType) -> DatabaseValue
    /// The attribute value read back from SQLite.
    func decode(_ value: DatabaseValue, as type: AttributeType) throws -> Value
    /// A name for how values of a type are encoded: two formats whose names are equal store the
    /// same value the same way, so a column can be copied from one to the other as it is.
    func encodingName(of type: AttributeType) -> String
    /// The storage classes (`typeof()`) a column of this type may hold, for validation.
    func storageClasses(of type: AttributeType) -> [String]
    /// Where the format counts a date's seconds from (mapc's from 1970, Core Data's from 2001).
    var dateEpoch: Timestamp.Epoch { get }
    /// Why `value` cannot be stored exactly in a column of `type` in this format, or nil when it can.
    /// Checked before every insert, so a format with narrower columns refuses a value instead of
    /// rounding it.
    func storageProblem(_ value: Value, as type: AttributeType) -> String?
    /// Whether a table no entity's layout names is the format's own bookkeeping (metadata, key
    /// counters, history), which the format writes in every store it makes.
    func ownsTable(_ name: String) -> Bool
    /// The columns of the format's own tables that it reads row by row (its history), by table:
    /// any other column in one of them was put there by someone else, and a migration, which
    /// writes these tables anew, leaves it out.
    var ownTableColumns: [String: [String]] { get }
    /// Reads the migration history the store keeps, oldest first.
    func readHistory(_ db: Database) throws -> [HistoryEntry]
    /// Replaces the migration history a store keeps.
    func writeHistory(_ entries: [HistoryEntry], _ db: Database) throws
}

extension StoreFormatStrategy {
    func layout(for schema: Schema, in db: Database) throws -> StoreLayout { layout(for: schema) }

    /// The first key not used in a table (keys are never reused), or an error when every key is.
    func firstFreeKey(inTable table: String, layout: StoreLayout, _ db: Database) throws -> Int64 {
        let highest = try highestKey(inTable: table, layout: layout, db)
        guard highest < Int64.max else {
            throw MapcError.store("every key of table \(table) is used (its highest is \(highest)); no object can be added to it")
        }
        return max(highest, 0) + 1
    }

    /// Whether the format keeps values of `type` in a column of text only (strings and URIs in
    /// both formats).
    func storesText(_ type: AttributeType) -> Bool {
        storageClasses(of: type) == ["text"]
    }

    /// Where a value of `type` is bound in SQL that writes or compares a stored value: `?`, or for
    /// a text column `CAST(? AS TEXT)`. Text whose bytes are not UTF-8 (`Value.nonUTF8Text`)
    /// cannot be a `DatabaseValue` string, so it is bound as a blob (`textBytes`) and this cast
    /// makes it text again with its bytes unchanged (SQLite reinterprets a blob's bytes in the
    /// database's encoding, UTF-8 here); on text the cast changes nothing.
    func placeholder(for type: AttributeType) -> String {
        storesText(type) ? "CAST(? AS TEXT)" : "?"
    }

    /// A value as bound through GRDB's arguments where `placeholder(for:)` stands: text as its
    /// bytes, since GRDB binds a string as a C string, which a NUL byte would end.
    func argument(_ value: Value, as type: AttributeType) -> DatabaseValue {
        let encoded = encode(value, as: type)
        if storesText(type), case .string(let text) = encoded.storage { return Self.textBytes(Data(text.utf8)) }
        return encoded
    }

    /// The date a stored count of seconds names, or why it names none a store holds (not
    /// finite, or outside the years 0001 to 9999): one range for reading, validation and writing.
    static func date(_ seconds: Double, since epoch: Timestamp.Epoch) throws -> Value {
        guard let instant = Timestamp(seconds: seconds, since: epoch), ValueLimits.holds(instant) else {
            throw MapcError.store("stored date \(seconds) (seconds since \(epoch == .unix ? 1970 : 2001)) is outside the years 0001 to 9999 that stores hold. "
                                  + "Correct the value in the store (with the sqlite3 shell, or the app that wrote it; NULL where the attribute is optional) and run again")
        }
        return .date(instant)
    }

    /// SQL tests (1 when broken) of a column's values that its storage class lets through but
    /// `decode` refuses, so that validation refuses every value reading refuses and a migration
    /// that copies columns in SQL keeps nothing another path would not: dates outside the years
    /// 0001 to 9999 (in the format's count), booleans other than 0 and 1, and for floats,
    /// decimals and UUIDs, whose rules SQL cannot say, `decode` itself (`decodesFunction`).
    func readabilityRules(of column: String, type: AttributeType) -> [(condition: String, arguments: [DatabaseValue], rule: String)] {
        switch type {
        case .date:
            let first = Double(ValueLimits.wholeSecondsRange.lowerBound - dateEpoch.offset)
            let afterLast = Double(ValueLimits.wholeSecondsRange.upperBound + 1 - dateEpoch.offset)
            return [("COALESCE(\(column) < ? OR \(column) >= ?, 0)", [first.databaseValue, afterLast.databaseValue], "outside the years 0001 to 9999 that stores hold")]
        case .bool:
            return [("COALESCE(\(column) NOT IN (0, 1), 0)", [], "not a boolean (0 or 1; another writer's value: set it to 1 if it means true)")]
        case .float, .decimal, .uuid:
            return [("(\(column) IS NOT NULL AND NOT \(Self.decodesFunctionName)(\(column), ?))", [type.rawValue.databaseValue], "cannot be read as \(type.rawValue)")]
        default:
            return []
        }
    }

    /// The name of the SQL function `readabilityRules` call.
    static var decodesFunctionName: String { "mapc_decodes" }

    /// `mapc_decodes(value, type)`: 1 when `decode` reads the value as the type, else 0. Added to
    /// the connection a validation runs on.
    func decodesFunction() -> DatabaseFunction {
        let strategy = self
        return DatabaseFunction(Self.decodesFunctionName, argumentCount: 2, pure: true) { values in
            guard let name = String.fromDatabaseValue(values[1]), let type = AttributeType(rawValue: name) else { return false }
            return (try? strategy.decode(values[0], as: type)) != nil
        }
    }

    /// The name of the SQL function that orders a stored value against a bound exactly.
    static var compareFunctionName: String { "mapc_compare" }

    /// The SQL ordering a column's values, read as `type`, against a bound bound at `?`: -1, 0 or 1.
    func exactComparison(of column: String, as type: AttributeType) -> String {
        "\(Self.compareFunctionName)(\(column), '\(type.rawValue)', ?)"
    }

    /// `mapc_compare(value, type, bound)`: the stored value, read as the type, against the bound
    /// (a value of the type as this format stores it, or a decimal's text) in mapc's one order
    /// (`Value.compare`): -1, 0 or 1, NULL when either cannot be read. Validation uses it where
    /// SQLite's own comparison is not exact (a decimal against its bound).
    func compareFunction() -> DatabaseFunction {
        let strategy = self
        return DatabaseFunction(Self.compareFunctionName, argumentCount: 3, pure: true) { values in
            guard let name = String.fromDatabaseValue(values[1]), let type = AttributeType(rawValue: name),
                  let value = try? strategy.decode(values[0], as: type) else { return nil as Int? }
            let bound: Value
            if type == .decimal, let text = String.fromDatabaseValue(values[2]), let decimal = ValueParser.parseDecimal(text) { bound = .decimal(decimal) } else {
                guard let decoded = try? strategy.decode(values[2], as: type) else { return nil as Int? }
                bound = decoded
            }
            switch Value.compare(value, bound) {
            case .orderedAscending?: return -1
            case .orderedSame?: return 0
            case .orderedDescending?: return 1
            case nil: return nil as Int?
            }
        }
    }

    /// A stored boolean: 0 or 1, as both formats write one; anything else is no boolean (read as
    /// `true`, it would be written back as 1).
    static func bool(_ stored: Int64) -> Bool? {
        stored == 0 ? false : (stored == 1 ? true : nil)
    }

    /// Why a stored value cannot be read as its attribute's type, and how to mend the store: the
    /// `problem` with the value, or (without one) that another writer stored another kind of value.
    static func unreadable(_ value: DatabaseValue, as type: AttributeType, problem: String? = nil) -> MapcError {
        let kind = switch value.storage {
        case .int64: "an integer"
        case .double: "a real number"
        case .string: "text"
        case .blob: "bytes (a blob)"
        case .null: "nothing"
        }
        return MapcError.store("stored value \(StoreValidator.describe(value)) cannot be read as \(type.rawValue): "
                               + (problem ?? "another writer stored \(kind) where the model keeps \(English.withArticle(type.rawValue)); the store does not match its model")
                               + ". Correct the value in the store (with the sqlite3 shell, or the app that wrote it; NULL where the attribute is optional) and run again")
    }

    /// Why a stored integer is not a boolean, and how to mend the store: Core Data does not check
    /// the range, so another writer (a batch update, a number set through KVC) can leave 2 or -1.
    static func notABoolean(_ stored: Int64) -> MapcError {
        MapcError.store("stored value \(stored) cannot be read as bool: a boolean is stored as 0 or 1, and another writer stored \(stored); "
                        + "if it means true, set such values to 1 in the store (SQLite: UPDATE <table> SET <column> = 1 WHERE typeof(<column>) = 'integer' AND <column> NOT IN (0, 1)) and run again")
    }

    /// A decimal stored as text: its digits, or `NaN`, which Core Data writes for a decimal
    /// that is not a number and mapc carries over (`ValueLimits`).
    static func decimal(_ text: String) -> Decimal? {
        text == "NaN" ? Decimal.nan : ValueParser.parseDecimal(text)
    }

    /// The bound form of text whose bytes are not UTF-8: its bytes, cast back to text where they
    /// are bound (`placeholder(for:)`).
    static func textBytes(_ bytes: Data) -> DatabaseValue {
        bytes.databaseValue
    }
}

/// What a store says about itself: the hashes that identify its version, and what it records besides.
public struct StoreMetadata: Sendable, Equatable {
    /// The identifier of the store's format.
    public var format: String
    /// The model's name, when the format records one.
    public var model: String?
    /// The version name recorded when the store was written (informational: hashes identify it).
    public var version: String?
    /// The hash of every entity, by name, in the format's own scheme.
    public var entityHashes: [String: String]
    /// One hash of the whole model, derived from the entity hashes (for display and history).
    public var modelHash: String
    /// The store's own identifier, when the format keeps one (Core Data's store UUID).
    public var storeUUID: String?
    /// Other things the store records, for display (Core Data's metadata keys, the app's own keys).
    public var properties: [String: String] = [:]

    /// `properties` as `mapc status` shows them, by key: without mapc's own keys (`mapc.…`).
    package var shownProperties: [(key: String, value: String)] {
        properties.filter { !$0.key.hasPrefix("mapc.") }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Creates metadata.
    public init(format: String, model: String?, version: String?, entityHashes: [String: String], storeUUID: String? = nil, properties: [String: String] = [:]) {
        self.format = format
        self.model = model
        self.version = version
        self.entityHashes = entityHashes
        self.modelHash = VersionHash.modelHash(entityHashes: entityHashes)
        self.storeUUID = storeUUID
        self.properties = properties
    }

    /// Whether a schema, hashed by `format`, has exactly this store's entity hashes.
    public func matches(_ schema: Schema, format: StoreFormat) -> Bool {
        format.entityHashes(of: schema) == entityHashes
    }

    /// The entities whose hashes differ from a schema's, with a reason each, for "incompatible store" messages.
    public func differences(from schema: Schema, format: StoreFormat) -> [String] {
        let expected = format.entityHashes(of: schema)
        var lines: [String] = []
        for name in Set(expected.keys).union(entityHashes.keys).sorted() {
            switch (entityHashes[name], expected[name]) {
            case (nil, _?): lines.append("entity '\(name)' is in version \(schema.version) but not in the store")
            case (_?, nil): lines.append("entity '\(name)' is in the store but not in version \(schema.version)")
            case let (stored?, wanted?) where stored != wanted:
                // Twelve characters tell two hashes apart, unless a damaged one shares them (or is empty): then whole.
                let (shownStored, shownWanted) = stored.prefix(12) == wanted.prefix(12) ? (stored, wanted) : (String(stored.prefix(12)), String(wanted.prefix(12)))
                lines.append("entity '\(name)' differs (store \(shownStored.isEmpty ? "an empty hash" : shownStored), schema \(shownWanted))")
            default: break
            }
        }
        return lines
    }
}

extension SchemaCatalog {
    /// The versions whose entity hashes, computed as `format` computes them, equal the store's.
    public func versions(matching metadata: StoreMetadata, format: StoreFormat) -> [Schema] {
        schemas.filter { metadata.matches($0, format: format) }
    }

    /// The version a store is at: among the versions matching its hashes, the one its metadata
    /// names (hashes identify; the name only breaks ties between identical versions).
    /// None when the version it names is one whose file has errors (a catalog of the versions
    /// that load): another version with the same hashes is not taken for it.
    public func version(of metadata: StoreMetadata, format: StoreFormat) -> Schema? {
        if let recorded = metadata.version, schema(version: recorded) == nil, versionsWithErrors[recorded] != nil { return nil }
        let matching = versions(matching: metadata, format: format)
        return matching.first { $0.version == metadata.version } ?? matching.first
    }
}
