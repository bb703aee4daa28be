import ArgumentParser
import Foundation
import MapcKit

/// `mapc infer --from VERSION --to VERSION [--output FILE]`: writes the inferred mapping.
struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Write the mapping lightweight migration would infer between two versions, as an explicit mapping file to edit.",
        discussion: "When the step cannot be inferred completely, the file is still written, with everything inferable filled in and each open item (entity, property, why, and the fix) under 'todo:', which `mapc check` reports until it is done. A downgrade is never inferred."
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
            // Which way is a downgrade needs the order: refused, asking for it, as `check` does.
            if try catalog.position(of: destination.version) < catalog.position(of: source.version) {
                throw MapcError.input("\(destination.version) is older than \(source.version) (\(catalog.orderDescription)); mapc never infers a downgrade: write the mapping from \(source.version) to \(destination.version) by hand")
            }
            let result = MappingInference.infer(from: source, to: destination, through: catalog.versions(between: source, and: destination))
            // The editor schema line only where the schema file is written beside it.
            let text = MappingWriter.yaml(result.skeleton, source: source, destination: destination, changes: result.changes, notes: result.notes, order: catalog.order,
                                          jsonSchema: output == nil ? nil : EditorSchemas.mappingFileName)
            if let output {
                // `run` suggests writing into ./mappings, which a new project may not have yet.
                try Files.makeFolder(Files.fileURL(output).deletingLastPathComponent().path)
            }
            try Console.write(text, to: output, replace: false)
            if let output {
                // The JSON Schema the file's first line points editors at, beside it.
                for file in EditorSchemas.files(for: .mapping) {
                    try Files.write(Data(file.text.utf8), to: (Files.parentFolder(of: output) as NSString).appendingPathComponent(file.name), replace: true)
                }
            }
            let count = result.skeleton.entityMappings.count
            let mappings = "\(count) entity mapping\(count == 1 ? "" : "s") from \(from) to \(to)"
            if result.problems.isEmpty {
                if let output { Console.text("wrote \(output): \(mappings)") }
                let dropped = result.droppedValues
                if !dropped.isEmpty {
                    Console.err("the mapping drops the values of \(dropped.joined(separator: ", ")), as the inferred step would (which `run` refuses without --accept-data-loss): "
                                + "each is an item under 'todo:'; map the values where they belong, or delete an item to drop them on purpose, then `mapc check` the file")
                }
                // What the renaming identifiers and required links may not mean, as `diff` says it.
                for hint in result.hints { Console.err("note: \(hint)") }
            } else {
                // Every item the file holds, under the mapping that holds it: the drops too.
                let items = result.skeleton.entityMappings.flatMap { entityMapping in entityMapping.todo.map { "  - \(entityMapping.name): \($0.text)" } }
                Console.err("\(from) -> \(to) cannot be inferred completely; \(output.map { "wrote \($0):" } ?? "the mapping above has") \(mappings), with \(items.count) item\(items.count == 1 ? "" : "s") left to do (under 'todo:'):")
                Console.err((items + result.hints.map { "  note: \($0)" }).joined(separator: "\n"))
                Console.err("do each, delete it from 'todo:', and `mapc check` the file; `mapc diff \(English.operands([from, to]))` shows every change")
            }
        }
    }
}
