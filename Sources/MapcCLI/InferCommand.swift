import ArgumentParser
import Foundation
import MapcKit

/// `mapc infer --from VERSION --to VERSION [--output FILE]`: writes the inferred mapping.
struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Write the mapping lightweight migration would infer between two versions, as an explicit mapping file to edit.",
        discussion: "When the step cannot be inferred, every reason is listed (entity, property, why, and the fix) and the exit status is 1."
    )

    @Option(help: ArgumentHelp("The source version.", valueName: "version"))
    var from: String

    @Option(help: ArgumentHelp("The destination version.", valueName: "version"))
    var to: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the mapping to this file instead of standard output.", valueName: "file"))
    var output: String?

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        try reportingErrors {
            let catalog = try schemaOptions.catalog()
            let source = try catalog.require(version: from), destination = try catalog.require(version: to)
            let result = MappingInference.infer(from: source, to: destination, through: catalog.versions(between: source, and: destination))
            guard let mapping = result.mapping else {
                throw MapcError.data(["\(from) -> \(to) cannot be inferred:"] + result.problems.map { "  \($0)" }
                                     + ["write the mapping by hand, or fix the schema as suggested; `mapc diff \(from) \(to)` shows every change"])
            }
            let text = MappingWriter.yaml(mapping, source: source, destination: destination, changes: result.changes, notes: result.notes)
            try Console.write(text, to: output, replace: false)
            if let output { Console.out("wrote \(output): \(mapping.entityMappings.count) entity mappings from \(from) to \(to)") }
        }
    }
}
