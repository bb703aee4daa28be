import ArgumentParser
import Foundation
import MapcKit

/// `mapc editor-schemas [--output DIR]`: the JSON Schemas editors validate mapc's YAML with.
struct EditorSchemasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "editor-schemas",
        abstract: "Write the JSON Schemas of schema files, mapping files and versions.yaml, for editors (yaml-language-server, VS Code's YAML extension).",
        discussion: "Point a file at one with a first line such as `# yaml-language-server: $schema=.schema.json`; the files mapc writes carry that line and get the schema beside them."
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The folder to write into (default: the current folder).", valueName: "dir"))
    var output: String = "."

    func run() throws {
        try reportingErrors {
            try Files.makeFolder(output)
            var written: [String] = []
            for kind in [ProjectFileKind.schema, .mapping, .versionOrder] {
                for file in EditorSchemas.files(for: kind) {
                    try Files.write(Data(file.text.utf8), to: (output as NSString).appendingPathComponent(file.name), replace: true)
                    written.append(file.name)
                }
            }
            Console.text("wrote \(written.joined(separator: ", ")) in \(output)")
        }
    }
}
