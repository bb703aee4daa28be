import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Every case of the expression evaluation table that the SQL compiler accepts, run through both
/// paths (SQLite over the stored row, and the interpreter over the same object) on a note with
/// every attribute set and on one with most of them nil, in both store formats: the results must
/// be the same. This is what lets a mapping run as `INSERT … SELECT` without changing its meaning.
@Suite("SQL compiler against the interpreter")
struct SQLDifferentialTests {
    /// Cases at the edges of the compiled subset, beyond the evaluation table: equal operands under
    /// every ordering, nil under ordering and NOT, integers against doubles above 2^53, booleans
    /// against numbers, dates.
    static let edgeCases = [
        "displayIndex < 3", "displayIndex <= 3", "displayIndex > 3", "displayIndex >= 3", "displayIndex == 3.0", "displayIndex != 3",
        "rating > 4.5", "rating >= 4.5", "rating < displayIndex", "rating == nil", "NOT (rating > 1)", "NOT (rating < 1)", "rating != nil AND rating > 1",
        "rating <= nil", "nil >= rating", "price == nil", "flag == 1", "flag == TRUE", "flag != FALSE", "NOT flag == TRUE",
        "dateCreated < dateCreated", "dateCreated <= $source.dateCreated", "uid == nil", "link != nil",
        "9007199254740993 == 9007199254740992.0", "9007199254740993 > 9007199254740992.0", "displayIndex > 9223372036854775807", "-0.0 == 0",
        "displayIndex == 3 AND rating == 4.5 OR flag == nil", "NOT (displayIndex < 2 OR image == nil)",
    ]

    /// The fixture's objects in a store of each layout, built once.
    private static let stores: [TestLayout: Store] = {
        var stores: [TestLayout: Store] = [:]
        for layout in TestLayout.allCases {
            // The fixture is part of the repository: a failure here fails every case below.
            guard let store = try? layout.store(ExpressionFixture.schema), (try? store.insert(ExpressionFixture.objects)) != nil else { continue }
            stores[layout] = store
        }
        return stores
    }()

    /// The result of a compiled fragment over one note's row, as the interpreter would print it.
    private func sqlResult(_ fragment: SQLFragment, note: (id: String, key: Int), in store: Store) throws -> String {
        let storage = try store.layout.storage(of: "Note")
        let sql = "SELECT \(fragment.sql) FROM \(storage.table.quotedDatabaseIdentifier) AS s WHERE s.\(storage.primaryKey.quotedDatabaseIdentifier) = ?"
        let stored = try store.database.read { db in
            try DatabaseValue.fetchOne(db, sql: sql, arguments: StatementArguments(fragment.arguments + [Int64(note.key).databaseValue])) ?? .null
        }
        let value: Value
        if let attributeType = fragment.attributeType {
            value = try store.strategy.decode(stored, as: attributeType)
        } else {
            switch (fragment.type, stored.storage) {
            case (_, .null): value = .null
            case (.bool, .int64(let n)): value = .bool(n != 0)
            case (.integer, .int64(let n)): value = .integer(n)
            case (.double, .double(let d)): value = .double(d)
            case (.double, .int64(let n)): value = .double(Double(n))
            default: return "unexpected \(stored) for \(fragment.type)"
            }
        }
        return EvalValue.scalar(value).json.serialized()
    }

    @Test func theCompiledSubsetCoversAGoodPartOfTheTable() throws {
        let compiler = try Self.compiler(for: try #require(Self.stores[.mapc]))
        let compiled = ExpressionEvaluationTests.all.filter { Self.fragment($0.text, compiler) != nil }
        #expect(compiled.count >= 60, "only \(compiled.count) cases compile: \(compiled.map(\.text))")
    }

    @Test(arguments: TestLayout.allCases)
    func everyCompiledCaseGivesTheInterpretersResult(layout: TestLayout) throws {
        let store = try #require(Self.stores[layout])
        let compiler = try Self.compiler(for: store)
        var compared = 0
        for text in ExpressionEvaluationTests.all.map(\.text) + Self.edgeCases {
            guard let fragment = Self.fragment(text, compiler) else { continue }
            for (note, key) in [("n1", 1), ("n2", 2)] {
                let interpreted = ExpressionFixture.run(text, note: note)
                let compiled = try sqlResult(fragment, note: (layout.id(note, entity: "Note", key: key), key), in: store)
                #expect(compiled == interpreted, "\(text) on \(note): SQL gives \(compiled), the interpreter \(interpreted)")
                compared += 1
            }
        }
        #expect(compared >= 2 * Self.edgeCases.count, "every edge case compiles")
    }

    /// A mapping's filter, compiled with SQL's NULL kept (as Core Data's fetch of the source
    /// objects evaluates it), gives what the interpreter's store predicate gives, on the note
    /// with values and on the one with most of them nil.
    @Test(arguments: TestLayout.allCases)
    func everyCompiledFilterGivesTheInterpretersResult(layout: TestLayout) throws {
        let store = try #require(Self.stores[layout])
        let compiler = try Self.compiler(for: store)
        var compared = 0, unknown = 0
        for text in ExpressionEvaluationTests.all.map(\.text) + Self.edgeCases {
            guard case .success(let expression) = ExpressionParser.parse(text), let fragment = compiler.storePredicate(expression) else { continue }
            for (note, key) in [("n1", 1), ("n2", 2)] {
                let interpreted = try Evaluator(context: ExpressionFixture.context(note: note)).evaluateStorePredicate(expression)
                let twoValued = (try? Evaluator(context: ExpressionFixture.context(note: note)).evaluatePredicate(expression)) ?? interpreted
                let compiled = try sqlResult(fragment, note: (layout.id(note, entity: "Note", key: key), key), in: store)
                #expect(compiled == "\(interpreted)", "\(text) on \(note): SQL gives \(compiled), the interpreter \(interpreted)")
                compared += 1
                if interpreted != twoValued { unknown += 1 }
            }
        }
        #expect(compared >= 2 * Self.edgeCases.count)
        // The cases where SQL's NULL changes the answer: `rating != 3`-like and NOT of a comparison with nil.
        #expect(unknown >= 3, "only \(unknown) cases differ from the two-valued predicate")
    }

    private static func compiler(for store: Store) throws -> SQLCompiler {
        let schema = store.schema
        return SQLCompiler(schema: schema, storage: try store.layout.storage(of: "Note"), entity: try #require(schema.entity(named: "Note")), alias: "s")
    }

    private static func fragment(_ text: String, _ compiler: SQLCompiler) -> SQLFragment? {
        guard case .success(let expression) = ExpressionParser.parse(text) else { return nil }
        return compiler.value(expression)
    }
}
