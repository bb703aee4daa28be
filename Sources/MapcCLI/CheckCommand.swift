import ArgumentParser
import Foundation
import MapcKit

/// `mapc check FILE...`: validates schema files like a compiler.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate schema and mapping files and report every problem with file:line:col.",
        discussion: """
        Mapping files are checked against their source and destination versions in --schemas. \
        Exit status: 0 when no file has errors, 1 otherwise (--strict counts warnings as errors).
        """
    )

    @Argument(help: ArgumentHelp("Schema and mapping files to check; none means every file in --schemas and --mappings.", valueName: "file"))
    var files: [String] = []

    @Option(help: ArgumentHelp("The folder of mapping files, checked when no files are named.", valueName: "dir"))
    var mappings: String = "./mappings"

    @Option(help: "Output format: text (with the source line and a caret) or json (for editors).")
    var format: OutputFormat = .text

    @Flag(help: "Treat warnings as errors.")
    var strict = false

    @Flag(help: "Record the current source and destination entity hashes in each mapping file checked.")
    var updateHashes = false

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        var diagnostics: [Diagnostic] = []
        var renderer = DiagnosticRenderer()
        var summaries: [String] = []
        let files = self.files.isEmpty ? SourceFile.yamlFiles(in: schemaOptions.schemas) + SourceFile.yamlFiles(in: mappings) : self.files
        if files.isEmpty {
            Console.err("error: no files to check: \(schemaOptions.schemas) and \(mappings) have no .yaml files; name files or pass --schemas/--mappings")
            throw ExitCodeError(MapcExitCode.storeError)
        }
        for path in files {
            let source: SourceFile
            do {
                source = try SourceFile.read(path: path)
            } catch {
                diagnostics.append(.error("\(error)", at: nil))
                continue
            }
            renderer.add(source)
            if MappingLoader.looksLikeMapping(source) {
                let (found, summary) = checkMapping(source)
                diagnostics += found
                if let summary { summaries.append(summary) }
                continue
            }
            let (schema, found) = SchemaLoader.parse(source: source)
            diagnostics += found
            if let schema, !found.hasErrors {
                summaries.append("\(path): \(schema.model) \(schema.version), \(schema.entities.count) entities, model hash \(VersionHash.modelHash(of: schema).prefix(12))")
            }
        }
        if strict {
            diagnostics = diagnostics.map { var copy = $0; if copy.severity == .warning { copy.severity = .error }; return copy }
        }
        switch format {
        case .json:
            Console.out(DiagnosticRenderer.json(diagnostics))
        case .text:
            if !diagnostics.isEmpty { Console.err(renderer.render(diagnostics)) }
            let errors = diagnostics.filter { $0.severity == .error }.count
            let warnings = diagnostics.filter { $0.severity == .warning }.count
            for summary in summaries { Console.out(summary) }
            Console.out("\(files.count) file\(files.count == 1 ? "" : "s") checked: \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        }
        if diagnostics.hasErrors { throw ExitCodeError(MapcExitCode.invalidInput) }
    }

    /// Checks one mapping file; with --update-hashes, records the current hashes in it first.
    private func checkMapping(_ source: SourceFile) -> ([Diagnostic], String?) {
        var (mapping, diagnostics) = MappingLoader.parse(source: source)
        guard var model = mapping, !diagnostics.hasErrors else { return (diagnostics, nil) }
        let catalog: SchemaCatalog
        do {
            catalog = try schemaOptions.catalog()
        } catch let error as DiagnosticsError {
            return (diagnostics + error.diagnostics, nil)
        } catch {
            return (diagnostics + [.error("\(error)", at: FileLocation(path: source.path, line: 1, column: 1))], nil)
        }
        if updateHashes, let from = catalog.schema(version: model.source), let to = catalog.schema(version: model.destination),
           let text = MappingHashUpdater.update(model, source: from, destination: to), text != source.text {
            do {
                try Console.write(text, to: source.path)
                let updated = SourceFile(path: source.path, text: text)
                let reparsed = MappingLoader.parse(source: updated)
                diagnostics = reparsed.diagnostics
                model = reparsed.mapping ?? model
            } catch {
                diagnostics.append(.error("\(error)", at: nil))
            }
        }
        var checker = MappingChecker(mapping: model)
        diagnostics += checker.check(catalog: catalog)
        guard !diagnostics.hasErrors else { return (diagnostics, nil) }
        return (diagnostics, "\(source.path): mapping \(model.source) -> \(model.destination), \(model.entityMappings.count) entity mappings" + (updateHashes ? ", hashes recorded" : ""))
    }
}
