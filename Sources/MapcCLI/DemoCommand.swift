import ArgumentParser
import Foundation
import MapcKit

/// The worked example `mapc demo` runs: versions, mappings, policies and fixture stores. The
/// command set links no example itself; the shipped `mapc` executable supplies UnCloudNotes, and an
/// app's own `mapc` may supply its project or none.
public struct DemoProject: Sendable {
    /// The example's name, for the report.
    public var name: String
    /// Its schemas folder.
    public var schemasFolder: String
    /// Its mappings folder.
    public var mappingsFolder: String
    /// The stores to create and migrate: a file name, the data (a data file's JSON, its
    /// `version` saying which schema) and a description, for a requested number of objects.
    public var stores: @Sendable (Int) -> [(name: String, data: JSONValue, description: String)]
    /// Registers the example's policies.
    public var registerPolicies: @Sendable () -> Void
    /// The project's other folders (its policy files, fixture stores, expected data, editor
    /// schemas), which `mapc install` copies beside its schemas and mappings, each under its own
    /// name, so that a copy of the installed example is a whole project.
    public var projectFolders: [String]

    /// Describes a demo project.
    public init(name: String, schemasFolder: String, mappingsFolder: String, projectFolders: [String] = [],
                stores: @escaping @Sendable (Int) -> [(name: String, data: JSONValue, description: String)], registerPolicies: @escaping @Sendable () -> Void) {
        self.name = name
        self.schemasFolder = schemasFolder
        self.mappingsFolder = mappingsFolder
        self.projectFolders = projectFolders
        self.stores = stores
        self.registerPolicies = registerPolicies
    }
}

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
        guard let demo = MapcCommand.demo else {
            Console.err("error: this build of mapc has no demo project; the mapc executable built from the mapc package runs the UnCloudNotes example")
            throw ExitCodeError(MapcExitCode.usage)
        }
        demo.registerPolicies()
        try reportingErrors {
            let folder = try directory.map { Files.fileURL($0) } ?? Files.newTemporaryFolder(prefix: "mapc-demo-")
            try Files.makeFolder(folder.path)
            defer { if directory == nil { try? FileManager.default.removeItem(at: folder) } }
            let catalog = try SchemaCatalog(directory: demo.schemasFolder)
            let mappings = try MappingCatalog(directory: demo.mappingsFolder)
            // The stores are made new: a file in the way is the user's (an earlier demo's too), never replaced.
            let taken = demo.stores(notes).map { folder.appendingPathComponent($0.name).path }.filter { path in
                ["", "-wal", "-shm", "-journal"].contains { Files.kind(of: path + $0) != .missing }
            }
            if !taken.isEmpty {
                throw MapcError.file("\(taken.joined(separator: ", ")) \(taken.count == 1 ? "is" : "are") in the way: the demo makes its stores new and never replaces a file; "
                                     + "give --directory a new or empty folder, or delete \(taken.count == 1 ? "it" : "them") (with any -wal, -shm or -journal beside)")
            }
            Console.out("mapc demo: \(demo.name), \(catalog.schemas.map(\.version).joined(separator: ", ")) (schemas in \(demo.schemasFolder))\n")
            for (name, fixture, description) in demo.stores(notes) {
                let path = folder.appendingPathComponent(name).path
                let contents = try DataFile.read(fixture, schema: try catalog.require(version: fixture["version"].flatMap { if case .string(let v) = $0 { return v } else { return nil } } ?? "v1"))
                let source = try catalog.require(version: contents.version ?? "v1")
                try StoreFiles.createStore(at: path, schema: source) { try $0.insert(contents.objects) }
                Console.out("== \(name): \(description)")
                let target = try catalog.newest()
                // The library's one way in, as an app would call it.
                let migrator = Migrator(schemas: catalog, mappings: mappings)
                let steps = try migrator.plan(forStoreAt: Files.fileURL(path), from: source.version).steps
                Console.out("plan: " + PlanCommand.describe(steps).joined(separator: ", "))
                let display = ProgressDisplay(quiet: false)
                let started = Date()
                let outcome = try migrator.migrate(storeAt: Files.fileURL(path), from: source.version) { update in
                    display.update(update, step: "step \(update.step + 1)/\(update.steps) \(steps[update.step].source.version)->\(steps[update.step].destination.version)")
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
                                         : "The stores are in \(folder.path); try `mapc status --schemas \(demo.schemasFolder) \(folder.appendingPathComponent("notes-v1.db").path)`.")
        }
    }
}
