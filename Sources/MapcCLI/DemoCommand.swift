import ArgumentParser
import Foundation
import MapcExamples
import MapcKit

/// `mapc demo`: the main job on the bundled UnCloudNotes example.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create UnCloudNotes stores from the bundled fixture data and migrate them progressively to the newest version.",
        discussion: "Works from any directory. The stores are made in a temporary folder (removed afterwards) unless --directory is given."
    )

    @Option(help: ArgumentHelp("Keep the demo's stores in this folder (created if needed).", valueName: "dir"))
    var directory: String?

    @Option(help: "Notes in the version 1 store.")
    var notes: Int = 2_000

    func validate() throws {
        guard (1...1_000_000).contains(notes) else { throw ValidationError("--notes must be between 1 and 1000000") }
    }

    func run() throws {
        registerUnCloudNotesPolicies()
        try reportingErrors {
            let folder = directory.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory.appendingPathComponent("mapc-demo-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
            let catalog = try SchemaCatalog(directory: UnCloudNotesDemo.schemasFolder)
            let mappings = try MappingCatalog(directory: UnCloudNotesDemo.mappingsFolder)
            Console.out("mapc demo: UnCloudNotes, \(catalog.schemas.map(\.version).joined(separator: ", ")) (schemas in \(UnCloudNotesDemo.schemasFolder))\n")
            let stores = [("notes-v1.db", UnCloudNotesDemo.v1Fixture(count: notes), "a store from version 1 of the app (\(notes) notes, no images yet)"),
                          ("notes-v2.db", UnCloudNotesDemo.v2Fixture(count: max(3, notes / 2)), "a store from version 2 (\(max(3, notes / 2)) notes, every third with a photo)")]
            for (name, fixture, description) in stores {
                let path = folder.appendingPathComponent(name).path
                AtomicFile.removeStoreFiles(path)
                let contents = try DataFile.read(fixture, schema: try catalog.require(version: fixture["version"].flatMap { if case .string(let v) = $0 { return v } else { return nil } } ?? "v1"))
                let source = try catalog.require(version: contents.version ?? "v1")
                try StoreFiles.createStore(at: path, schema: source) { try $0.insert(contents.objects) }
                Console.out("== \(name): \(description)")
                let target = try catalog.newest()
                let steps = try MigrationPlanner.plan(from: source, to: target, catalog: catalog, mappings: mappings)
                Console.out("plan: " + PlanCommand.describe(steps).joined(separator: ", "))
                let display = ProgressDisplay(quiet: false)
                let started = Date()
                let outcome = try StoreMigration.run(store: path, steps: steps) { index, count, update in
                    display.update(update, step: "step \(index + 1)/\(count) \(steps[index].source.version)->\(steps[index].destination.version)")
                }
                display.finish()
                Console.out(RunCommand.report(outcome, steps: steps, store: name, dryRun: false, output: nil, seconds: Date().timeIntervalSince(started)))
                let migrated = try Store.open(at: path, schema: target, readOnly: true)
                let notes = try migrated.objects(ofExactEntity: "Note").prefix(2)
                let images = try migrated.objects(ofExactEntity: "ImageAttachment").prefix(2)
                let sample = JSONValue.array(notes.map { DataFile.json($0, schema: target) } + images.map { image in
                    var shown = image
                    if case .binary(let data)? = image.attributes["image"] { shown.attributes["image"] = .string("<\(data.count) bytes>") }
                    return DataFile.json(shown, schema: target)
                })
                Console.out("a few migrated objects:\n" + sample.serialized(pretty: true) + "\n")
            }
            Console.out(directory == nil ? "The demo's stores were in a temporary folder and have been removed; use --directory DIR to keep them."
                                         : "The stores are in \(folder.path); try `mapc status --schemas \(UnCloudNotesDemo.schemasFolder) \(folder.appendingPathComponent("notes-v1.db").path)`.")
        }
    }
}
