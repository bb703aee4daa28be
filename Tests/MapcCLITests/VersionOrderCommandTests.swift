import Foundation
import MapcKit
import Testing

/// A blog project whose version names (initial, tags, subtitle) give no order.
private func blogProject() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-order-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
    let attributes = ["initial": "", "tags": "      tags: { type: string, optional: true }\n",
                      "subtitle": "      tags: { type: string, optional: true }\n      subtitle: { type: string, optional: true }\n"]
    for (version, extra) in attributes {
        try folder.write("model: Blog\nversion: \(version)\nentities:\n  Post:\n    attributes:\n      title: { type: string }\n\(extra)", to: "schemas/\(version).yaml")
    }
    try folder.write(#"{"version": "subtitle", "objects": {"Post": [{"id": "p1", "title": "Hello", "subtitle": "world"}]}}"#, to: "data.json")
    #expect(try CLI.run(["load", "data.json", "blog.db"], in: folder).status == 0)
    return folder
}

@Suite("Version order on the command line", .serialized)
struct VersionOrderCommandTests {
    @Test func namesThatGiveNoOrderAreRefusedEverywhereOrderMatters() throws {
        let folder = try blogProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = try Data(contentsOf: folder.appendingPathComponent("blog.db"))
        for arguments in [["plan", "blog.db"], ["run", "--to", "tags", "blog.db"], ["run", "--dry-run", "blog.db"]] {
            let result = try CLI.run(arguments, in: folder)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("cannot be told from their names") && result.stderr.contains("versions.yaml"), "\(result.stderr)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("blog.db")) == original)
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("cannot be told from their names"), "\(check.stderr)")
    }

    @Test func aDeclaredOrderNeverRunsBackwardsWithoutAMappingFile() throws {
        let folder = try blogProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [initial, tags, subtitle]\n", to: "schemas/versions.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("versions: initial → tags → subtitle (declared in ./schemas/versions.yaml)"), "\(check.stdout)")
        let plan = try CLI.run(["plan", "blog.db"], in: folder)
        #expect(plan.status == 0 && plan.stdout.contains("blog.db is already at subtitle; nothing to do"), "\(plan.stdout)\(plan.stderr)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("maps"), withIntermediateDirectories: true)
        let down = try CLI.run(["run", "--to", "tags", "--mappings", "maps", "blog.db"], in: folder)
        #expect(down.status == 2, "\(down.stderr)")
        #expect(down.stderr.contains("a downgrade runs only with a mapping file") && down.stderr.contains("maps/mapping_subtitle_to_tags.yaml"), "\(down.stderr)")
        #expect(!down.stderr.contains("mapc infer"), "infer never writes a downgrade, so the error must not send users there: \(down.stderr)")
        let infer = try CLI.run(["infer", "--from", "subtitle", "--to", "tags"], in: folder)
        #expect(infer.status == 1 && infer.stderr.contains("never infers a downgrade"), "\(infer.stderr)")
    }

    @Test func aDowngradeMappingFileIsCheckedAndRuns() throws {
        let folder = try blogProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [initial, tags, subtitle]\n", to: "schemas/versions.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("maps"), withIntermediateDirectories: true)
        try folder.write("""
        source: subtitle
        destination: initial
        entityMappings:
          - name: PostToPost
            source: Post
            destination: Post
            attributes:
              title: FUNCTION($source.title, "stringByAppendingString:", FUNCTION(" - ", "stringByAppendingString:", $source.subtitle))
        """, to: "maps/mapping_subtitle_to_initial.yaml")
        #expect(try CLI.run(["check", "--mappings", "maps"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "--to", "initial", "--mappings", "maps", "blog.db"], in: folder)
        #expect(plan.stdout.contains("subtitle -> initial (mapping mapping_subtitle_to_initial.yaml, downgrade)"), "\(plan.stdout)\(plan.stderr)")
        let run = try CLI.run(["run", "--to", "initial", "--mappings", "maps", "blog.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "blog.db"], in: folder)
        #expect(dump.stdout.contains("\"version\": \"initial\"") && dump.stdout.contains("\"title\": \"Hello - world\""), "\(dump.stdout)")
    }

    @Test func initAndStatusShowTheOrder() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let created = try CLI.run(["init", "--schema", "v2", "empty.db"], in: folder)
        #expect(created.stdout.contains("versions: v1 → v2 → v3 → v4 (declared in ./schemas/versions.yaml)"), "\(created.stdout)")
        #expect(try CLI.run(["status", "empty.db"], in: folder).stdout.contains("versions    v1 → v2 → v3 → v4"))
    }
}
