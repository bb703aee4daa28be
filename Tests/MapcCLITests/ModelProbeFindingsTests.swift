import Foundation
import Testing

/// One side of an inverse pair removed, the other kept without an inverse (`inverse: null`):
/// a link is stored once and seen from both sides, so the kept side holds every link. The step
/// was refused as dropping the removed side's values (and, with `--accept-data-loss`, said to
/// have dropped them), though the dump showed each link.
@Suite("One side of an inverse pair removed")
struct InverseSideRemovedTests {
    static let v1 = """
    model: M
    version: v1
    entities:
      Data:
        attributes: { name: string? }
        relationships:
          owner: { destination: Player, inverse: datas, optional: true }
      Player:
        attributes: { nick: string? }
        relationships:
          datas: { destination: Data, toMany: true, inverse: owner, optional: true }

    """

    @Test(arguments: ["mapc", "core-data"], [true, false])
    func theKeptSideHoldsEveryLink(layout: String, removingTheToMany: Bool) throws {
        let data = removingTheToMany ? "owner: { destination: Player, inverse: null, optional: true }" : "{}"
        let player = removingTheToMany ? "{}" : "datas: { destination: Data, toMany: true, inverse: null, optional: true }"
        let v2 = "model: M\nversion: v2\nentities:\n  Data:\n    attributes: { name: string? }\n    relationships: \(removingTheToMany ? "\n      " + data : data)\n"
            + "  Player:\n    attributes: { nick: string? }\n    relationships: \(removingTheToMany ? player : "\n      " + player)\n"
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(Self.v1, to: "schemas/v1.yaml")
        try folder.write(v2, to: "schemas/v2.yaml")
        try folder.write(#"{"version":"v1","objects":{"Player":[{"id":"p1","nick":"a"},{"id":"p2"}],"Data":[{"id":"d1","owner":"p1"},{"id":"d2","owner":"p1"},{"id":"d3"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let kept = removingTheToMany ? "Data.owner" : "Player.datas"
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("its links are kept by \(kept)") && !diff.stdout.contains("drops the values"), "\(diff.stdout)")
        let plan = try CLI.run(["plan", "s.db"], in: folder)
        #expect(plan.status == 0 && !plan.stdout.contains("drops"), "\(plan.stdout)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0 && !run.stderr.contains("drop"), "\(run.stderr)")
        // Ids are the data file's in mapc's format, entity and key in Core Data's: p1 is the player named "a".
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout
        let objects = try #require((try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])?["objects"] as? [String: [[String: Any]]], "\(dump)")
        let p1 = try #require(objects["Player"]?.first { $0["nick"] as? String == "a" }, "\(dump)")
        if removingTheToMany {
            #expect(objects["Data"]?.filter { $0["owner"] as? String == p1["id"] as? String }.count == 2, "\(dump)")
        } else {
            #expect((p1["datas"] as? [String])?.count == 2, "\(dump)")
        }
    }
}
