import Foundation
import Testing

/// Hierarchies reshaped as Core Data's lightweight migration reshapes them ("you can create a new
/// parent or child entity and move properties up and down the entity hierarchy"): mapc infers
/// the same steps, and asks about a loss only where one happens.
@Suite("Hierarchies reshaped")
struct HierarchyReshapeTests {
    private func project(_ v1: String, _ v2: String, data: String, layout: String = "mapc") throws -> URL {
        let folder = try CLI.emptyProject()
        try folder.write(v1, to: "schemas/v1.yaml")
        try folder.write(v2, to: "schemas/v2.yaml")
        try folder.write(data, to: "data.json")
        let load = try CLI.run(["load", "--layout", layout, "data.json", "s.db"], in: folder)
        #expect(load.status == 0, "\(load.stderr)")
        return folder
    }

    /// A relationship moved up to a new parent entity, its inverse now leading to the parent:
    /// every link leads to an object of the parent's hierarchy, and Core Data carries them. It
    /// was refused ("leads to Item, which does not correspond to Note").
    @Test(arguments: ["mapc", "core-data"])
    func aRelationshipMovedUpToANewParentKeepsItsLinks(layout: String) throws {
        let v1 = """
        model: M
        version: v1
        entities:
          Note:
            attributes: { title: string? }
            relationships:
              tags: { destination: Tag, toMany: true, inverse: note, optional: true }
          Tag:
            attributes: { name: string? }
            relationships:
              note: { destination: Note, inverse: tags, optional: true }

        """
        let v2 = """
        model: M
        version: v2
        entities:
          Item:
            attributes: { created: date? }
            relationships:
              tags: { destination: Tag, toMany: true, inverse: item, optional: true }
          Note:
            parent: Item
            attributes: { title: string? }
          Tag:
            attributes: { name: string? }
            relationships:
              item: { destination: Item, inverse: tags, optional: true, renamingIdentifier: note }

        """
        let data = #"{"version":"v1","objects":{"Note":[{"id":"n1","title":"a","tags":["t1","t2"]},{"id":"n2","title":"b"}],"Tag":[{"id":"t1","name":"x"},{"id":"t2","name":"y"},{"id":"t3","name":"z"}]}}"#
        let folder = try project(v1, v2, data: data, layout: layout)
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.status == 0 && diff.stdout.contains("verdict: inferable"), "\(diff.stdout)\(diff.stderr)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        // A Core Data store names its objects by entity and key.
        var dump = try CLI.run(["dump", "s.db"], in: folder).stdout.filter { !$0.isWhitespace }
        for (id, name) in [("Note/p1", "n1"), ("Tag/p1", "t1"), ("Tag/p2", "t2")] { dump = dump.replacingOccurrences(of: id, with: name) }
        #expect(dump.contains(#""title":"a","tags":["t1","t2"]"#) && dump.contains(#""title":"b","tags":[]"#), "\(dump)")
        #expect(dump.components(separatedBy: #""item":"n1""#).count == 3 && dump.contains(#""name":"z","item":null"#), "\(dump)")
    }
}
