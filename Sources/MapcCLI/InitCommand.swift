import ArgumentParser
import Foundation
import MapcKit

/// `mapc init --schema VERSION STORE`: creates an empty store.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create an empty store laid out for a schema version."
    )

    @Option(help: ArgumentHelp("The version (or schema file) to lay the store out for.", valueName: "version"))
    var schema: String

    @Argument(help: ArgumentHelp("The store file to create; it must not exist yet.", valueName: "store"))
    var store: String

    @OptionGroup var schemaOptions: SchemaOptions

    @OptionGroup var layout: LayoutOption

    func run() throws {
        try reportingErrors {
            let schema = try schemaOptions.schema(self.schema)
            try StoreFiles.createStore(at: store, schema: schema, format: try layout.format() ?? .mapc) { _ in }
            let count = schema.entities.count
            var line = "created \(store): \(schema.displayName), \(count) entit\(count == 1 ? "y" : "ies")"
            if let catalog = try? schemaOptions.catalog(), catalog.schema(version: schema.version) != nil {
                // An order that cannot be told is a warning (the store is made; `run` will need the order).
                if let problem = catalog.orderProblem { Console.err("warning: \(problem)") } else { line += "\nversions: \(catalog.orderDescription)" }
            }
            Console.text(line)
        }
    }
}

/// Store creation shared by `init` and `load`: built under a temporary name, then renamed, so a
/// failed or killed command never leaves a half-made store behind.
enum StoreFiles {
    static func createStore(at path: String, schema: Schema, format: StoreFormat = .mapc, _ fill: (Store) throws -> Void) throws {
        if Files.kind(of: Files.realPath(path)) == .regularFile {
            throw MapcError.file("\(path) already exists; choose another path, or use 'mapc load' to add objects to it")
        }
        // No lock: the new store appears by an atomic link that refuses to replace anything.
        let real = try Files.newStore(path)
        try AtomicFile.create(at: real) { temporary in
            let store = try Store.create(at: temporary, schema: schema, format: format)
            try fill(store)
            try store.close()
        }
    }
}
