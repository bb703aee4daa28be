import Foundation
import Testing

/// A default written by the compiled path's SQL is the value the interpreter and `load` write:
/// text holding NUL whole (bound through GRDB it ended at the NUL), and a decimal a Core Data
/// column cannot keep refused, naming the object (the SQL rounded it). Both exited 0.
@Suite("Defaults on the compiled path")
struct CompiledDefaultsTests {
    private func project(_ added: String, layout: String) throws -> URL {
        let folder = try CLI.emptyProject()
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        try folder.write("model: M\nversion: v1\nentities:\n  E:\n    attributes:\n      k: int64\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  E:\n    attributes:\n      k: int64\n      \(added)\n", to: "schemas/v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"E": [{"id": "o0", "k": 0}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        return folder
    }

    @Test(arguments: ["mapc", "core-data"])
    func aDefaultHoldingNULIsWrittenWhole(layout: String) throws {
        let folder = try project(#"s: { type: string, default: "a\0b" }"#, layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        for options in [[], ["--interpret"]] {
            let run = try CLI.run(["run", "--quiet", "--output", "o\(options.count).db"] + options + ["s.db"], in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            let dump = try CLI.run(["dump", "o\(options.count).db"], in: folder)
            #expect(dump.stdout.contains(#""s": "a\u0000b""#), "\(options): \(dump.stdout)")
        }
    }

    @Test func aDecimalDefaultACoreDataColumnCannotKeepIsRefused() throws {
        let folder = try project("d: { type: decimal, default: 99999999999999999999 }", layout: "core-data")
        defer { try? FileManager.default.removeItem(at: folder) }
        for options in [[], ["--interpret"]] {
            let run = try CLI.run(["run", "--quiet", "--output", "o\(options.count).db"] + options + ["s.db"], in: folder)
            #expect(run.status == 3 && run.stderr.contains("decimal 99999999999999999999 has more digits than a Core Data DECIMAL column keeps"), "\(options): \(run.stderr)")
        }
    }
}

/// Text becoming a URI through a mapping is kept as written, as `load` keeps a data file's URI
/// (the mapping trimmed its spaces, exit 0, and refused text `load` takes).
@Suite("Text into a URI attribute")
struct TextIntoURITests {
    @Test func textIsKeptAsWrittenOnEveryPath() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        try folder.write("model: M\nversion: v1\nentities:\n  E:\n    attributes:\n      s: string?\n", to: "schemas/v1.yaml")
        try folder.write("model: M\nversion: v2\nentities:\n  E:\n    attributes:\n      s: uri?\n", to: "schemas/v2.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - { name: EToE, source: E, destination: E, attributes: { s: $source.s } }\n", to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"E": [{"id": "o1", "s": " http://example.com/ "}, {"id": "o2", "s": "http://x y"}, {"id": "o3", "s": ""}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        for options in [[], ["--interpret"]] {
            let run = try CLI.run(["run", "--quiet", "--output", "o\(options.count).db"] + options + ["s.db"], in: folder)
            #expect(run.status == 0, "\(options): \(run.stderr)")
            let dump = try CLI.run(["dump", "o\(options.count).db"], in: folder).stdout
            for text in [#""s": " http://example.com/ ""#, #""s": "http://x y""#, #""s": """#] { #expect(dump.contains(text), "\(options): \(text) in \(dump)") }
        }
    }
}
