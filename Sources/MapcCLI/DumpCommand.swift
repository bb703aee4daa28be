import ArgumentParser
import Foundation
import MapcKit

/// `mapc dump STORE`: writes the store's objects as JSON in the data format.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Write a store's objects as JSON, in the format 'mapc load' reads, deterministically ordered."
    )

    @Argument(help: ArgumentHelp("The store to read.", valueName: "store"))
    var store: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        try reportingErrors {
            let opened = try Store.open(at: store, catalog: try schemaOptions.catalog(), readOnly: true)
            try Console.write(try DataFile.dump(opened).serialized(pretty: true) + "\n", to: output)
        }
    }
}
