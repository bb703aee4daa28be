import ArgumentParser
import Foundation
import MapcKit

/// `mapc status STORE`: version, hashes, object counts and compatible schema versions.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a store's version, model hash, object counts and the schema versions it is compatible with."
    )

    @Argument(help: ArgumentHelp("The store to inspect (or several, or a folder of them).", valueName: "store"))
    var stores: [String] = []

    @OptionGroup var sources: StoreSources

    @Option(help: "Output format: text, json, or jsonl (one JSON object per store, as each is read).")
    var format: StoreOutputFormat = .text

    func validate() throws {
        if stores.isEmpty && sources.listFile == nil { throw ValidationError("give the store (or several, a folder of them, or --stores-from FILE)") }
    }

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        var worst: Int32 = MapcExitCode.success
        try reportingErrors {
            // Without a usable schemas folder the store can still say what it is; the note says
            // why no version is named. A version whose file has errors is left out, not every
            // version (one half-typed file hid the version a store is at).
            let catalog: SchemaCatalog?
            do {
                catalog = try schemaOptions.readableCatalog()
            } catch {
                catalog = nil
                Console.err("note: \(BatchOutcome.message(of: error)); the store's own records follow")
            }
            let migrator = Migrator(schemas: catalog ?? SchemaCatalog(schemas: []))
            let selection = try sources.select(stores)
            if format == .text { selection.note() }
            let paths = selection.stores
            let lines = format == .jsonl ? JSONLines() : nil
            var reports: [JSONValue] = []
            var shown = 0
            for store in paths {
                do {
                    let status = try migrator.status(ofStoreAt: Files.fileURL(store))
                    switch format {
                    case .json: reports.append(json(status, store: store, catalog: catalog))
                    case .jsonl: lines?.write(json(status, store: store, catalog: catalog))
                    case .text:
                        // A blank line between stores shown (not before the first, whichever failed before it).
                        Console.text((shown > 0 ? "\n" : "") + text(status, store: store, catalog: catalog))
                        shown += 1
                    }
                } catch where paths.count > 1 || format != .text {
                    // In JSON a store that cannot be read is reported like the others, even alone
                    // (as `run` and `plan` report it): a script reads every store's entry.
                    Console.err("error: " + BatchOutcome.message(of: error, naming: store))
                    worst = max(worst, BatchOutcome.exitCode(of: error))
                    let failure = JSONValue.object([("store", .string(store)), ("error", .string(BatchOutcome.message(of: error)))])
                    if format == .json { reports.append(failure) }
                    lines?.write(failure)
                }
            }
            for file in selection.passedOver { if format == .jsonl { lines?.write(file.json) } else { reports.append(file.json) } }
            if format == .json { Console.out((reports.count == 1 && !sources.isFleet ? reports.first ?? .null : .array(reports)).serialized(pretty: true)) }
        }
        if worst != MapcExitCode.success { throw ExitCodeError(worst) }
    }

    /// One store's status as JSON.
    private func json(_ status: StoreStatus, store: String, catalog: SchemaCatalog?) -> JSONValue {
        let metadata = status.metadata
        return JSONValue.object([
            ("store", .string(store)), ("format", .string(status.format)), ("model", metadata.model.map(JSONValue.string) ?? .null), ("identifiedModel", status.model.map(JSONValue.string) ?? .null),
            ("version", metadata.version.map(JSONValue.string) ?? .null), ("identifiedVersion", status.version.map(JSONValue.string) ?? .null),
            ("identification", .string(status.identification)),
            ("modelHash", .string(metadata.modelHash)), ("storeUUID", metadata.storeUUID.map(JSONValue.string) ?? .null),
            ("metadata", .object(metadata.shownProperties.map { ($0.key, .string($0.value)) })),
            // Not counted when no version matches (there is no schema to read the objects by): null, not none.
            ("objects", status.compatibleVersions.isEmpty ? .null : .object(status.objectCounts.map { ($0.name, JSONValue.integer(Int64($0.count))) })),
            ("compatibleVersions", .array(status.compatibleVersions.map(JSONValue.string))),
            ("otherTables", .array(status.otherTables.map(JSONValue.string))),
            ("externalData", status.externalData.map(JSONValue.string) ?? .null),
            ("temporaryFiles", .array(StoreMigration.leftovers(besides: store).map(JSONValue.string))),
            ("versionOrder", catalog?.order.map { .array($0.versions.map(JSONValue.string)) } ?? .null),
            ("history", .array(status.history.map { entry in .object([
                ("from", .string(entry.fromVersion)), ("fromHash", .string(entry.fromHash)), ("to", .string(entry.toVersion)), ("toHash", .string(entry.toHash)),
                ("inferred", .bool(entry.inferred)), ("mappingSHA256", .string(entry.mappingSHA256)), ("startedAt", .string(entry.startedAt)),
                ("finishedAt", .string(entry.finishedAt)), ("created", entry.createdObject),
                ("tool", entry.tool.map(JSONValue.string) ?? .null),
            ]) })),
        ])
    }

    /// One store's status as text.
    private func text(_ status: StoreStatus, store: String, catalog: SchemaCatalog?) -> String {
        let metadata = status.metadata
        var lines = [
            "store       \(store)",
            "format      \(status.formatName) (\(status.format))",
        ]
        if let model = metadata.model {
            lines.append("model       \(model)")
        } else if let model = status.model {
            lines.append("model       \(model) (from the matching schema; \(status.formatName) stores do not record it)")
        }
        lines.append("version     \(status.version ?? "unknown") (\(catalog == nil ? "the schemas could not be read: see the note above" : status.identification))")
        if let recorded = metadata.version, recorded != status.version { lines.append("recorded    \(recorded)") }
        lines.append("model hash  \(metadata.modelHash)")
        if let uuid = metadata.storeUUID { lines.append("store UUID  \(uuid)") }
        let shown = metadata.shownProperties
        if !shown.isEmpty {
            lines.append("metadata")
            let width = shown.map(\.key.count).max() ?? 0
            for (key, value) in shown { lines.append("  \(key.padding(toLength: width, withPad: " ", startingAt: 0))  \(value)") }
        }
        if status.objectCounts.isEmpty && status.version != nil {
            lines.append("objects     none: version \(status.version ?? "") has no entities")
        } else if status.objectCounts.isEmpty {
            lines.append("objects     unknown: " + (catalog == nil ? "the schemas could not be read" : "no schema in \(schemaOptions.schemas) matches this store"))
        } else {
            lines.append("objects")
            let width = status.objectCounts.map(\.name.count).max() ?? 0
            for entry in status.objectCounts { lines.append("  \(entry.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(entry.count)") }
        }
        if !status.otherTables.isEmpty {
            lines.append("other tables \(status.otherTables.joined(separator: ", ")) (not in the model; a migration leaves them out: see `mapc plan`)")
        }
        if let external = status.externalData {
            lines.append("external data \(external) (Core Data's files of large binary values; `run --output` copies them)")
        }
        let leftovers = StoreMigration.leftovers(besides: store)
        if !leftovers.isEmpty {
            let bytes = leftovers.reduce(Int64(0)) { $0 + (((try? FileManager.default.attributesOfItem(atPath: $1))?[.size] as? NSNumber)?.int64Value ?? 0) }
            let names = leftovers.prefix(3).map { ($0 as NSString).lastPathComponent }.joined(separator: ", ") + (leftovers.count > 3 ? ", …" : "")
            lines.append("temporary   \(English.count(leftovers.count, "file")) of a run (\(names); \(English.size(bytes))): left by a run that was killed, "
                         + "unless one is going on; the next run removes them")
        }
        lines.append("compatible  " + (catalog == nil ? "unknown (the schemas could not be read)" : status.compatibleVersions.isEmpty ? "none of the versions in \(schemaOptions.schemas)" : status.compatibleVersions.joined(separator: ", ")))
        if let catalog { lines.append("versions    \(catalog.orderDescription)") }
        if !status.history.isEmpty {
            lines.append("history")
            for entry in status.history {
                let created = entry.created.values.reduce(0, +)
                lines.append("  \(entry.finishedAt)  \(entry.fromVersion) -> \(entry.toVersion)  \(entry.inferred ? "inferred" : "mapping file")  sha256 \(entry.mappingSHA256.prefix(12))  \(English.count(created, "object")) created\(entry.tool.map { "  by \($0)" } ?? "")")
            }
        }
        return lines.joined(separator: "\n")
    }
}
