import Foundation
import Testing

/// Defects a probe of fleets of stores found (batches, hard links, lists made by globs,
/// reports), run through the CLI as an operator does.
@Suite("Defects found by a probe of fleets", .serialized)
struct FleetProbeDefectTests {
    /// A project with stores at v2.
    private func project(_ stores: [String] = ["s.db"]) throws -> URL {
        let folder = try CLI.project()
        try CLI.addMappingsAndPolicies(to: folder)
        for store in stores { #expect(try CLI.run(["init", "--schema", "v2", store], in: folder).status == 0) }
        return folder
    }

    /// A store with a second name (a hard link) was migrated under one name only: the replacement
    /// gave that name a new file, the other kept the old version, and the run said it migrated
    /// "the store". Refused now, by a dry run too, both names as they were.
    @Test func aStoreWithAnotherHardLinkIsRefused() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(link(folder.appendingPathComponent("s.db").path, folder.appendingPathComponent("other.db").path) == 0)
        for arguments in [["run", "--dry-run", "s.db"], ["run", "s.db"], ["run", "s.db", "other.db"]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 2 && (run.stderr + run.stdout).contains("has another name (a hard link;"), "\(arguments): \(run.stdout)\(run.stderr)")
        }
        var first = stat(), second = stat()
        #expect(stat(folder.appendingPathComponent("s.db").path, &first) == 0 && stat(folder.appendingPathComponent("other.db").path, &second) == 0)
        #expect(first.st_ino == second.st_ino, "one file still")
        #expect(try CLI.run(["status", "other.db"], in: folder).stdout.contains("version     v2"))
        // Written to another file, it is migrated: nothing is replaced.
        #expect(try CLI.run(["run", "--quiet", "s.db", "--output", "new.db"], in: folder).status == 0)
    }

    /// A dry run said "would migrate" for a read-only store the run then refused.
    @Test func aDryRunRefusesWhatTheRunRefuses() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.appendingPathComponent("s.db").path, 0o444)
        let dry = try CLI.run(["run", "--dry-run", "s.db"], in: folder)
        #expect(dry.status == 2 && dry.stderr.contains("is read-only"), "\(dry.stdout)\(dry.stderr)")
    }
}
