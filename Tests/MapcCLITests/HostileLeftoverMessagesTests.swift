import Foundation
import Testing

/// Messages a third hostile-input probe found naming the wrong cause, mended after it: each says
/// what the input holds and what to do.
@Suite("Messages the third hostile-input probe found wrong", .serialized)
struct HostileLeftoverMessagesTests {
    /// A data file whose `"version"` is a number was said to have none ("pass --schema VERSION"),
    /// though the same file's objects were refused for it being no string.
    @Test func aVersionThatIsNoStringIsSaidToBeOne() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": 1, "objects": {}}"#, to: "d.json")
        let load = try CLI.run(["load", "d.json", "s.db"], in: folder)
        #expect(load.status == 1 && load.stderr.contains(#""version" must be a string such as "v3", not 1"#) && !load.stderr.contains("has no"), "\(load.stderr)")
        // A large value is not said whole.
        try folder.write(#"{"version": [\#((0..<20_000).map(String.init).joined(separator: ","))], "objects": {}}"#, to: "d.json")
        let large = try CLI.run(["load", "d.json", "s.db"], in: folder)
        #expect(large.status == 1 && large.stderr.utf8.count < 400, "\(large.stderr.prefix(600))")
        try folder.write(#"{"version": null, "objects": {}}"#, to: "d.json")
        let null = try CLI.run(["load", "d.json", "s.db"], in: folder)
        #expect(null.status == 1 && null.stderr.contains("not null"), "\(null.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("s.db").path))
    }

    /// `pass: -1` said "0 or more" and `pass: 0` "1 or more": one bound, said alike.
    @Test(arguments: ["-1", "0", "x"])
    func aPassBelowOneIsToldTheSameBound(pass: String) throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let path = "mappings/mapping_v2_to_v3.yaml"
        try folder.write("pass: \(pass)\n" + (try folder.read(path)), to: path)
        let check = try CLI.run(["check", path], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(check.status == 1 && check.stderr.contains("\(path):1:7: error: pass must be a whole number of 1 or more (the first pass is 1), found '\(pass)'"), "\(check.stderr)")
    }

    /// A store whose `_mapc_history` table was made otherwise (no `step` column) failed `status`
    /// and every run with SQLite's "no such column: step", a run only after its last step; what
    /// such a table holds is now named among what a migration leaves out.
    @Test func aHistoryTableMadeOtherwiseIsReadAndItsColumnsNamed() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        try sqlite(folder, "s.db", "CREATE TABLE _mapc_history (a, b); INSERT INTO _mapc_history VALUES ('kept', 2);")
        let status = try CLI.run(["status", "s.db"], in: folder)
        #expect(status.status == 0 && status.stdout.contains("_mapc_history.a (1 value)") && !status.stderr.contains("no such column") && !status.stdout.contains("(missing)"),
                "\(status.stdout)\(status.stderr)")
        let refused = try CLI.run(["run", "--to", "v2", "s.db"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("_mapc_history.a (1 value), _mapc_history.b (1 value)"), "\(refused.stderr)")
        #expect(try sqliteOutput(folder, "s.db", "SELECT a FROM _mapc_history") == "kept")
        let accepted = try CLI.run(["run", "--to", "v2", "--accept-data-loss", "s.db"], in: folder)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(try sqliteOutput(folder, "s.db", "SELECT group_concat(from_version || '>' || to_version) FROM _mapc_history") == "v1>v2")
    }

    /// An assertions file saved with a byte order mark failed its first line as an entity named
    /// with the mark.
    @Test func anAssertionsFileWithAByteOrderMarkIsRead() throws {
        let folder = try CLI.projectWithFixtures()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = "expected/notes-v2.assertions"
        try folder.write("\u{FEFF}Note: count == 2\n" + (try folder.read(path)), to: path)
        let test = try CLI.run(["test", "notes-v2"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(test.status == 0 && test.stdout.contains("PASS notes-v2"), "\(test.stdout)\(test.stderr)")
    }

    /// `MAPC_SWIFTC` naming a toolchain's folder was said not to exist.
    @Test func aCompilerThatIsAFolderIsSaidToBeOne() throws {
        let folder = try CLI.projectWithFixtures()
        defer { try? FileManager.default.removeItem(at: folder) }
        let toolchain = folder.appendingPathComponent("toolchain")
        try FileManager.default.createDirectory(at: toolchain, withIntermediateDirectories: true)
        let check = try CLI.run(["check"], in: folder, environment: ["MAPC_SWIFTC": toolchain.path, "MAPC_CACHE": folder.appendingPathComponent("cache").path])
        #expect(check.status == 2 && check.stderr.contains("a folder, not the Swift compiler") && check.stderr.contains("such as <toolchain>/usr/bin/swiftc"), "\(check.stderr)")
        // A toolchain's folder holding the compiler: that one is named.
        try FileManager.default.createDirectory(at: toolchain.appendingPathComponent("usr/bin"), withIntermediateDirectories: true)
        try folder.write("#!/bin/sh\n", to: "toolchain/usr/bin/swiftc")
        chmod(toolchain.appendingPathComponent("usr/bin/swiftc").path, 0o755)
        let named = try CLI.run(["check"], in: folder, environment: ["MAPC_SWIFTC": toolchain.path, "MAPC_CACHE": folder.appendingPathComponent("cache").path])
        #expect(named.status == 2 && named.stderr.contains(", \(toolchain.appendingPathComponent("usr/bin/swiftc").path)"), "\(named.stderr)")
        // Its bin folder, likewise (not bin/usr/bin/swiftc).
        let bin = try CLI.run(["check"], in: folder, environment: ["MAPC_SWIFTC": toolchain.appendingPathComponent("usr/bin").path, "MAPC_CACHE": folder.appendingPathComponent("cache").path])
        #expect(bin.status == 2 && bin.stderr.contains(", \(toolchain.appendingPathComponent("usr/bin/swiftc").path)") && !bin.stderr.contains("bin/usr/bin"), "\(bin.stderr)")
    }

    /// A run into Core Data's layout refusing a second owner for an object a to-many without an
    /// inverse leads to named the three objects by the new store's numbers only (`Owner/p3`),
    /// which the user's store, keeping ids, does not know them by.
    @Test func aSecondOwnerIsNamedAsTheSourceStoreNamesIt() throws {
        let entities = "  Owner:\n    attributes:\n      name: string?\n    relationships:\n      items: { destination: Item, toMany: true, optional: true, inverse: null }\n"
            + "  Item:\n    attributes:\n      label: string?\n"
        let folder = try CLI.project(versions: [("v1", entities), ("v2", entities + "      extra: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Owner": [{"id": "o1", "items": ["i1"]}, {"id": "o2", "items": ["i2"]}, {"id": "o3", "items": ["i3", "i2"]}], "#
                         + #""Item": [{"id": "i1"}, {"id": "i2"}, {"id": "i3"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        for interpret in [false, true] {
            let run = try CLI.run(["run", "--to", "v2", "--layout", "core-data", "--output", "o.db"] + (interpret ? ["--interpret"] : []) + ["s.db"], in: folder)
            #expect(run.status == 3 && run.stderr.contains("(in the source store: Owner 'o3' links Item 'i2', which Owner 'o2' links already)"), "\(run.stderr)")
        }
        // Into mapc's own format the ids are the store's: nothing to add.
        let same = try CLI.run(["load", "--layout", "core-data", "d.json", "c.db"], in: folder)
        #expect(same.status == 1 && same.stderr.contains("Owner 'o3', key 'items': Item 'i2' is linked from Owner 'o2' already") && !same.stderr.contains("in the source store"), "\(same.stderr)")
    }
}
