import Foundation
import GRDB
import Testing

/// Defects a probe of every value a store can hold found: values changed on some path with
/// exit 0, where they must come through exactly or be refused, said.
@Suite("Defects found by a probe of stored values", .serialized)
struct ValuesProbeDefectTests {
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-values-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        return folder
    }

    /// Two versions of one entity `Rec` whose attributes are `v1` and `v2`.
    private func project(v1: String, v2: String, mapping: String? = nil) throws -> URL {
        let folder = try folder()
        try folder.write("model: S\nversion: v1\nentities:\n  Rec: { attributes: { \(v1) } }\n", to: "schemas/v1.yaml")
        try folder.write("model: S\nversion: v2\nentities:\n  Rec: { attributes: { \(v2) } }\n", to: "schemas/v2.yaml")
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        if let mapping {
            try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: RecToRec\n    source: Rec\n    destination: Rec\n    attributes:\n\(mapping)", to: "mappings/v1_to_v2.yaml")
        }
        return folder
    }

    private func column(_ sql: String, in store: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchAll(db, sql: sql) }
    }

    /// `integerValue` read text through a double: "9007199254740993" became 9007199254740992,
    /// with exit 0 and a clean check. Now every digit is kept, and a value beyond the integer is
    /// an error naming it.
    @Test func integerValueOfTextKeepsEveryDigit() throws {
        let folder = try project(v1: "code: string?", v2: "code: int64?", mapping: "      code: FUNCTION($source.code, \"integerValue\")\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "code": "9007199254740993"}, {"id": "r2", "code": "1234567890123456789"}, {"id": "r3", "code": "-42.9"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try column("SELECT quote(code) FROM Rec ORDER BY _id", in: folder.appendingPathComponent("s.db")) == ["9007199254740993", "1234567890123456789", "-42"])
        // Beyond 64 bits: the migration fails, naming the value, and the store is untouched.
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "r1", "code": "9223372036854775808"}]}}"#, to: "big.json")
        #expect(try CLI.run(["load", "big.json", "big.db"], in: folder).status == 0)
        let big = try CLI.run(["run", "big.db"], in: folder)
        #expect(big.status != 0 && big.stderr.contains("'9223372036854775808' does not fit a 64-bit integer"), "\(big.stderr)")
        #expect(try column("SELECT code FROM Rec", in: folder.appendingPathComponent("big.db")) == ["9223372036854775808"])
    }
}
