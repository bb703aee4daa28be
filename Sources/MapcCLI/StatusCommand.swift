import ArgumentParser
import Foundation
import MapcKit

/// `mapc status STORE`: version, hashes, object counts and compatible schema versions.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a store's version, model hash, object counts and the schema versions it is compatible with."
    )

    @Argument(help: ArgumentHelp("The store to inspect.", valueName: "store"))
    var store: String

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        try reportingErrors {
            let metadata = try Store.metadata(at: store)
            let catalog = try? schemaOptions.catalog()
            let compatible = catalog?.versions(matchingModelHash: metadata.modelHash).map(\.version) ?? []
            var counts: [(String, Int)] = []
            var history: [HistoryEntry] = []
            if let catalog, !compatible.isEmpty {
                let opened = try Store.open(at: store, catalog: catalog, readOnly: true)
                counts = try opened.schema.entities.map { ($0.name, try opened.count(of: $0.name, exactly: true)) }
                history = try StoreHistory.read(opened)
            }
            switch format {
            case .json:
                Console.out(JSONValue.object([
                    ("store", .string(store)), ("model", .string(metadata.model)), ("version", .string(metadata.version)),
                    ("modelHash", .string(metadata.modelHash)), ("layout", .string(metadata.layout)),
                    ("objects", .object(counts.map { ($0.0, .integer(Int64($0.1))) })),
                    ("compatibleVersions", .array(compatible.map(JSONValue.string))),
                    ("versionOrder", catalog?.order.map { .array($0.versions.map(JSONValue.string)) } ?? .null),
                    ("history", .array(history.map { entry in .object([
                        ("from", .string(entry.fromVersion)), ("fromHash", .string(entry.fromHash)), ("to", .string(entry.toVersion)), ("toHash", .string(entry.toHash)),
                        ("inferred", .bool(entry.inferred)), ("mappingSHA256", .string(entry.mappingSHA256)), ("startedAt", .string(entry.startedAt)),
                        ("finishedAt", .string(entry.finishedAt)), ("created", .object(entry.created.keys.sorted().map { ($0, .integer(Int64(entry.created[$0]!))) })),
                    ]) })),
                ]).serialized(pretty: true))
            case .text:
                var lines = [
                    "store       \(store)",
                    "model       \(metadata.model)",
                    "version     \(metadata.version)",
                    "model hash  \(metadata.modelHash)",
                    "layout      \(metadata.layout)",
                ]
                if counts.isEmpty {
                    lines.append("objects     unknown: no schema in \(schemaOptions.schemas) matches this store")
                } else {
                    lines.append("objects")
                    let width = counts.map(\.0.count).max() ?? 0
                    for (name, count) in counts { lines.append("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(count)") }
                }
                lines.append("compatible  " + (compatible.isEmpty ? "none of the versions in \(schemaOptions.schemas)" : compatible.joined(separator: ", ")))
                if let catalog { lines.append("versions    \(catalog.orderDescription)") }
                if !history.isEmpty {
                    lines.append("history")
                    for entry in history {
                        let created = entry.created.values.reduce(0, +)
                        lines.append("  \(entry.finishedAt)  \(entry.fromVersion) -> \(entry.toVersion)  \(entry.inferred ? "inferred" : "mapping file")  sha256 \(entry.mappingSHA256.prefix(12))  \(created) object\(created == 1 ? "" : "s") created")
                    }
                }
                Console.out(lines.joined(separator: "\n"))
            }
        }
    }
}
