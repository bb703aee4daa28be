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

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        try reportingErrors {
            let schema = try schemaOptions.schema(self.schema)
            let hashes = VersionHash.entityHashes(of: schema)
            let modelHash = VersionHash.modelHash(entityHashes: hashes)
            switch format {
            case .json:
                let entities = hashes.keys.sorted().map { ($0, JSONValue.string(hashes[$0]!)) }
                Console.out(JSONValue.object([("model", .string(schema.model)), ("version", .string(schema.version)),
                                              ("modelHash", .string(modelHash)), ("entities", .object(entities))]).serialized(pretty: true))
            case .text:
                var lines = [schema.displayName, "model  \(modelHash)"]
                let width = hashes.keys.map(\.count).max() ?? 0
                for name in hashes.keys.sorted() {
                    lines.append("entity \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(hashes[name]!)")
                }
                Console.out(lines.joined(separator: "\n"))
            }
        }
    }
}
