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

    /// Says that `load` refuses the dump, where first and in how many places.
    private func refusesLoad(in places: Int, first: String, version: String) {
        Console.err("note: \(store) breaks the rules of \(version) in \(English.count(places, "place")) (\(first)\(places > 1 ? "; …" : "")), "
                    + "and `mapc load` refuses the dump until they are mended")
    }

    func run() throws {
        try reportingErrors {
            let opened = try Store.open(at: store, catalog: try schemaOptions.readableCatalog(), readOnly: true)
            // Object by object, as it is made (a store of millions of objects is never held): to
            // standard output, or to a file beside `--output` renamed into place once it is whole
            // (all or nothing).
            var refusal: DataValidationError?
            if let output {
                try Console.checkExportTarget(output, export: .dataFile, readFrom: store)
                try Files.writeStreaming(to: output, replace: true) { write in
                    refusal = try DataFile.writeDump(opened, write)
                    try write("\n")
                }
            } else {
                var text = GatheredText { try Console.write($0, to: nil) }
                refusal = try DataFile.writeDump(opened) { try text.add($0) }
                try text.add("\n")
                try text.finish()
            }
            // What `load` would refuse of this dump: first what the dump itself shows and the
            // store's rules do not see (two objects with one id, a required reference to no
            // object written null), then the rules of its version the store breaks. (A reference
            // to no object in an optional relationship is not among them: the dump writes null.)
            if let refusal {
                let first = refusal.problems.first.map { "\($0)" } ?? "?"
                refusesLoad(in: refusal.total, first: first, version: opened.schema.version)
                return
            }
            let refused = try opened.violations().violations.filter { !$0.rule.hasPrefix(StoreValidator.danglingReferenceRule) }
            if let first = refused.first {
                // Each rule's examples carry how many objects break it.
                let places = Dictionary(refused.map { ($0.ruleKey, $0.sameRuleCount) }, uniquingKeysWith: max).values.reduce(0, +)
                refusesLoad(in: places, first: "\(first)", version: opened.schema.version)
            }
            // Large values Core Data keeps in files beside the store are, in their columns, references.
            let external = CoreDataExternalData.beside(store: Files.path(of: Files.fileURL(store)))
            if opened.format.identifier == StoreFormat.coreData.identifier, let values = external.values() {
                Console.err("note: \(store) keeps large binary values in files beside it (\(external.describe(values))): "
                            + "the dump holds Core Data's references to them, not their bytes, and a store loaded from it cannot reach them")
            }
        }
    }
}
