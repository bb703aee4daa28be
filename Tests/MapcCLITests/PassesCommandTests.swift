import Foundation
import Testing

/// Several mapping files for one step (Apple's "Multiple Passes—Dealing With Large Datasets"):
/// run in their declared order as one atomic step, imported side by side.
@Suite("Mapping passes")
struct PassesCommandTests {
    private func project() throws -> URL {
        let folder = try CLI.project()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        var notes: [String] = []
        for index in 0..<6 {
            let image = index % 2 == 0 ? #""iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA=""# : "null"
            notes.append(#"{"id": "n\#(index)", "title": "Note \#(index)", "body": "Body", "dateCreated": "2024-05-01T10:00:00Z", "displayIndex": \#(index), "image": \#(image)}"#)
        }
        try folder.write(#"{"version": "v2", "objects": {"Note": [\#(notes.joined(separator: ","))]}}"#, to: "v2.json")
        #expect(try CLI.run(["load", "v2.json", "notes.db"], in: folder).status == 0)
        return folder
    }

    private let notesPass = """
        source: v2
        destination: v3
        pass: 1
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
        """
    private let attachmentsPass = """
        source: v2
        destination: v3
        pass: 2
        entityMappings:
          - name: NoteToAttachment
            source: Note
            destination: Attachment
            filter: image != nil
            attributes: { image: $source.image, dateCreated: $source.dateCreated }
        """

    @Test func passesRunInTheirOrderAsOneStep() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Named so that the file order is not the pass order.
        try folder.write(attachmentsPass, to: "mappings/a_attachments.yaml")
        try folder.write(notesPass, to: "mappings/b_notes.yaml")
        let plan = try CLI.run(["plan", "notes.db"], in: folder)
        #expect(plan.stdout.contains("v2 -> v3 (passes b_notes.yaml, then a_attachments.yaml, filters NoteToAttachment to Note where image != nil)"), "\(plan.stdout)\(plan.stderr)")
        let run = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("NoteToNote        6 objects created") && run.stdout.contains("NoteToAttachment  3 objects created") && run.stdout.contains("objects: Note 6, Attachment 3"),
                "\(run.stdout)")
        // One step in the store's history.
        let status = try CLI.run(["status", "notes.db"], in: folder)
        #expect(status.stdout.components(separatedBy: "v2 -> v3").count == 2, "\(status.stdout)")
    }

    @Test func twoFilesForOneStepWithoutPassesAreAnErrorSayingHowToRunBoth() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(notesPass.replacingOccurrences(of: "pass: 1\n", with: ""), to: "mappings/a.yaml")
        try folder.write(attachmentsPass.replacingOccurrences(of: "pass: 2\n", with: ""), to: "mappings/b.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("this file maps v2 to v3, and so does") && check.stderr.contains("give each file 'pass: 1', 'pass: 2'"), "\(check.stderr)")
    }

    /// A pass that fails leaves the store as it was, whatever the passes before it wrote.
    @Test func aFailingLaterPassLeavesTheStoreUnchanged() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(notesPass, to: "mappings/a.yaml")
        try folder.write(attachmentsPass.replacingOccurrences(of: "image: $source.image", with: "image: FUNCTION($source.title, \"dataUsingEncoding:\")"), to: "mappings/b.yaml")
        let before = try Data(contentsOf: folder.appendingPathComponent("notes.db"))
        let run = try CLI.run(["run", "--to", "v3", "notes.db"], in: folder)
        #expect(run.status != 0, "\(run.stdout)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("notes.db")) == before)
    }

    /// A second Xcode mapping model of a step (a project shipping its passes as two models) is
    /// imported beside the first as the step's next pass.
    @Test func aSecondMappingModelOfAStepImportsAsItsNextPass() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-passes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixtures = CLI.packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/xcode")
        #expect(try CLI.run(["import", fixtures.appendingPathComponent("Kitchen.xcdatamodeld").path], in: folder).status == 0)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel"), to: folder.appendingPathComponent("First.xcmappingmodel"))
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("Kitchen 1-Kitchen 2.xcmappingmodel"), to: folder.appendingPathComponent("Second.xcmappingmodel"))
        _ = try CLI.run(["import", "First.xcmappingmodel"], in: folder)
        let second = try CLI.run(["import", "Second.xcmappingmodel"], in: folder)
        #expect(second.stderr.contains("is written as pass 2 of that step (mapping_Kitchen_to_Kitchen 2.pass2.yaml)"), "\(second.stderr)")
        #expect(try folder.read("mappings/mapping_Kitchen_to_Kitchen 2.pass2.yaml").contains("\npass: 2\n"))
        #expect(folder.exists("mappings/mapping_Kitchen_to_Kitchen 2.yaml"))
        // Importing the first again is not a new pass: it asks for --replace.
        let again = try CLI.run(["import", "First.xcmappingmodel"], in: folder)
        #expect(again.status != 0 && again.stderr.contains("already exist"), "\(again.stderr)")
    }
}

/// A chain of steps reports every blocker, in order: a missing policy of the first step is not
/// hidden by a later step that cannot be made.
@Suite("Every blocker of a chain")
struct ChainBlockersTests {
    @Test func planAndRunNameEveryBlockerInOrder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-chain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (version, extra) in [("s1", ""), ("s2", "      size: int64?\n"), ("s3", "      size: int64?\n      weight: int64\n"), ("s4", "      size: int64?\n      weight: int64\n      color: string\n")] {
            try folder.write("model: S\nversion: \(version)\nentities:\n  Item:\n    attributes:\n      name: string\n\(extra)", to: "schemas/\(version).yaml")
        }
        try folder.write("versions: [s1, s2, s3, s4]\n", to: "schemas/versions.yaml")
        try folder.write("source: s1\ndestination: s2\nentityMappings:\n  - { name: ItemToItem, source: Item, destination: Item, policy: App.MissingPolicy }\n", to: "mappings/m12.yaml")
        try folder.write(#"{"version": "s1", "objects": {"Item": [{"id": "i1", "name": "a"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        for command in [["plan", "s.db"], ["run", "s.db"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status != 0)
            let policy = result.stderr.range(of: "App.MissingPolicy"), s23 = result.stderr.range(of: "cannot migrate from s2 to s3"), s34 = result.stderr.range(of: "cannot migrate from s3 to s4")
            #expect(policy != nil && s23 != nil && s34 != nil, "\(command): \(result.stderr)")
            if let policy, let s23, let s34 { #expect(policy.lowerBound < s23.lowerBound && s23.lowerBound < s34.lowerBound, "in order: \(result.stderr)") }
        }
    }
}
