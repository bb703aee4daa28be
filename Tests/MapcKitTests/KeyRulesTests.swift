import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The key rules' arithmetic on its own: given what a run read of the source's keys, which keys a
/// mapping's objects get, or that they must record associations instead.
@Suite("Key rules")
struct KeyRulesTests {
    private func source(_ table: String = "ZNOTE", entities: [String] = ["Note"], keys: ClosedRange<Int64>, counts: (Int64, Int64)? = nil) -> KeyRules.Source {
        KeyRules.Source(table: table, entities: entities, discriminators: [], keys: keys, counts: { counts.map { (total: $0.0, read: $0.1) } })
    }

    @Test func keptKeysStayWhereTheyAreFree() throws {
        var rules = KeyRules()
        let rule = try #require(try rules.decide(source(keys: 3...40), into: "ZNOTE", entity: "Note", firstFree: { 1 }, keepsKeys: true, isComplete: true))
        #expect(rule.offset == 0 && rule.range == 3...40)
        #expect(rule.destinationKey(ofSource: 7) == 7)
        #expect(rule.destinationKey(ofSource: 41) == nil)
    }

    /// A store's keys of 0 or below (valid SQLite keys, as another writer left them) moved a kept
    /// range up by one, changing every object's identity: in a table nothing was written to yet,
    /// every key is free, and they are kept.
    @Test func keptKeysBelowOneStayInAnEmptyTable() throws {
        var rules = KeyRules()
        let rule = try #require(try rules.decide(source(keys: 0...3), into: "ZNOTE", entity: "Note", firstFree: { 1 }, keepsKeys: true, isComplete: true))
        #expect(rule.offset == 0 && rule.range == 0...3)
        // Where keys were handed out already, they move above them.
        var used = KeyRules()
        let moved = try #require(try used.decide(source(keys: -2...3), into: "ZNOTE", entity: "Note", firstFree: { 5 }, keepsKeys: true, isComplete: true))
        #expect(moved.offset == 7 && moved.range == 5...10)
    }

    /// The first free key is asked only when it decides: a table whose highest key is Int64.max
    /// has none, and a second entity sharing the kept range of its table does not need one (an
    /// inferred step was refused as "every key of table Note is used").
    @Test func theFirstFreeKeyIsAskedOnlyWhenNeeded() throws {
        struct NoFreeKey: Error {}
        var rules = KeyRules()
        _ = try rules.decide(source(entities: ["Note"], keys: 1...Int64.max), into: "ZNOTE", entity: "Note", firstFree: { 1 }, keepsKeys: true, isComplete: true)
        let second = try #require(try rules.decide(source(entities: ["Memo"], keys: 1...Int64.max), into: "ZNOTE", entity: "Memo", firstFree: { throw NoFreeKey() },
                                                   keepsKeys: true, isComplete: true))
        #expect(second.offset == 0)
    }

    @Test func anotherEntityOfTheSameSourceTableSharesTheKeptRange() throws {
        var rules = KeyRules()
        _ = try rules.decide(source(entities: ["Note"], keys: 1...10), into: "ZNOTE", entity: "Note", firstFree: { 1 }, keepsKeys: true, isComplete: true)
        let second = try #require(try rules.decide(source(entities: ["Memo"], keys: 1...10), into: "ZNOTE", entity: "Memo", firstFree: { 11 }, keepsKeys: true, isComplete: true))
        #expect(second.offset == 0 && second.range == 1...10)
        // The same entity again (a second mapping reading it) cannot share: its keys move above.
        let third = try #require(try rules.decide(source(entities: ["Note"], keys: 1...10), into: "ZNOTE", entity: "Note", firstFree: { 11 }, keepsKeys: true, isComplete: true))
        #expect(third.offset == 10 && third.range == 11...20)
    }

    @Test func numberedKeysFollowARuleOnlyWithoutGaps() throws {
        var rules = KeyRules()
        let rule = try #require(try rules.decide(source(keys: 5...9, counts: (5, 5)), into: "T", entity: "E", firstFree: { 1 }, keepsKeys: false, isComplete: true))
        #expect(rule.offset == -4 && rule.range == 1...5)
        #expect(try rules.decide(source(keys: 5...10, counts: (5, 5)), into: "T", entity: "E", firstFree: { 1 }, keepsKeys: false, isComplete: true) == nil, "a gap")
        #expect(try rules.decide(source(keys: 5...9, counts: (5, 4)), into: "T", entity: "E", firstFree: { 1 }, keepsKeys: false, isComplete: true) == nil, "another entity's rows")
    }

    @Test func keysThatWouldNotFitIn64BitsFollowNoRule() throws {
        var rules = KeyRules()
        #expect(try rules.decide(source(keys: Int64.min...0), into: "T", entity: "E", firstFree: { 2 }, keepsKeys: true, isComplete: true) == nil)
        #expect(try rules.decide(source(keys: 1...(Int64.max - 1), counts: (Int64.max - 1, Int64.max - 1)), into: "T", entity: "E", firstFree: { 3 }, keepsKeys: false, isComplete: true) == nil)
    }

    @Test func startedRulesAreFoundByTheKeysTheyHold() throws {
        var rules = KeyRules()
        let rule = try #require(try rules.decide(source(keys: 1...10), into: "ZNOTE", entity: "Note", firstFree: { 1 }, keepsKeys: true, isComplete: true))
        rules.start(rule, for: 2)
        #expect(rules[2]?.range == 1...10)
        #expect(rules.holding(4, inTable: "ZNOTE").map(\.index) == [2])
        #expect(rules.holding(11, inTable: "ZNOTE").isEmpty)
        #expect(rules.holding(4, inTable: "ZOTHER").isEmpty)
    }

    @Test func theLedgerNamesTheMappingOfObjectsThatRecordedNoAssociation() {
        var ledger = MigrationLedger(mappingCount: 2)
        ledger.noteUnrecorded(1...1, in: "T", by: 0)
        ledger.noteUnrecorded(2...2, in: "T", by: 0)
        ledger.noteUnrecorded(3...5, in: "T", by: 1)
        #expect(ledger.unrecordedMapping(ofKey: 2, inTable: "T") == 0)
        #expect(ledger.unrecordedMapping(ofKey: 5, inTable: "T") == 1)
        #expect(ledger.unrecordedMapping(ofKey: 6, inTable: "T") == nil)
        #expect(ledger.unrecordedMapping(ofKey: 2, inTable: "U") == nil)
    }
}
