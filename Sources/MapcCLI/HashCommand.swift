import ArgumentParser
import MapcKit

/// `mapc hash FILE|VERSION`: prints the model hash and every entity hash.
struct HashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print a schema version's model hash and entity hashes."
    )

    @Argument(help: ArgumentHelp("A schema file, or a version name in the schemas folder.", valueName: "file|version"))
    var schema: String

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    @Flag(name: .customLong("core-data"), help: "Print Core Data's entity version hashes instead (NSStoreModelVersionHashes, base64, as a Core Data store's metadata records them) and their digest.")
    var coreData = false

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        try reportingErrors {
            let schema = try schemaOptions.schema(self.schema)
            // mapc's hashes and their model hash, or Core Data's and their digest (`NSStoreModelVersionHashesDigest`).
            let hashes = coreData ? CoreDataVersionHash.entityHashes(of: schema) : VersionHash.entityHashes(of: schema)
            let (summaryKey, summaryLabel) = coreData ? ("digest", "digest") : ("modelHash", "model ")
            let summary = coreData ? CoreDataVersionHash.digest(of: hashes) : VersionHash.modelHash(entityHashes: hashes)
            let unknown = coreData ? schema.entities.filter { !$0.notImported.isEmpty }.map(\.name) : []
            if !unknown.isEmpty {
                throw MapcError.input("Core Data's hashes of \(schema.displayName) are not known: \(unknown.joined(separator: ", ")) \(unknown.count == 1 ? "has" : "have") what mapc does not import "
                                      + "(a composite attribute), which Core Data's hash covers")
            }
            let names = hashes.keys.sorted()
            switch format {
            case .json:
                let entities = names.map { ($0, JSONValue.string(hashes[$0] ?? "")) }
                Console.out(JSONValue.object([("model", .string(schema.model)), ("version", .string(schema.version)),
                                              (summaryKey, .string(summary)), ("entities", .object(entities))]).serialized(pretty: true))
            case .text:
                var lines = [schema.displayName, "\(summaryLabel) \(summary)"]
                let width = names.map(\.count).max() ?? 0
                for name in names {
                    lines.append("entity \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(hashes[name] ?? "")")
                }
                Console.text(lines.joined(separator: "\n"))
            }
        }
    }
}
