import ArgumentParser
import Foundation
import MapcKit

/// `mapc graph VERSION|FILE [--format mermaid|dot]`: a schema or a mapping as a diagram.
struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Draw a schema version (entities, attributes, relationships, inheritance) or a mapping file (which entities feed which) as a Mermaid or Graphviz DOT diagram.",
        discussion: "Mermaid renders in GitHub and most Markdown viewers inside a ```mermaid block; DOT renders with Graphviz (`dot -Tsvg`)."
    )

    @Argument(help: ArgumentHelp("A version name, a schema file or a mapping file.", valueName: "version-or-file"))
    var subject: String

    @Option(help: ArgumentHelp("mermaid (default) or dot.", valueName: "format"))
    var format: DiagramFormat = .mermaid

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the diagram to this file instead of standard output.", valueName: "file"))
    var output: String?

    @OptionGroup var schemaOptions: SchemaOptions

    /// Read before parsing (`PolicyLoader`): a mapping's policies are drawn as what they create.
    @OptionGroup var policyOptions: PolicyOptions

    func run() throws {
        var sources: [SourceFile] = []
        try reportingErrors(sources: sources) {
            let text: String
            var isFile: ObjCBool = false
            if FileManager.default.fileExists(atPath: subject, isDirectory: &isFile), !isFile.boolValue {
                let source = try SourceFile.read(path: subject)
                sources = [source]
                if ProjectFileKind.classify(source, fallback: .schema) == .mapping {
                    let (mapping, diagnostics) = MappingLoader.parse(source: source)
                    guard let mapping, !diagnostics.hasErrors else { throw DiagnosticsError(diagnostics) }
                    let catalog = try? SchemaCatalog.partial(directory: schemaOptions.schemas).catalog
                    text = MappingDiagram.render(mapping, as: format, destination: catalog?.schema(version: mapping.destination))
                    // Drawn as written; what `check` finds wrong with it (an unknown version,
                    // entity or policy) is said, so a diagram of a broken mapping is not taken for a sound one.
                    if let catalog {
                        var checker = MappingChecker(mapping: mapping)
                        let errors = checker.check(catalog: catalog).filter { $0.severity == .error }
                        if let first = errors.first {
                            Console.err("warning: the diagram draws \(subject) as written, and `mapc check` finds \(English.count(errors.count, "error")) in it, the first: \(first)")
                        }
                    }
                } else {
                    if let other = ProjectFileKind.notASchema(source) { throw MapcError.input(other) }
                    text = SchemaDiagram.render(try SchemaLoader.load(source: source).schema, as: format)
                }
            } else {
                // A version, or a file that is missing (said as one: exit 1, as `hash` says it).
                text = SchemaDiagram.render(try schemaOptions.schema(subject), as: format)
            }
            try Console.write(text, to: output, export: .diagram)
        }
    }
}

extension DiagramFormat: ExpressibleByArgument {}
