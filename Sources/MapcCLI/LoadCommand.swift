import ArgumentParser
import Foundation
import MapcKit

/// `mapc load [--schema VERSION] DATA.json STORE`: creates or fills a store from a data file.
struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Create a store from a JSON data file, or add the file's objects to an existing store.",
        discussion: "All objects are validated first; on any problem nothing is written and the problems are listed by entity, object id and key."
    )

    @Option(help: ArgumentHelp("The version of the data; defaults to the data file's \"version\" (or the store's).", valueName: "version"))
    var schema: String?

    @Argument(help: ArgumentHelp("The JSON data file.", valueName: "data.json"))
    var data: String

    @Argument(help: ArgumentHelp("The store to create or fill.", valueName: "store"))
    var store: String

    @OptionGroup var schemaOptions: SchemaOptions

    @OptionGroup var layout: LayoutOption

    func run() throws {
        try reportingErrors {
            // Data files are validated whole before anything is written, which costs memory in
            // proportion to their size: refuse what would not fit, rather than crash.
            if let size = (try? FileManager.default.attributesOfItem(atPath: data))?[.size] as? NSNumber,
               let problem = DataFile.memoryProblem(fileSize: size.intValue, physicalMemory: ProcessInfo.processInfo.physicalMemory) {
                throw MapcError.input("\(data): \(problem)")
            }
            do {
                try load()
            } catch let error as DataValidationError {
                // Each problem at its place in the file (a second reading, on failure only: the
                // file's bytes are not kept while the objects are written).
                throw DataFile.placed(error, in: try Files.read(data, what: "the data file", maxBytes: .max), path: data)
            }
        }
    }

    /// Loads the data file into the store.
    private func load() throws {
        // The file's bytes and their JSON tree are dropped once the objects are read from them:
        // they took as much memory again as the objects while the rows were written.
        var json = try JSONValue.parse(Files.read(data, what: "the data file", maxBytes: .max), path: data)
        // A data file is an object (`version`, `objects`): anything else is said first, not
        // taken for one without a version.
        guard case .object = json else {
            throw MapcError.input("\(data) is not a data file: its top level must be a JSON object with \"version\" and \"objects\" (as `mapc dump` writes one)")
        }
        let declared = try DataFile.declaredVersion(of: json, in: data)
        let exists = FileManager.default.fileExists(atPath: store)
        let schema: Schema
        if let name = self.schema {
            schema = try schemaOptions.schema(name)
        } else if let declared {
            // The file's "version" names a version of the project, never a file: a data file
            // from elsewhere must not have mapc read (and quote) a path it chose.
            schema = try schemaOptions.catalog().require(version: declared)
        } else if exists {
            schema = try Store.open(at: store, catalog: try schemaOptions.catalog(), readOnly: true).schema
        } else {
            throw MapcError.input("\(data) has no \"version\"; pass --schema VERSION")
        }
        if let declared, declared != schema.version {
            throw MapcError.input("\(data) declares version \(declared), but --schema is \(schema.version); they must agree")
        }
        if exists {
            let real = try Files.existingStore(store)
            if Files.isReadOnlyStore(real) {
                throw MapcError.store("\(store) is read-only: loading adds objects to it. Make it writable (chmod u+w) to load into it, or load into a new store")
            }
            let lock = try StoreLock(store: store)
            defer { lock.release() }
            let target = try Store.open(at: store, schema: schema)
            let contents = try DataFile.read(json, schema: schema, for: target.format)
            json = .null
            try target.checkIntegrity()
            try target.insert(contents.objects)
            Console.text("added \(English.count(contents.objects.count, "object")) to \(store) (\(schema.version))")
            noteIdentities(keptBy: target, objects: contents.objects.count)
        } else {
            var created: Store?
            let format = try layout.format() ?? .mapc
            let contents = try DataFile.read(json, schema: schema, for: format)
            json = .null
            try StoreFiles.createStore(at: store, schema: schema, format: format) { try $0.insert(contents.objects); created = $0 }
            Console.text("created \(store) (\(schema.version)) with \(English.count(contents.objects.count, "object"))")
            if let created { noteIdentities(keptBy: created, objects: contents.objects.count) }
        }
    }

    /// Says so when the store keeps no identities (Core Data's format): the data's ids related its
    /// objects, and the store names them by entity and key, as a dump shows.
    private func noteIdentities(keptBy store: Store, objects: Int) {
        guard objects > 0, !store.keepsIdentities else { return }
        let example = store.schema.entities.first { !$0.isAbstract }?.name ?? "Entity"
        Console.err("note: a \(store.format.name) store keeps no ids: the data's ids related its objects, and the store names them by entity and key (\(example)/p1, …), as `mapc dump` shows")
    }
}
