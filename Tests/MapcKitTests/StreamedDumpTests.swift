import Foundation
import Testing
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore

/// `mapc dump` writes a store object by object (a store of a million objects took 2 GB when its
/// dump was built whole): the text is the whole dump's, byte for byte, and what `load` would
/// refuse of it is found on the way, as over the whole dump.
@Suite("A dump written piece by piece")
struct StreamedDumpTests {
    private func streamed(_ store: Store) throws -> (text: String, refusal: String?) {
        var text = ""
        let refusal = try DataFile.writeDump(store) { text += $0 }
        return (text, refusal.map { "\($0)" })
    }

    @Test(arguments: TestLayout.allCases) func theTextIsTheWholeDumps(layout: TestLayout) throws {
        let empty = try layout.store(try uncloudNotes("v2"))
        let notes = try layout.store(try uncloudNotes("v2"))
        try notes.insert(v2Notes(25))
        let people = try layout.store(ExpressionFixture.schema)
        try people.insert(ExpressionFixture.objects)
        for store in [empty, notes, people] {
            let whole = try DataFile.dump(store)
            let (text, refusal) = try streamed(store)
            #expect(text == whole.serialized(pretty: true))
            #expect(refusal == DataFile.loadRefusal(ofDump: whole, schema: store.schema).map { "\($0)" })
        }
    }

    /// Two objects with one id (a unique index dropped by another tool): refused alike.
    @Test func whatLoadRefusesIsFoundOnTheWay() throws {
        let store = try TestLayout.mapc.store(try uncloudNotes("v2"))
        try store.insert(v2Notes(3))
        try store.database.write { db in
            try db.execute(sql: "DROP INDEX IF EXISTS Note__id")
            try db.execute(sql: "UPDATE Note SET _id = 'n0' WHERE _id = 'n2'")
        }
        let whole = try DataFile.dump(store)
        let (text, refusal) = try streamed(store)
        #expect(text == whole.serialized(pretty: true))
        #expect(refusal != nil && refusal == DataFile.loadRefusal(ofDump: whole, schema: store.schema).map { "\($0)" }, "\(String(describing: refusal))")
    }
}
