import ArgumentParser
import Foundation
import MapcKit

/// `mapc import MODEL.xcdatamodeld [--output DIR]`: Xcode's files as mapc's.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import an Xcode data model (.xcdatamodeld, .xcdatamodel) as schema files, or an Xcode mapping model (.xcmappingmodel) as a mapping file.",
        discussion: """
        A data model writes one schema file per version (named after the version) and versions.yaml with their order, the current version last, into --output (default ./schemas). A mapping model writes mapping_<from>_to_<to>.yaml into --output (default ./mappings); its versions are found by matching the models embedded in the file against the schemas in --schemas. What mapc cannot hold is reported as a warning naming the element. Existing files are not replaced unless --replace is given; nothing is written when anything fails.
        """
    )

    @Argument(help: ArgumentHelp("The .xcdatamodeld, .xcdatamodel or .xcmappingmodel to import (or the contents / xcmapping.xml file inside).", valueName: "path"))
    var path: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The folder to write into (default ./schemas for a data model, ./mappings for a mapping model).", valueName: "dir"))
    var output: String?

    @Flag(help: "Replace files that already exist.")
    var replace = false

    @OptionGroup var schemaOptions: SchemaOptions

    @OptionGroup var policyOptions: PolicyOptions

    func run() throws {
        var someVersionsFailed = false
        try reportingErrors {
            let files: [(name: String, text: String)]
            let folder: String
            let warnings: [Diagnostic]
            let summary: String
            var checkProblems: [Diagnostic] = []
            // versions.yaml updated with one more version, not replaced: no --replace needed for it.
            var updatesOrder = false
            var sources: [SourceFile] = []
            // Versions that could not be imported: reported, the others written (exit 1).
            var failures: [Diagnostic] = []
            var failedVersions = 0
            // The model a data model's import wrote, and the versions of it that failed.
            var importedModel: String?, failedNames: Set<String> = []
            if Self.isMappingModel(path) {
                folder = output ?? "./mappings"
                let catalog = try schemaOptions.catalog()
                var imported = try XcodeMappingImporter.importMapping(at: path, schemas: catalog)
                // Another Xcode mapping model of the same step (Apple's multiple passes) is written
                // as the step's next pass rather than over the first.
                let name = Files.fileURL(path.hasSuffix("xcmapping.xml") ? Files.parentFolder(of: path) : path).lastPathComponent
                let existing = ((try? MappingCatalog(directory: folder))?.passes(from: imported.source.version, to: imported.destination.version)) ?? []
                if !replace, !existing.isEmpty, !existing.contains(where: { $0.file?.text.contains("Xcode mapping model \(name).") == true }) {
                    let pass = (existing.map { $0.pass ?? 1 }.max() ?? 1) + 1
                    imported = try XcodeMappingImporter.importMapping(at: path, schemas: catalog, pass: pass)
                    Console.err("note: \(existing.compactMap { $0.file.map { Files.fileURL($0.path).lastPathComponent } }.joined(separator: ", ")) already map\(existing.count == 1 ? "s" : "") \(imported.source.version) to \(imported.destination.version): "
                                + "\(name) is written as pass \(pass) of that step (\(imported.fileName)), run after it as one step; if the app runs its passes in another order, edit their 'pass:'")
                }
                files = [(imported.fileName, imported.text)] + EditorSchemas.files(for: .mapping)
                warnings = imported.warnings
                summary = "\(Files.fileURL(path).lastPathComponent): \(imported.source.version) -> \(imported.destination.version), \(imported.mapping.entityMappings.count) entity mapping\(imported.mapping.entityMappings.count == 1 ? "" : "s")"
                var checker = MappingChecker(mapping: imported.mapping)
                // Said at the file as written (./mappings/…), which an editor can open from here.
                let written = (folder as NSString).appendingPathComponent(imported.fileName)
                checkProblems = checker.check(source: imported.source, destination: imported.destination).map { diagnostic in
                    var said = diagnostic
                    if said.location?.path == imported.fileName { said.location?.path = written }
                    return said
                }
                sources = [SourceFile(path: written, text: imported.text)]
            } else {
                let model = try XcodeModelImporter.importModel(at: path)
                failures = model.failures
                failedVersions = model.failedVersions.count
                guard !model.schemas.isEmpty else { throw DiagnosticsError(model.failures) }
                folder = output ?? "./schemas"
                var modelFiles = try model.schemaFiles(source: Files.fileURL(path).lastPathComponent)
                var joined = ""
                // One version of a model (a .xcdatamodel, not the .xcdatamodeld) joins the order the
                // folder already has, rather than replacing it with itself alone.
                let orderPath = (folder as NSString).appendingPathComponent(VersionOrder.fileName)
                if model.schemas.count == 1, let version = model.schemas.first?.version, FileManager.default.fileExists(atPath: orderPath) {
                    // Only a version of the same model joins the order.
                    let models = Set(try SourceFile.yamlFiles(in: folder).filter { ($0 as NSString).lastPathComponent != VersionOrder.fileName }.compactMap { file in
                        (try? SourceFile.read(path: file)).flatMap { SchemaLoader.parse(source: $0).schema?.model }
                    })
                    if let imported = model.schemas.first?.model, !models.isEmpty, !models.contains(imported) {
                        throw MapcError.file("\(folder) holds the schemas of model \(models.sorted().joined(separator: ", ")), not \(imported): import \(imported) into a folder of its own (--output DIR); nothing was written")
                    }
                    let source = try SourceFile.read(path: orderPath)
                    let (existing, diagnostics) = VersionOrder.parse(source: source)
                    if diagnostics.hasErrors { throw DiagnosticsError(diagnostics) }
                    let versions = existing?.map(\.name) ?? []
                    let merged = VersionOrder.adding(version, to: versions)
                    modelFiles.removeAll { $0.name == VersionOrder.fileName }
                    if merged != versions {
                        modelFiles.append((VersionOrder.fileName, EditorSchemas.modeline(EditorSchemas.versionsFileName) + "\n" + VersionOrder.fileText(merged)))
                        joined = "; \(version) joins the version order: \(merged.joined(separator: ", "))"
                    }
                    updatesOrder = true
                }
                files = modelFiles
                importedModel = model.schemas.first?.model
                failedNames = Set(model.failedVersions)
                warnings = model.warnings
                summary = "\(model.name): \(model.schemas.count) version\(model.schemas.count == 1 ? "" : "s") (\(model.schemas.map(\.version).joined(separator: ", ")))\(joined)"
                    + (model.failedVersions.isEmpty ? "" : "; not imported: \(model.failedVersions.joined(separator: ", ")) (errors below)")
            }
            if !warnings.isEmpty { Console.err(DiagnosticRenderer(sources: []).render(warnings)) }
            let folderExisted = FileManager.default.fileExists(atPath: folder)
            try Files.makeFolder(folder)
            // A folder made for files that then were not written goes too.
            var written = false
            defer { if !written && !folderExisted { rmdir(folder) } }
            if !replace {
                // The editor schemas beside the files are mapc's own, replaced whenever it writes.
                let existing = files.filter { !$0.name.hasSuffix(".schema.json") && !(updatesOrder && $0.name == VersionOrder.fileName) }.map { (folder as NSString).appendingPathComponent($0.name) }.filter { FileManager.default.fileExists(atPath: $0) }
                if !existing.isEmpty {
                    throw MapcError.file("\(existing.joined(separator: ", ")) already exist\(existing.count == 1 ? "s" : ""); nothing was written: remove \(existing.count == 1 ? "it" : "them") or pass --replace")
                }
            }
            // Every file or none: a failure (a full disk) leaves the folder as it was.
            try Files.writeAll(files.map { file in
                (path: (folder as NSString).appendingPathComponent(file.name), data: Data(file.text.utf8),
                 replace: replace || file.name.hasSuffix(".schema.json") || (updatesOrder && file.name == VersionOrder.fileName))
            })
            written = true
            Console.text("imported \(summary)")
            Console.text("wrote \(files.map(\.name).filter { !$0.hasSuffix(".schema.json") }.joined(separator: ", ")) in \(folder)\(warnings.isEmpty ? "" : "; \(warnings.count) warning\(warnings.count == 1 ? "" : "s") above")")
            if let importedModel, !updatesOrder { noteVersionsLeftBehind(in: folder, model: importedModel, written: Set(files.map(\.name)), failed: failedNames) }
            if !failures.isEmpty {
                someVersionsFailed = true
                Console.err(DiagnosticRenderer(sources: []).render(failures))
                Console.err("\(English.count(failedVersions, "version")) of the model could not be imported (above); the others were written, and versions.yaml orders them without it: fix the model and import it again (--replace)")
            }
            if !checkProblems.isEmpty {
                Console.err(DiagnosticRenderer(sources: sources).render(checkProblems))
                if checkProblems.hasErrors {
                    Console.err("the imported mapping does not check yet: fix what is listed (for a custom policy, port it and register it) before `mapc run` uses it")
                } else {
                    Console.err("the imported mapping checks; the warnings above say what it will do that you may not expect")
                }
            }
        }
        if someVersionsFailed { throw ExitCodeError(MapcExitCode.invalidInput) }
    }

    /// Says which schema files of the model in `folder` the import did not write: versions the
    /// model no longer has (an app prunes old ones), which the versions.yaml written leaves out,
    /// and which `check` then refuses as listed nowhere. They are not deleted: they are the only
    /// way stores at those versions migrate.
    private func noteVersionsLeftBehind(in folder: String, model: String, written: Set<String>, failed: Set<String>) {
        let leftBehind = ((try? SourceFile.yamlFiles(in: folder)) ?? []).compactMap { file -> (file: String, version: String)? in
            let name = (file as NSString).lastPathComponent
            guard name != VersionOrder.fileName, !written.contains(name), let schema = (try? SourceFile.read(path: file)).flatMap({ SchemaLoader.parse(source: $0).schema }),
                  schema.model == model, !failed.contains(schema.version) else { return nil }
            return (file, schema.version)
        }.sorted { $0.file < $1.file }
        guard !leftBehind.isEmpty else { return }
        Console.err("warning: \(leftBehind.map { "\($0.file) (\($0.version))" }.joined(separator: ", ")) \(leftBehind.count == 1 ? "holds a version" : "hold versions") of \(model) the model no longer has: "
                    + "the versions.yaml written leaves \(leftBehind.count == 1 ? "it" : "them") out, and `mapc check` refuses a schema of no listed version. "
                    + "Delete \(leftBehind.count == 1 ? "it" : "them") once no store is at \(leftBehind.count == 1 ? "that version" : "those versions") (migrate such stores first), or list \(leftBehind.count == 1 ? "it" : "them") in versions.yaml in \(leftBehind.count == 1 ? "its place" : "their places") (each import of the whole model writes it anew)")
    }

    /// Whether a path names an Xcode mapping model (the folder or its xcmapping.xml).
    static func isMappingModel(_ path: String) -> Bool {
        let url = Files.fileURL(path)
        return url.pathExtension == "xcmappingmodel" || url.lastPathComponent == "xcmapping.xml"
    }
}
