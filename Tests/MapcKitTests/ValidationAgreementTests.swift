import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// `load` and `run` judge a value against its attribute's `min` and `max` alike: the rule `load`
/// applies to a data file's objects (`AttributeValidator`, in Swift) and the one the migrated store
/// is validated with (`StoreValidator`, in SQL) give the same verdict on every value, whatever its
/// type and the bound's form, in both store formats. Otherwise a store `run` calls valid could not
/// be dumped and loaded again, or the other way round.
@Suite("Validation agrees between load and run")
struct ValidationAgreementTests {
    /// Bounds as a schema author writes them: integers and fractions, around 2^53 and the integer
    /// types' limits, decimals with more digits than a double holds.
    static let bounds = ["0", "-3", "2.5", "0.1", "0.10000000000000000001", "1e10", "32767", "-32768", "2147483647",
                         "9007199254740992", "9007199254740993", "-9007199254740993", "9223372036854775807", "-9223372036854775808", "1.5e300"]
    static let types: [AttributeType] = [.int16, .int32, .int64, .double, .float, .decimal]

    /// Values near a bound, and random ones, as the attribute's type stores them (coerced, as
    /// every path stores a value).
    private func values(near bound: Value, type: AttributeType, random: inout SplitMix64) -> [Value] {
        var raw: [Value] = []
        let asDouble: Double? = switch bound {
        case .integer(let integer): Double(integer)
        case .double(let double): double
        case .decimal(let decimal): NSDecimalNumber(decimal: decimal).doubleValue
        default: nil
        }
        if case .integer(let integer) = bound {
            raw += ([-1, 0, 1] as [Int64]).compactMap { delta -> Value? in
                let (sum, overflow) = integer.addingReportingOverflow(delta)
                return overflow ? nil : .integer(sum)
            }
        }
        if let asDouble {
            raw += [asDouble, asDouble.nextUp, asDouble.nextDown, asDouble.rounded(.down), asDouble.rounded(.up)].map { .double($0) }
            if let whole = Int64(exactly: asDouble.rounded(.down)) { raw += [.integer(whole), .integer(whole &+ 1)] }
        }
        if case .decimal(let decimal) = bound { raw += [.decimal(decimal), .decimal(decimal + Decimal(string: "0.00000000000000000001")!), .decimal(decimal - Decimal(string: "0.00000000000000000001")!)] }
        raw += (0..<4).map { _ in .integer(Int64.random(in: -100_000...100_000, using: &random)) }
        raw.append(.double(Double.random(in: -1e6...1e6, using: &random)))
        return raw.compactMap { value in
            guard case .success(let stored) = ValueRules.coerce(value, to: type) else { return nil }
            return stored
        }
    }

    @Test(arguments: TestLayout.allCases)
    func minAndMaxAreJudgedAlikeByLoadAndByRun(layout: TestLayout) throws {
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &generator)
        var random = SplitMix64(state: seed)
        var compared = 0
        for type in Self.types {
            for boundText in Self.bounds {
                for rule in ["min", "max"] {
                    let yaml = "model: P\nversion: v1\nentities:\n  Item:\n    attributes:\n      v: { type: \(type.rawValue), optional: true, \(rule): \(boundText) }\n"
                    // A bound the schema refuses is refused before any value meets it.
                    let parsed = parseSchema(yaml)
                    guard !parsed.diagnostics.hasErrors, let schema = parsed.schema, let attribute = schema.entity(named: "Item")?.attributes.first,
                          let bound = rule == "min" ? attribute.validation.min : attribute.validation.max else { continue }
                    let values = values(near: bound, type: type, random: &random)
                    let store = try layout.store(schema)
                    var expected: Set<String> = []
                    try store.database.write { db in
                        let writer = RowWriter(store: store, db: db)
                        for (index, value) in values.enumerated() {
                            // A value the format cannot hold (a decimal of more digits than Core
                            // Data's column) is refused on every path before validation.
                            do { _ = try writer.insert(entity: "Item", id: "i\(index)", attributes: ["v": value]) } catch is RowWriter.UnstorableValue { continue }
                            if !AttributeValidator.violations(of: value, for: attribute).isEmpty { expected.insert("\(index)") }
                        }
                        try writer.finish()
                        try store.strategy.finishWriting(db, layout: store.layout)
                    }
                    let findings = try store.database.read { db in try StoreValidator(store: store, db: db).validate { _, _ in nil } }
                    let context = "seed \(seed), \(type.rawValue) \(rule) \(boundText), values \(values)"
                    #expect(findings.total == expected.count, "\(context): load refuses \(expected.sorted()), run \(findings.violations.map(\.object))")
                    compared += values.count
                }
            }
        }
        #expect(compared > 500, "values compared: \(compared)")
    }
}
