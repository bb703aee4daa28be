import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Phase 3's check of a whole store: every row-level rule finds the row that breaks it, and a row
/// that breaks none is not reported, whatever the store format.
@Suite("Validating a store")
struct StoreValidatorTests {
    static let schema = """
    model: V
    version: v1
    entities:
      Item:
        attributes:
          name: string
          note: string?
          small: { type: int16, optional: true }
          ratio: { type: double, optional: true, max: 10 }
          count: { type: int64, optional: true, min: 0 }
          when: date?
          flag: bool?
          data: binary?
    """

    /// The violations and their number; checks on the way that the objects the validation's scans
    /// counted are those a count of each entity finds, broken ones included.
    private func validated(_ store: Store) throws -> ([ValidationViolation], Int) {
        let findings = try store.database.read { db in try StoreValidator(store: store, db: db).validate { _, _ in nil } }
        for entity in store.schema.entities where !entity.isAbstract {
            #expect(findings.objectCounts[entity.name] == (try store.count(of: entity.name, exactly: true)), "\(entity.name)")
        }
        #expect(findings.objectCounts.values.reduce(0, +) > 0, "the validated stores hold objects")
        return (findings.violations, findings.total)
    }

    /// One object per broken rule (set with SQL, as a damaged or mis-migrated store would hold it),
    /// plus objects whose values, nulls included, break nothing.
    @Test(arguments: TestLayout.allCases)
    func everyBrokenRuleIsFoundAndNothingElse(layout: TestLayout) throws {
        let store = try layout.store(try loadSchema(Self.schema))
        let broken: [(id: String, column: String, value: DatabaseValue, property: String, rule: String)] = [
            ("b1", "name", .null, "name", "required value missing"),
            ("b2", "name", Data([7]).databaseValue, "name", "value is not of type string"),  // a number would become text (the column's affinity)
            ("b3", "note", Data([1]).databaseValue, "note", "value is not of type string"),
            ("b4", "small", 70_000.databaseValue, "small", "out of range for int16"),
            ("b5", "small", 1.5.databaseValue, "small", "value is not of type int16"),
            ("b6", "ratio", 11.5.databaseValue, "ratio", "above max 10.0"),
            ("b7", "count", (-1).databaseValue, "count", "below min 0"),
            ("b8", "when", "yesterday".databaseValue, "when", "value is not of type date"),
            ("b9", "flag", "yes".databaseValue, "flag", "value is not of type bool"),
            ("b10", "data", "bytes".databaseValue, "data", "value is not of type binary"),
        ]
        let sound = ObjectData(id: "ok1", entity: "Item", attributes: [
            "name": .string("full"), "note": .string("n"), "small": .integer(-32768), "ratio": .double(10), "count": .integer(0),
            "when": .date(Date(timeIntervalSince1970: 0)), "flag": .bool(true), "data": .binary(Data([0])),
        ])
        let empty = ObjectData(id: "ok2", entity: "Item", attributes: ["name": .string("")])
        try store.insert([sound, empty] + broken.map { ObjectData(id: $0.id, entity: "Item", attributes: ["name": .string($0.id)]) })
        let storage = try store.layout.storage(of: "Item")
        try store.database.write { db in
            for (offset, damage) in broken.enumerated() {
                let column = try #require(storage.attributeColumns[damage.column])
                // Keys follow insertion order: the two sound objects first.
                try db.execute(sql: "UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ? WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?",
                               arguments: [damage.value, offset + 3])
            }
        }
        let (violations, total) = try validated(store)
        let found = Set(violations.map { "\($0.object) \($0.property ?? "-") \($0.rule)" })
        let expected = Set(broken.enumerated().map { offset, damage in "\(layout.id(damage.id, entity: "Item", key: offset + 3)) \(damage.property) \(damage.rule)" })
        #expect(found == expected)
        #expect(total == broken.count)
    }

    static let library = """
    model: L
    version: v1
    entities:
      Author:
        attributes:
          name: string
        relationships:
          books: { destination: Book, toMany: true, inverse: author, optional: true, minCount: 2, maxCount: 2 }
          partner: { destination: Author, inverse: partner, optional: true }
      Book:
        attributes:
          title: string
        relationships:
          author: { destination: Author, inverse: books }
    """

    /// The relationship rules: a required to-one emptied, a reference to no object, counts below
    /// and above the bounds, and a one-to-one whose two sides disagree.
    @Test(arguments: TestLayout.allCases)
    func everyBrokenRelationshipRuleIsFoundAndNothingElse(layout: TestLayout) throws {
        let store = try layout.store(try loadSchema(Self.library))
        func author(_ id: String, partner: String? = nil) -> ObjectData {
            ObjectData(id: id, entity: "Author", attributes: ["name": .string(id)], relationships: partner.map { ["partner": [$0]] } ?? [:])
        }
        func book(_ id: String, by author: String) -> ObjectData {
            ObjectData(id: id, entity: "Book", attributes: ["title": .string(id)], relationships: ["author": [author]])
        }
        // Keys follow insertion order within each entity: a1 is 1, k1 is 1.
        try store.insert([author("a1"), author("a2"), author("a3"), author("a4", partner: "a5"), author("a5", partner: "a4"),
                          book("k1", by: "a1"), book("k2", by: "a1"), book("k3", by: "a2"), book("k4", by: "a3"), book("k5", by: "a3"), book("k6", by: "a2")])
        func column(_ entity: String, _ relationship: String) throws -> (table: String, column: String, key: String) {
            let storage = try store.layout.storage(of: entity)
            guard case .foreignKey(let column, _, _)? = storage.relationships[relationship] else { throw MapcError.store("\(entity).\(relationship) is not a foreign key") }
            return (storage.table.quotedDatabaseIdentifier, column.quotedDatabaseIdentifier, storage.primaryKey.quotedDatabaseIdentifier)
        }
        let bookAuthor = try column("Book", "author"), partner = try column("Author", "partner")
        try store.database.write { db in
            for (book, author) in [(1, DatabaseValue.null), (3, 999.databaseValue), (6, 3.databaseValue)] {
                try db.execute(sql: "UPDATE \(bookAuthor.table) SET \(bookAuthor.column) = ? WHERE \(bookAuthor.key) = ?", arguments: [author, book])
            }
            try db.execute(sql: "UPDATE \(partner.table) SET \(partner.column) = 1 WHERE \(partner.key) = 4")
        }
        let (violations, total) = try validated(store)
        let found = Set(violations.map { "\($0.object) \($0.property ?? "-") \($0.rule)" })
        let pointsBack = "one-to-one inverse 'partner' does not point back: the Author it refers to does not have this Author as its 'partner' "
            + "(a one-to-one links objects in pairs; where two Authors share one Author, link each Author from one Author, or make 'partner' to-many)"
        let expected: Set<String> = [
            "\(layout.id("k1", entity: "Book", key: 1)) author required relationship empty",
            "\(layout.id("k3", entity: "Book", key: 3)) author refers to a missing or wrong-entity object (row key shown)",
            "\(layout.id("a1", entity: "Author", key: 1)) books fewer than minCount 2",
            "\(layout.id("a3", entity: "Author", key: 3)) books more than maxCount 2",
            "\(layout.id("a4", entity: "Author", key: 4)) partner \(pointsBack)",
            "\(layout.id("a5", entity: "Author", key: 5)) partner \(pointsBack)",
        ]
        #expect(found == expected)
        #expect(total == expected.count)
    }

    /// A required to-many relationship with a minCount, left empty, breaks one rule (it is
    /// empty), not two, whether the objects come from a data file or are found in a store; and
    /// both checks count alike around the bounds.
    @Test(arguments: TestLayout.allCases)
    func relationshipCountsAreJudgedAlikeInDataAndInStores(layout: TestLayout) throws {
        let schema = try loadSchema("""
        model: C
        version: v1
        entities:
          Shelf:
            attributes:
              name: string
            relationships:
              books: { destination: Book, toMany: true, inverse: shelf, minCount: 2, maxCount: 3 }
          Book:
            attributes:
              title: string
            relationships:
              shelf: { destination: Shelf, inverse: books, optional: true }
        """)
        let holding = [0, 1, 2, 3, 4]
        var objects: [ObjectData] = []
        for count in holding {
            objects.append(ObjectData(id: "s\(count)", entity: "Shelf", attributes: ["name": .string("s\(count)")]))
            for book in 0..<count {
                objects.append(ObjectData(id: "b\(count).\(book)", entity: "Book", attributes: ["title": .string("b")], relationships: ["shelf": ["s\(count)"]]))
            }
        }
        // Loaded from data: every broken count is refused.
        let refused = try #require(#expect(throws: DataValidationError.self) { try layout.store(schema).insert(objects) })
        #expect(refused.problems.map { "\($0.objectID ?? "-") \($0.message)" } == [
            "s0 required relationship 'books' is empty; relate at least one Book",
            "s1 fewer than minCount 2 (objects: 1)",
            "s4 more than maxCount 3 (objects: 4)",
        ])
        // In a store: valid objects written, then the books moved with SQL to the same counts.
        let store = try layout.store(schema)
        var valid: [ObjectData] = (0..<5).map { ObjectData(id: "s\($0)", entity: "Shelf", attributes: ["name": .string("s\($0)")]) }
        for book in 0..<12 {
            valid.append(ObjectData(id: "b\(book)", entity: "Book", attributes: ["title": .string("b")], relationships: ["shelf": ["s\(book < 10 ? book / 2 : book - 7)"]]))
        }
        try store.insert(valid)
        let storage = try store.layout.storage(of: "Book")
        guard case .foreignKey(let column, _, _)? = storage.relationships["shelf"] else { throw MapcError.store("Book.shelf is not a foreign key") }
        let shelves: [Int?] = [nil, nil, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5]
        try store.database.write { db in
            for (book, shelf) in shelves.enumerated() {
                try db.execute(sql: "UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ? WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?",
                               arguments: [shelf, book + 1])
            }
        }
        let (violations, total) = try validated(store)
        #expect(violations.map { "\($0.object) \($0.rule)" } == [
            "\(layout.id("s0", entity: "Shelf", key: 1)) required relationship empty",
            "\(layout.id("s1", entity: "Shelf", key: 2)) fewer than minCount 2",
            "\(layout.id("s4", entity: "Shelf", key: 5)) more than maxCount 3",
        ])
        #expect(total == 3)
    }

    /// Many objects breaking two rules, the first rule on every row: the report keeps examples of
    /// both rules and counts each (it kept the first twenty violations: all of the first rule).
    @Test(arguments: TestLayout.allCases)
    func everyBrokenRuleHasExamplesHoweverManyBreakTheFirst(layout: TestLayout) throws {
        let store = try layout.store(try loadSchema("""
        model: V
        version: v1
        entities:
          Item:
            attributes:
              name: { type: string, maxLength: 3 }
              count: { type: int64, min: 0 }
        """))
        try store.insert((1...30).map { ObjectData(id: "i\($0)", entity: "Item", attributes: ["name": .string("ok"), "count": .integer(1)]) })
        let storage = try store.layout.storage(of: "Item")
        let table = storage.table.quotedDatabaseIdentifier, key = storage.primaryKey.quotedDatabaseIdentifier
        let name = try #require(storage.attributeColumns["name"]).quotedDatabaseIdentifier, count = try #require(storage.attributeColumns["count"]).quotedDatabaseIdentifier
        try store.database.write { db in
            try db.execute(sql: "UPDATE \(table) SET \(name) = 'toolong'")
            try db.execute(sql: "UPDATE \(table) SET \(count) = -1 WHERE \(key) > 24")
        }
        let findings = try store.database.read { db in try StoreValidator(store: store, db: db).validate { _, _ in nil } }
        #expect(findings.total == 36)
        let byRule = Dictionary(grouping: findings.violations, by: \.rule)
        #expect(byRule["longer than maxLength 3"]?.map(\.sameRuleCount) == [30, 30, 30])
        #expect(byRule["below min 0"]?.map(\.sameRuleCount) == [6, 6, 6])
        #expect(findings.violations.count == 6)
        let report = MigrationError.validation(violations: findings.violations, total: findings.total).description
        #expect(report.hasPrefix("the migrated store breaks 2 validation rules of the destination schema, in 36 places:"), "\(report)")
        #expect(report.contains("  ... and 27 more breaking the same rule") && report.contains("  ... and 3 more breaking the same rule"), "\(report)")
        #expect(!report.contains("other rules"), "\(report)")
    }

    /// An empty required to-one, in loaded data, is reported with a fix that fits a to-one.
    @Test func anEmptyRequiredToOneSaysWhatToRelate() throws {
        let store = try TestLayout.mapc.store(try loadSchema(Self.library))
        let refused = try #require(#expect(throws: DataValidationError.self) {
            try store.insert([ObjectData(id: "k1", entity: "Book", attributes: ["title": .string("t")])])
        })
        #expect(refused.problems.map(\.message) == ["required relationship 'author' is empty; relate it to an Author"])
    }

    /// Which count rules a relationship has: none for an optional one without bounds, `maxCount`
    /// 0 is no limit, a `minCount` of 1 is what holding any object means, and to-ones have
    /// only the required rule.
    @Test func countRulesOfRelationships() {
        func rules(toMany: Bool = true, optional: Bool, min: Int? = nil, max: Int? = nil) -> [RelationshipCountRule] {
            var relationship = Relationship(name: "r", destination: "D")
            relationship.isToMany = toMany
            relationship.isOptional = optional
            relationship.minCount = min
            relationship.maxCount = max
            return RelationshipCountRule.rules(of: relationship)
        }
        #expect(rules(optional: true) == [])
        // A to-many that is not optional, with no minCount, may be empty (as Core Data validates it).
        #expect(rules(optional: false) == [])
        #expect(rules(optional: false, min: 0) == [])
        #expect(rules(optional: true, min: 2, max: 0) == [.atLeast(2)])
        #expect(rules(optional: false, min: 1, max: 4) == [.required, .atMost(4)])
        #expect(rules(optional: false, min: 3) == [.required, .atLeast(3)])
        #expect(rules(toMany: false, optional: false) == [.required])
        #expect(rules(toMany: false, optional: true, min: 1) == [])
    }

    /// Each count rule's SQL condition, asked of SQLite, agrees with its Swift test.
    @Test func countRulesMeanTheSameInSQL() throws {
        let queue = try DatabaseQueue()
        for rule in [RelationshipCountRule.required, .atLeast(2), .atLeast(5), .atMost(1), .atMost(3)] {
            for count in 0...6 {
                let sql = try queue.read { try Bool.fetchOne($0, sql: "SELECT \(rule.condition(count: "SELECT \(count)"))") }
                #expect(sql == rule.isBroken(by: count), "\(rule) at \(count)")
            }
        }
    }

    /// As in SQLite's UNIQUE (Core Data's stores keep constraints as such indexes): objects whose
    /// constrained values include a nil never clash; equal values still do. Checked when objects
    /// are loaded and when a store is validated.
    @Test(arguments: TestLayout.allCases)
    func nilValuesNeverBreakAUniquenessConstraint(layout: TestLayout) throws {
        let schema = try loadSchema("model: U\nversion: u1\nentities:\n  Person:\n    uniquenessConstraints: [[email], [handle, team]]\n    attributes:\n      email: string?\n      handle: string?\n      team: string?\n")
        let store = try layout.store(schema)
        func person(_ id: String, _ email: String?, _ handle: String?, _ team: String?) -> ObjectData {
            ObjectData(id: id, entity: "Person", attributes: ["email": email.map(Value.string) ?? .null, "handle": handle.map(Value.string) ?? .null, "team": team.map(Value.string) ?? .null])
        }
        try store.insert([person("p1", nil, "h", nil), person("p2", nil, "h", nil), person("p3", "a@x", nil, "t"), person("p4", nil, nil, "t")])
        try store.insert([person("p5", nil, "h", nil)])
        var (violations, total) = try validated(store)
        #expect(total == 0, "\(violations)")
        // Equal values are still a clash: loading one is refused, and a store holding one fails.
        #expect(throws: DataValidationError.self) { try store.insert([person("p6", "a@x", nil, nil)]) }
        #expect(throws: DataValidationError.self) { try store.insert([person("p7", nil, "h", "t"), person("p8", nil, "h", "t")]) }
        guard layout == .mapc else { return }  // Core Data's UNIQUE index would refuse the damage below itself.
        let storage = try store.layout.storage(of: "Person")
        let email = try #require(storage.attributeColumns["email"])
        try store.database.write { db in
            try db.execute(sql: "UPDATE \(storage.table.quotedDatabaseIdentifier) SET \(email.quotedDatabaseIdentifier) = 'a@x' WHERE \(storage.idColumn?.quotedDatabaseIdentifier ?? "") = 'p1'")
        }
        (violations, total) = try validated(store)
        #expect(total == 1)
        #expect(violations.first?.rule.hasPrefix("uniqueness constraint (email) of Person broken") == true, "\(violations)")
    }

    /// A to-one relationship in a constraint: no related object counts as a nil.
    @Test(arguments: TestLayout.allCases)
    func anEmptyToOneInAConstraintIsANil(layout: TestLayout) throws {
        let schema = try loadSchema("""
        model: S
        version: s1
        entities:
          Shelf:
            attributes:
              name: string
            relationships:
              books: { destination: Book, toMany: true, inverse: shelf, optional: true }
          Book:
            uniquenessConstraints: [[title, shelf]]
            attributes:
              title: string
            relationships:
              shelf: { destination: Shelf, inverse: books, optional: true }
        """ + "\n")
        let store = try layout.store(schema)
        func book(_ id: String, on shelf: String?) -> ObjectData {
            ObjectData(id: id, entity: "Book", attributes: ["title": .string("Dune")], relationships: shelf.map { ["shelf": [$0]] } ?? [:])
        }
        try store.insert([ObjectData(id: "s1", entity: "Shelf", attributes: ["name": .string("A")]), book("b1", on: nil), book("b2", on: nil), book("b3", on: "s1")])
        let (violations, total) = try validated(store)
        #expect(total == 0, "\(violations)")
        #expect(throws: DataValidationError.self) { try store.insert([book("b4", on: "s1")]) }
        // Set from the inverse side only, the same clash.
        #expect(throws: DataValidationError.self) {
            try store.insert([ObjectData(id: "b5", entity: "Book", attributes: ["title": .string("Dune")]),
                              ObjectData(id: "b6", entity: "Book", attributes: ["title": .string("Dune")]),
                              ObjectData(id: "s2", entity: "Shelf", attributes: ["name": .string("B")], relationships: ["books": ["b5", "b6"]])])
        }
    }
}

/// How a broken rule is worded: a value for an attribute's rule, the number of objects for a
/// relationship's count, nothing beside an empty relationship (which said "(value: 0)").
@Suite("Validation wording")
struct ValidationWordingTests {
    @Test func aRelationshipsCountIsShownAsObjectsAndAnEmptyOneAsNothing() {
        let empty = ValidationViolation(mapping: nil, entity: "Book", object: "b1", property: "authors", value: "0", rule: RelationshipCountRule.required.summary)
        #expect(empty.description == "Book 'b1', property 'authors': required relationship empty")
        let few = ValidationViolation(mapping: nil, entity: "Book", object: "b1", property: "authors", value: "1", rule: RelationshipCountRule.atLeast(2).summary)
        #expect(few.description == "Book 'b1', property 'authors': fewer than minCount 2 (objects: 1)")
        let high = ValidationViolation(mapping: nil, entity: "Item", object: "i1", property: "x", value: "20", rule: "above max 10")
        #expect(high.description == "Item 'i1', property 'x': above max 10 (value: 20)")
    }
}
