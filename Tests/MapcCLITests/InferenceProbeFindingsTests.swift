import Foundation
import Testing

/// An optional UUID or URI attribute made required with a default: inference fills nil with the
/// default, as for every other type, where it refused the step (the fill expression had no literal
/// for these types). A binary default has none still (no literal of bytes): its step is taken for a
/// store holding no nil there, as the same change without a default is, where it was refused.
@Suite("Optional to required with a UUID, URI or binary default")
struct RequiredWithDefaultOfEveryTypeTests {
    @Test(arguments: ["mapc", "core-data"], ["", "--every-version", "--infer-directly", "--interpret"])
    func nilBecomesTheDefault(layout: String, mode: String) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  E:\n    attributes:\n      u: uuid?\n      w: uri?\n      b: binary?\n"),
            ("v2", "  E:\n    attributes:\n      u: { type: uuid, default: \"D6645FA9-E8A8-529F-035E-FA259B08923D\" }\n"
                + "      w: { type: uri, default: \"https://e.com/x y\" }\n      b: { type: binary, default: \"AAE=\" }\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v1","objects":{"E":[{"id":"e1"},{"id":"e2","u":"00000000-0000-0000-0000-000000000001","w":"a:b","b":"/w=="}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        // e1's nil bytes have nowhere to go; given bytes, the step is taken.
        let refused = try CLI.run(["run"] + (mode.isEmpty ? [] : [mode]) + ["s.db"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("E.b: optional -> required, with a default no mapping expression can write (the expression language has no binary literal)")
                && !refused.stderr.contains("E.u") && !refused.stderr.contains("E.w"), "\(refused.stderr)")
        try sqlite(folder, "s.db", layout == "mapc" ? "UPDATE E SET b = X'0001' WHERE b IS NULL" : "UPDATE ZE SET ZB = X'0001' WHERE ZB IS NULL")
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.status == 0 && diff.stdout.contains("E.u: optional -> required, nil becomes d6645fa9") && !diff.stdout.contains("- E.u") && !diff.stdout.contains("- E.w")
                && diff.stdout.contains("E.b: default none -> <2 bytes> (new objects only"), "\(diff.stdout)")
        let run = try CLI.run(["run"] + (mode.isEmpty ? [] : [mode]) + ["s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        let objects = try #require((try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])?["objects"] as? [String: [[String: Any]]], "\(dump.stdout)\(dump.stderr)")
        let rows = (objects["E"] ?? []).map { [$0["u"] as? String, $0["w"] as? String, $0["b"] as? String] }
        #expect(Set(rows) == [["d6645fa9-e8a8-529f-035e-fa259b08923d", "https://e.com/x y", "AAE="], ["00000000-0000-0000-0000-000000000001", "a:b", "/w=="]], "\(dump.stdout)")
    }
}

/// An entity added after the store's version and removed again: no object of the store can be
/// one, so its removal loses nothing and is not said (the run and the plan noted "drops entity
/// Draft, but the store held none", true and noise). One the store's version has is still said.
@Suite("Drops of an entity the store cannot have objects of")
struct NeverHeldDropsTests {
    @Test(arguments: ["mapc", "core-data"])
    func theyAreNotSaid(layout: String) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Note:\n    attributes: { title: string, old: string? }\n"),
            ("v2", "  Note:\n    attributes: { title: string }\n  Draft:\n    attributes: { text: string? }\n"),
            ("v3", "  Note:\n    attributes: { title: string }\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v1","objects":{"Note":[{"id":"n1","title":"a"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--every-version", "s.db"], in: folder)
        #expect(run.status == 0 && !run.stderr.contains("Draft") && run.stderr.contains("drops Note.old, but the store held none"), "\(run.stderr)")
    }
}
