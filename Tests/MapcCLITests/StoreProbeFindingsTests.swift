import Foundation
import Testing

/// An app's own index on a model's table was left out of the migrated store without a word,
/// where its triggers and views are said: its fetches then ran slower with nothing to say why.
@Suite("An app's own index on a model table")
struct AppIndexTests {
    @Test(arguments: ["mapc", "core-data"])
    func theRunSaysItIsLeftOut(layout: String) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Item:\n    attributes: { name: string, rank: int32? }\n    indexes: [[name]]\n"),
            ("v2", "  Item:\n    attributes: { name: string, rank: int32?, note: string? }\n    indexes: [[name]]\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version":"v1","objects":{"Item":[{"id":"i1","name":"a","rank":1}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let (table, column) = layout == "mapc" ? ("Item", "rank") : ("ZITEM", "ZRANK")
        try sqlite(folder, "s.db", "CREATE INDEX MY_APP_IDX ON \(table) (\(column))")
        let status = try CLI.run(["status", "s.db"], in: folder)
        #expect(status.stdout.contains("index MY_APP_IDX"), "\(status.stdout)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("the store has index MY_APP_IDX, which the migrated store, made from the model, does not have"), "\(run.stderr)")
        // The model's own indexes are not said.
        #expect(!run.stderr.contains("index ITEM") && !run.stderr.contains("index Item") && !run.stderr.contains("index ZITEM"), "\(run.stderr)")
    }
}
