import Foundation
import GRDB
import GRDBSQLite
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Copies every attribute it is given, as a custom policy that reads and writes values would.
final class CopyEveryAttributePolicy: EntityMigrationPolicy {
    override class var providedAttributes: Set<String> { ["value"] }

    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        let copy = DestinationObject(entity: mapping.destination ?? source.data.entity, id: source.data.id, attributes: source.data.attributes)
        try manager.insert(copy, associatedWith: source, mapping: mapping)
    }
}

/// Every value a store can hold, edges included, put into a store of each format as SQLite holds
/// it (written with SQL, so values mapc would never write are there too) and taken through every
/// path a value travels: the compiled step, the interpreted step, a custom policy that copies,
/// a conversion to the other format and back, and `dump` then `load`. Each value comes out with
/// the same bytes, or every path refuses it, naming the attribute.
///
/// `swift test` runs the edge values; `Benchmarks/value-roundtrip.sh` runs them with many more,
/// generated at random (`MAPC_VALUE_ROUNDTRIP=N` values per type).
@Suite("Every value a store holds survives every path")
struct ValueRoundTripTests {
    /// One stored value: an attribute type and, per format, the SQL that writes the cell.
    struct Case: CustomTestStringConvertible, Sendable {
        var type: AttributeType
        var mapc: String
        var coreData: String
        var testDescription: String { "\(type.rawValue) \(mapc)" }

        init(_ type: AttributeType, _ mapc: String, coreData: String? = nil) {
            self.type = type
            self.mapc = mapc
            self.coreData = coreData ?? mapc
        }

        func sql(_ layout: TestLayout) -> String { layout == .mapc ? mapc : coreData }
    }

    /// What a path did with the value: the cell it wrote, or why it refused.
    enum Outcome: Equatable, CustomStringConvertible {
        case stored(String)
        case refused(String)
        var description: String {
            switch self {
            case .stored(let cell): return cell
            case .refused(let message): return "refused: \(message)"
            }
        }
    }

    static let edges: [Case] = {
        var cases: [Case] = []
        // Text: NUL, bytes that are not UTF-8, empty, long, every plane.
        for text in ["''", "'abc' || char(0) || 'def'", "char(0)", "CAST(x'c328ff' AS TEXT)", "CAST(x'ff' AS TEXT)", "CAST(x'61ed9fbf00e29c' AS TEXT)",
                     "'寺と庭 😀 é'", "printf('%.*c', 100000, 'x')", "'\u{FEFF}x'", "CAST(x'eda080' AS TEXT)"] {
            cases.append(Case(.string, text))
            cases.append(Case(.uri, text))
        }
        // Integers at each type's bounds and one past them.
        for (type, range) in [(AttributeType.int16, Int64(Int16.min)...Int64(Int16.max)), (.int32, Int64(Int32.min)...Int64(Int32.max))] {
            for n in [range.lowerBound, range.upperBound, range.lowerBound - 1, range.upperBound + 1, 0] { cases.append(Case(type, String(n))) }
        }
        for n in [Int64.min, Int64.max, 0, -1] { cases.append(Case(.int64, n == Int64.min ? "(-9223372036854775807 - 1)" : String(n))) }
        for n in ["0", "1", "2", "-1"] { cases.append(Case(.bool, n)) }
        // Doubles: signed zero, subnormals, the largest finite, infinities, integers in a real column.
        for d in ["0.0", "-0.0", "4.9406564584124654e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "-1.7976931348623157e308",
                  "0.1", "9e999", "-9e999", "5", "9007199254740993"] {
            cases.append(Case(.double, d))
        }
        // Floats: single precision as a double holds it, and a double a float cannot hold.
        for f in [Float.greatestFiniteMagnitude, -Float.greatestFiniteMagnitude, Float.leastNonzeroMagnitude, 1.33, 0] {
            cases.append(Case(.float, "\(Double(f))"))
        }
        cases.append(Case(.float, "0.1"))
        cases.append(Case(.float, "3.5e38"))
        // Decimals: mapc keeps their text, Core Data's DECIMAL column numbers (and the text NaN).
        for d in ["'12.5'", "'-0.00000000000000000000000000000000000001'", "'12345678901234567890123456789012345678'", "'0'", "'NaN'"] {
            cases.append(Case(.decimal, d, coreData: d))
        }
        cases.append(Case(.decimal, "'1e400'", coreData: "1.7976931348623157e308"))
        // Dates at the range's ends, with sub-microsecond fractions, and beyond it.
        let first = ValueLimits.dateRange.lowerBound, last = ValueLimits.dateRange.upperBound
        for seconds in [first, last.rounded(.down), 526_913_683.4508839 + 978_307_200, 0.000000123, -0.5, 1e300, -1e18] {
            cases.append(Case(.date, "\(seconds)", coreData: "\(seconds - 978_307_200)"))
        }
        cases.append(Case(.date, "'2024-01-01'"))
        // Binaries: empty, large, every byte.
        for blob in ["x''", "zeroblob(300000)", "x'00ff7f80'"] {
            cases.append(Case(.binary, blob))
            cases.append(Case(.transformable, blob))
        }
        cases.append(Case(.uuid, "'0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'", coreData: "x'0f1e2d3c4b5a69788796a5b4c3d2e1f0'"))
        cases.append(Case(.uuid, "'not a uuid'", coreData: "x'00'"))
        return cases
    }()

    /// Values drawn at random for `Benchmarks/value-roundtrip.sh`, seeded so that a failure repeats.
    static let generated: [Case] = {
        guard let count = ProcessInfo.processInfo.environment["MAPC_VALUE_ROUNDTRIP"].flatMap(Int.init), count > 0 else { return [] }
        var random = SeededRandom(seed: 20261126)
        var cases: [Case] = []
        for _ in 0..<count {
            let bytes = (0..<random.next(upTo: 24)).map { _ in String(format: "%02x", random.next(upTo: 256)) }.joined()
            cases.append(Case(.string, "CAST(x'\(bytes)' AS TEXT)"))
            cases.append(Case(.binary, "x'\(bytes)'"))
            let bits = UInt64(random.next(upTo: Int(UInt32.max))) << 32 | UInt64(random.next(upTo: Int(UInt32.max)))
            let double = Double(bitPattern: bits)
            if !double.isNaN { cases.append(Case(.double, "\(double)")) }
            let float = Float(bitPattern: UInt32(truncatingIfNeeded: bits))
            if !float.isNaN { cases.append(Case(.float, "\(Double(float))")) }
            cases.append(Case(.int64, String(Int64(bitPattern: bits))))
            let seconds = ValueLimits.dateRange.lowerBound + Double(random.next(upTo: Int(UInt32.max))) / Double(UInt32.max) * (ValueLimits.dateRange.upperBound - ValueLimits.dateRange.lowerBound)
            cases.append(Case(.date, "\(seconds)", coreData: "\(seconds - 978_307_200)"))
            let digits = (0..<random.next(upTo: 38) + 1).map { _ in String(random.next(upTo: 10)) }.joined()
            cases.append(Case(.decimal, "'\(digits).\(random.next(upTo: 100))'", coreData: "\(Double(digits + ".5") ?? 0)"))
        }
        return cases
    }()

    @Test(arguments: edges + generated, TestLayout.allCases)
    func aValueComesOutWithItsBytesOrEveryPathRefusesIt(_ value: Case, layout: TestLayout) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = try roundTripSchema(value.type)
        let sourcePath = folder.appendingPathComponent("source.db").path
        do {
            let source = try Store.create(at: sourcePath, schema: schema, format: layout.format)
            try source.insert([ObjectData(id: "i1", entity: "Item")])
        }
        let (table, column) = try location(of: schema, layout.format)
        try DatabaseQueue(path: sourcePath).write { try $0.execute(sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = \(value.sql(layout))") }
        let original = try cell(at: sourcePath, table: table, column: column)
        let source = try Store.open(at: sourcePath, schema: schema)

        var outcomes: [(path: String, outcome: Outcome)] = []
        func attempt(_ path: String, _ run: () throws -> String) {
            do { outcomes.append((path, .stored(try run()))) } catch { outcomes.append((path, .refused("\(error)"))) }
        }
        func step(into format: StoreFormat, from store: Store, named name: String, compiled: Bool, policy: Bool = false) throws -> String {
            let path = folder.appendingPathComponent(name).path
            let destination = try Store.create(at: path, schema: schema, format: format)
            let registry = PolicyRegistry()
            registry.register(CopyEveryAttributePolicy.self, as: "Copy")
            let mapping = try loadMapping("""
                source: r
                destination: r
                entityMappings:
                  - { name: ItemToItem, source: Item, destination: Item\(policy ? ", policy: Copy" : ", attributes: { value: $source.value }") }
                """)
            var migration = StepMigration(source: store, destination: destination, mapping: mapping, policies: registry)
            migration.allowsSQL = compiled
            _ = try migration.run()
            return path
        }
        let other: StoreFormat = layout == .mapc ? .coreData : .mapc
        attempt("compiled") { try cell(at: try step(into: layout.format, from: source, named: "compiled.db", compiled: true), table: table, column: column) }
        attempt("interpreted") { try cell(at: try step(into: layout.format, from: source, named: "interpreted.db", compiled: false), table: table, column: column) }
        attempt("policy") { try cell(at: try step(into: layout.format, from: source, named: "policy.db", compiled: false, policy: true), table: table, column: column) }
        attempt("dump and load") {
            let text = try DataFile.dump(source).serialized(pretty: true)
            let contents = try DataFile.read(try JSONValue.parse(Data(text.utf8), path: "dump.json"), schema: schema)
            let path = folder.appendingPathComponent("loaded.db").path
            try Store.create(at: path, schema: schema, format: layout.format).insert(contents.objects)
            return try cell(at: path, table: table, column: column)
        }
        for compiled in [true, false] {
            attempt("to \(other.name) and back\(compiled ? "" : ", interpreted")") {
                let there = try Store.open(at: try step(into: other, from: source, named: "there-\(compiled).db", compiled: compiled), schema: schema)
                return try cell(at: try step(into: layout.format, from: there, named: "back-\(compiled).db", compiled: compiled), table: table, column: column)
            }
        }
        let report = outcomes.map { "\($0.path): \($0.outcome)" }.joined(separator: "\n")
        let refused = outcomes.filter { if case .refused = $0.outcome { return true } else { return false } }
        if refused.isEmpty {
            for (path, outcome) in outcomes where outcome != .stored(original) {
                // Moved to the other format's count of seconds and back, a date is the nearest
                // instant each count holds: within one step of the other count's double.
                if value.type == .date, path.hasPrefix("to "), case .stored(let cell) = outcome, let there = Self.storedDouble(cell), let here = Self.storedDouble(original),
                   abs(there - here) <= (abs(here) + 978_307_200).ulp {
                    continue
                }
                Issue.record("\(path) changed \(original)\n\(report)")
            }
        } else {
            // A conversion to the other format may refuse what that format cannot hold exactly.
            let cannotHold = refused.allSatisfy { $0.path.hasPrefix("to ") && $0.outcome.description.contains("has more digits than a Core Data DECIMAL column keeps") }
            if !cannotHold {
                #expect(refused.count == outcomes.count, "\(original): some paths refused it, others did not\n\(report)")
            }
            for (path, outcome) in refused { #expect(outcome.description.contains("value"), "\(path) does not name the attribute\n\(report)") }
        }
    }

    /// The double of a `real` or `integer` cell as `cell(at:)` describes it.
    private static func storedDouble(_ cell: String) -> Double? {
        if cell.hasPrefix("integer ") { return Double(cell.dropFirst(8)) }
        guard cell.hasPrefix("real "), let open = cell.firstIndex(of: "("), let close = cell.lastIndex(of: ")") else { return nil }
        return Double(cell[cell.index(after: open)..<close])
    }

    /// A version with one optional attribute `value` of `type` on an entity `Item`.
    private func roundTripSchema(_ type: AttributeType) throws -> Schema {
        try loadSchema("model: R\nversion: r\nentities:\n  Item:\n    attributes:\n      value: \(type.rawValue)?\n")
    }

    private func location(of schema: Schema, _ format: StoreFormat) throws -> (table: String, column: String) {
        let storage = try format.strategy.layout(for: schema).storage(of: "Item")
        return (storage.table, try #require(storage.attributeColumns["value"]))
    }

    /// The cell of the store's one row as SQLite holds it: its storage class and exact contents
    /// (a double's bits, text's bytes), read through SQLite's C API so nothing is decoded.
    private func cell(at path: String, table: String, column: String) throws -> String {
        try DatabaseQueue(path: path).read { db in
            let statement = try db.makeStatement(sql: "SELECT \(column.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier)")
            let handle = statement.sqliteStatement
            var cells: [String] = []
            while sqlite3_step(handle) == SQLITE_ROW {
                switch sqlite3_column_type(handle, 0) {
                case SQLITE_NULL: cells.append("null")
                case SQLITE_INTEGER: cells.append("integer \(sqlite3_column_int64(handle, 0))")
                case SQLITE_FLOAT: cells.append("real \(String(sqlite3_column_double(handle, 0).bitPattern, radix: 16)) (\(sqlite3_column_double(handle, 0)))")
                case SQLITE_TEXT:
                    let start = sqlite3_column_text(handle, 0)
                    cells.append("text \(Data(UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, 0)))).prefix(40).map { String(format: "%02x", $0) }.joined()) (\(sqlite3_column_bytes(handle, 0)) bytes)")
                default:
                    let start = sqlite3_column_blob(handle, 0)
                    let count = Int(sqlite3_column_bytes(handle, 0))
                    let bytes = start.map { Data(bytes: $0, count: count) } ?? Data()
                    cells.append("blob \(bytes.prefix(40).map { String(format: "%02x", $0) }.joined()) (\(count) bytes, sha \(bytes.hashValue))")
                }
            }
            sqlite3_reset(handle)
            return cells.joined(separator: ", ")
        }
    }
}

/// A small deterministic generator (SplitMix64), so generated cases repeat from their seed.
struct SeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(upTo bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(max(1, bound)))
    }
}
