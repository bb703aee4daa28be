import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The scratch table of associations holds a row per object a policy made, so how SQLite reads it
/// decides whether a run grows linearly with the store.
@Suite("Association queries")
struct AssociationQueryTests {
    private func plan(_ sql: String) throws -> [String] {
        let queue = try DatabaseQueue()
        return try queue.inDatabase { db in
            try db.execute(sql: "ATTACH DATABASE '' AS mapc_scratch")
            for statement in AssociationIndex.schema { try db.execute(sql: statement) }
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: [0, 10, 1, 2_000]).map { row in
                (row["detail"] as String?) ?? ""
            }
        }
    }

    /// The relate phase reads a mapping's associations batch by batch. Each batch must be a range
    /// of rows, not a read and sort of every row of the mapping (quadratic: 150 batches of 2,000
    /// each sorting 300,000 rows at 1M notes).
    @Test func aBatchOfAssociationsIsARangeOfRowsNotASortOfTheMapping() throws {
        let steps = try plan(AssociationIndex.batchQuery)
        #expect(!steps.contains { $0.contains("TEMP B-TREE") }, "\(steps)")
        #expect(steps.contains { $0.contains("INTEGER PRIMARY KEY (rowid>? AND rowid<?)") }, "\(steps)")
    }

    /// Batches read from where the mapping starts give every association once, in recorded order,
    /// whatever other mappings recorded around them.
    @Test func batchesGiveEachAssociationOfTheMappingOnceInOrder() throws {
        let queue = try DatabaseQueue()
        let read: [Int64] = try queue.inDatabase { db in
            try db.execute(sql: "ATTACH DATABASE '' AS mapc_scratch")
            for statement in AssociationIndex.schema { try db.execute(sql: statement) }
            // Mapping 0 first, then mapping 1 with a few rows of mapping 2 in between, then mapping 3.
            for source in 1...5 { try db.execute(sql: "INSERT INTO \(AssociationIndex.table) VALUES (0, ?, 'A', ?, 'B', NULL)", arguments: [source, source]) }
            for source in 1...7 {
                try db.execute(sql: "INSERT INTO \(AssociationIndex.table) VALUES (1, ?, 'A', ?, 'C', NULL)", arguments: [source, 100 + source])
                if source % 3 == 0 { try db.execute(sql: "INSERT INTO \(AssociationIndex.table) VALUES (2, ?, 'A', ?, 'D', NULL)", arguments: [source, 200 + source]) }
            }
            for source in 1...3 { try db.execute(sql: "INSERT INTO \(AssociationIndex.table) VALUES (3, ?, 'A', ?, 'E', NULL)", arguments: [source, 300 + source]) }
            var destinations: [Int64] = [], batches = 0
            try AssociationIndex.forEachBatch(of: 1, size: 2, in: db) { rows in
                batches += 1
                destinations += rows.map(\.destination.key)
                #expect(rows.allSatisfy { $0.destination.entity == "C" && $0.source.entity == "A" && $0.id == nil })
                return true
            }
            // Seven rows, two at a time.
            #expect(batches == 4)
            return destinations
        }
        #expect(read == Array(101...107))
    }

    /// Batches may start after a given row and stop when the body says so.
    @Test func batchesStartAfterARowAndStopWhenTold() throws {
        let queue = try DatabaseQueue()
        let (after, stopped): ([Int64], Int) = try queue.inDatabase { db in
            try db.execute(sql: "ATTACH DATABASE '' AS mapc_scratch")
            for statement in AssociationIndex.schema { try db.execute(sql: statement) }
            for source in 1...6 { try db.execute(sql: "INSERT INTO \(AssociationIndex.table) VALUES (0, ?, 'A', ?, 'B', NULL)", arguments: [source, source]) }
            var after: [Int64] = []
            try AssociationIndex.forEachBatch(of: 0, size: 2, after: 3, in: db) { rows in
                after += rows.map(\.destination.key)
                return true
            }
            var calls = 0
            try AssociationIndex.forEachBatch(of: 0, size: 1, in: db) { _ in
                calls += 1
                return false
            }
            return (after, calls)
        }
        #expect(after == [4, 5, 6])
        #expect(stopped == 1)
    }
}
