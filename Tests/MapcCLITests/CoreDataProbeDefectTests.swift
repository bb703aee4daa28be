import Foundation
import Testing

/// Defects a Core Data developer's probe found adding model versions the way Xcode writes them,
/// run through the CLI on both store formats.
@Suite("Defects found by a Core Data developer's probe", .serialized)
struct CoreDataProbeDefectTests {
    /// Renamed twice the way Apple's guide says (the renaming identifier is the first name, kept):
    /// mapc matched an identifier against the old *name* only, so the second rename looked like a
    /// property removed and one added, and the run refused to drop the values (or, accepted, lost
    /// them), where Core Data carries them; and `diff` advised the identifier Core Data would not match.
    @Test(arguments: ["mapc", "core-data"])
    func aSecondRenameKeepingTheIdentifierCarriesTheValues(layout: String) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Query:\n    attributes:\n      remoteIdentifier: string?\n"),
            ("v2", "  Select:\n    renamingIdentifier: Query\n    attributes:\n      remoteID: { type: string, optional: true, renamingIdentifier: remoteIdentifier }\n"),
            ("v3", "  Search:\n    renamingIdentifier: Query\n    attributes:\n      serverID: { type: string, optional: true, renamingIdentifier: remoteIdentifier }\n      note: string?\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v2", "v3"], in: folder)
        #expect(diff.status == 0 && diff.stdout.contains("renamed  Search.serverID: from remoteID") && diff.stdout.contains("renamed  entity Search: from Select"), "\(diff.stdout)\(diff.stderr)")
        for from in ["v1", "v2"] {
            let entity = from == "v1" ? "Query" : "Select", attribute = from == "v1" ? "remoteIdentifier" : "remoteID"
            try folder.write(#"{"version": "\#(from)", "objects": {"\#(entity)": [{"id": "q1", "\#(attribute)": "r1"}]}}"#, to: "d.json")
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("s.db"))
            #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
            let run = try CLI.run(["run", "--quiet", "--every-version", "s.db"], in: folder)
            #expect(run.status == 0, "\(from): \(run.stderr)")
            let dump = try CLI.run(["dump", "s.db"], in: folder)
            #expect(dump.stdout.contains(#""serverID": "r1""#), "\(from): \(dump.stdout)")
        }
    }

    /// An identifier naming the previous version's name (mapc's docs taught it) is still matched,
    /// and `check` says Core Data would not, and which identifier agrees with it.
    @Test func anIdentifierNamingThePreviousNameIsSaidByCheck() throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Note:\n    attributes:\n      title: string\n"),
            ("v2", "  Note:\n    attributes:\n      heading: { type: string, renamingIdentifier: title }\n"),
            ("v3", "  Note:\n    attributes:\n      caption: { type: string, renamingIdentifier: heading }\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0 && check.stderr.contains("warning: the step v2 -> v3 is inferred: Note.caption has renamingIdentifier 'heading'")
                && check.stderr.contains("give 'caption' renamingIdentifier: title"), "\(check.stdout)\(check.stderr)")
    }
}

extension CoreDataProbeDefectTests {
    /// Two attributes that swap renaming identifiers change no hash: no store is ever migrated
    /// between the versions, but `diff` described the swap as an inferable step.
    @Test func aChangeNoHashSeesIsSaidToMigrateNothing() throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Mood:\n    attributes:\n      group: string?\n      remoteID: string?\n"),
            ("v2", "  Mood:\n    attributes:\n      group: { type: string, optional: true, renamingIdentifier: remoteID }\n      remoteID: { type: string, optional: true, renamingIdentifier: group }\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("note: a store of v1 is a store of v2 (their mapc and Core Data hashes are the same): a Core Data store, which names no version, is taken for v2, so a run migrates none")
                && diff.stdout.contains("a store in mapc's format names its version, and a run takes it through the steps between"), "\(diff.stdout)")
    }
}
