import ArgumentParser
import Foundation
import MapcKit

/// `mapc check FILE...`: validates schema files like a compiler.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate schema files and report every problem with file:line:col.",
        discussion: "Exit status: 0 when no file has errors, 1 otherwise (--strict counts warnings as errors)."
    )

    @Argument(help: ArgumentHelp("Schema files to check.", valueName: "file"))
    var files: [String]

    @Option(help: "Output format: text (with the source line and a caret) or json (for editors).")
    var format: OutputFormat = .text

    @Flag(help: "Treat warnings as errors.")
    var strict = false

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        var diagnostics: [Diagnostic] = []
        var renderer = DiagnosticRenderer()
        var summaries: [String] = []
        for path in files {
            let source: SourceFile
            do {
                source = try SourceFile.read(path: path)
            } catch {
                diagnostics.append(.error("\(error)", at: nil))
                continue
            }
            renderer.add(source)
            if Self.looksLikeMapping(source) {
                diagnostics.append(.error("\(path) is a mapping file; checking mapping files is not supported by this version of mapc yet",
                                          at: FileLocation(path: path, line: 1, column: 1)))
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

    static func looksLikeMapping(_ source: SourceFile) -> Bool {
        source.text.split(separator: "\n").contains { $0.hasPrefix("entityMappings:") }
    }
}
