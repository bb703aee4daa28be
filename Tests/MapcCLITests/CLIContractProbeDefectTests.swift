import Foundation
import Testing

/// Defects a probe of the contract a script relies on found (exit statuses, what goes to
/// standard output, messages), run through the CLI as a script runs it.
@Suite("Defects found by a probe of the CLI's contract", .serialized)
struct CLIContractProbeDefectTests {
    /// A file where a command makes a folder (`editor-schemas --output`, `import --output`,
    /// `demo --directory`, `install --prefix`) gave Foundation's dump ("Error Domain=
    /// NSCocoaErrorDomain Code=516 … UserInfo={…}") with exit 1: said as such now, exit 2.
    @Test func aFileWhereAFolderGoesIsSaidAsSuch() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("not a folder\n", to: "FILE")
        for command in [["editor-schemas", "--output", "FILE"], ["editor-schemas", "--output", "FILE/sub"], ["demo", "--directory", "FILE"], ["install", "--prefix", "FILE"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 2 && result.stderr.contains("is a file, not a folder") && !result.stderr.contains("Error Domain"), "\(command): \(result.status) \(result.stderr)")
        }
    }
    /// `graph ./nofile.yaml` and `diff ./nofile.yaml v2` said "unknown version './nofile.yaml'",
    /// exit 2, where a missing schema file is exit 1 (as `hash` says it).
    @Test func aMissingSchemaFileIsMissingForGraphAndDiff() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        for command in [["graph", "./nofile.yaml"], ["diff", "./nofile.yaml", "v2"], ["graph", "sub/nofile"], ["hash", "sub/nofile"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 1 && result.stderr.contains("no such file"), "\(command): \(result.status) \(result.stderr)")
        }
        let version = try CLI.run(["diff", "v1", "v9"], in: folder)
        #expect(version.status == 2 && version.stderr.contains("unknown version 'v9'"), "\(version.stderr)")
    }
}
