import ArgumentParser
import Foundation
import MapcKit

/// `mapc run [--from VERSION] --to VERSION STORE`: migrates a store.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Migrate a store to another schema version with the mapping in the mappings folder.",
        discussion: """
        The store is either left untouched at its old version or replaced, in one atomic step, by the fully \
        migrated and validated store; a failed or killed run changes nothing, and the next run cleans up after it. \
        Exit status: 0 migrated, 1 invalid mapping, 2 store or setup problem, 3 the data did not migrate (store unchanged).
        """
    )

    @Option(help: ArgumentHelp("The store's current version; checked against the store's hashes.", valueName: "version"))
    var from: String?

    @Option(help: ArgumentHelp("The version to migrate to.", valueName: "version"))
    var to: String

    @Argument(help: ArgumentHelp("The store to migrate.", valueName: "store"))
    var store: String

    @OptionGroup var schemaOptions: SchemaOptions

    @Option(help: ArgumentHelp("The folder of mapping files.", valueName: "dir"))
    var mappings: String = "./mappings"

    @Flag(help: "Migrate and validate into a temporary file, report, and leave the store untouched.")
    var dryRun = false

    @Option(help: ArgumentHelp("Write the migrated store to this new file and leave the store untouched.", valueName: "path"))
    var output: String?

    @Flag(help: "Keep the original store as STORE.backup-<version>-<time>.")
    var keepBackup = false

    @Option(help: "Summary format: text or json.")
    var format: OutputFormat = .text

    @Flag(help: "No progress display.")
    var quiet = false

    @Flag(help: "Evaluate every object with the interpreter, compiling nothing to SQL (slower; for comparing results).")
    var interpret = false

    func validate() throws {
        if dryRun && output != nil { throw ValidationError("--dry-run writes nothing; drop --output or --dry-run") }
        if dryRun && keepBackup { throw ValidationError("--dry-run leaves the store untouched; --keep-backup has nothing to keep") }
    }

    func run() throws {
        var renderSources: [SourceFile] = []
        do {
            try reportingErrors {
                let catalog = try schemaOptions.catalog()
                let metadata = try Store.metadata(at: store)
                let matching = catalog.versions(matchingModelHash: metadata.modelHash)
                guard !matching.isEmpty else {
                    throw MapcError.store("\(store) (recorded as \(metadata.version), model hash \(metadata.modelHash.prefix(12))) matches no version in \(schemaOptions.schemas)")
                }
                let sourceSchema: Schema
                if let from {
                    guard let named = matching.first(where: { $0.version == from }) else {
                        throw MapcError.store("\(store) is at version \(matching.map(\.version).joined(separator: " or ")), not \(from) (checked by its hashes); drop --from or correct it")
                    }
                    sourceSchema = named
                } else {
                    sourceSchema = matching.first { $0.version == metadata.version } ?? matching[0]
                }
                let destinationSchema = try catalog.require(version: to)
                if VersionHash.modelHash(of: destinationSchema) == metadata.modelHash {
                    Console.out("\(store) is already at \(destinationSchema.version); nothing to do")
                    return
                }
                let mappingCatalog = try MappingCatalog(directory: mappings)
                guard let mapping = mappingCatalog.mapping(from: sourceSchema.version, to: destinationSchema.version) else {
                    throw MapcError.notFound("no mapping from \(sourceSchema.version) to \(destinationSchema.version) in \(mappings); write one (mappings/mapping_\(sourceSchema.version)_to_\(destinationSchema.version).yaml) or pass --mappings DIR")
                }
                if let file = mapping.file { renderSources.append(file) }
                var checker = MappingChecker(mapping: mapping)
                let diagnostics = checker.check(source: sourceSchema, destination: destinationSchema)
                if diagnostics.hasErrors { throw DiagnosticsError(diagnostics) }
                var options = MigrationOptions()
                options.dryRun = dryRun
                options.outputPath = output
                options.keepBackup = keepBackup
                options.allowsSQL = !interpret
                let display = ProgressDisplay(quiet: quiet || format == .json)
                let started = Date()
                let outcome = try StoreMigration.run(store: store, source: sourceSchema, destination: destinationSchema, mapping: mapping, options: options) { display.update($0) }
                display.finish()
                print(outcome, seconds: Date().timeIntervalSince(started))
            }
        } catch let error as MigrationError {
            report(error, sources: renderSources)
        }
    }

    private func report(_ error: MigrationError, sources: [SourceFile]) -> Never {
        let renderer = DiagnosticRenderer(sources: sources)
        switch error {
        case .expression(let mapping, let property, let object, let diagnostic):
            Console.err(renderer.render(diagnostic) + "  while mapping '\(mapping)'\(property.map { ", property '\($0)'" } ?? ""), source object \(object)")
        default:
            Console.err("error: \(error)")
        }
        if case .setup = error {
            Foundation.exit(MapcExitCode.storeError)
        }
        Console.err("\(store) was not changed")
        Foundation.exit(MapcExitCode.migrationFailed)
    }

    private func print(_ outcome: MigrationOutcome, seconds: Double) {
        let summary = outcome.summary
        if format == .json {
            var json = summary.json
            if case .object(var pairs) = json {
                pairs.append(("result", outcome.resultPath.map(JSONValue.string) ?? .null))
                pairs.append(("backup", outcome.backupPath.map(JSONValue.string) ?? .null))
                pairs.append(("dryRun", .bool(dryRun)))
                json = .object(pairs)
            }
            Console.out(json.serialized(pretty: true))
            return
        }
        var lines: [String] = []
        let verb = dryRun ? "dry run: \(store) would migrate" : (output != nil ? "migrated \(store) into \(output!)" : "migrated \(store)")
        lines.append(String(format: "%@ from %@ to %@ in %.2f s", verb, summary.sourceVersion, summary.destinationVersion, seconds))
        let width = summary.created.map(\.mapping.count).max() ?? 0
        for (mapping, count) in summary.created {
            let how = summary.compiled.contains(mapping) ? " (SQL)" : ""
            lines.append("  \(mapping.padding(toLength: width, withPad: " ", startingAt: 0))  \(count) object\(count == 1 ? "" : "s") created\(how)")
        }
        lines.append("  phases: " + MigrationPhase.allCases.map { String(format: "%@ %.2f s", $0.rawValue, summary.phaseSeconds[$0] ?? 0) }.joined(separator: ", "))
        lines.append("  objects: " + summary.destinationCounts.map { "\($0.entity) \($0.count)" }.joined(separator: ", "))
        if dryRun { lines.append("  \(store) was not changed") }
        if let backup = outcome.backupPath { lines.append("  backup: \(backup)") }
        Console.out(lines.joined(separator: "\n"))
    }
}
