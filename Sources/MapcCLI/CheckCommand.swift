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
        Exit status: 0 when no file has errors, 1 otherwise (--strict counts warnings as errors), 2 when a folder named (or, \
        with no files, the schemas folder) does not exist.
        """
    )

    @Argument(help: ArgumentHelp("Schema and mapping files to check; none means every file in --schemas and --mappings.", valueName: "file"))
    var files: [String] = []

    @OptionGroup var mappingOptions: MappingOptions

    @Option(help: "Output format: text (with the source line and a caret) or json (for editors).")
    var format: OutputFormat = .text

    @Flag(help: "Treat warnings as errors.")
    var strict = false

    @Flag(help: "Record the current source and destination entity hashes in each mapping file checked.")
    var updateHashes = false

    @OptionGroup var schemaOptions: SchemaOptions

    @OptionGroup var policyOptions: PolicyOptions

    func run() throws {
        var diagnostics: [Diagnostic] = []
        var renderer = DiagnosticRenderer()
        var summaries: [String] = []
        let wholeProject = self.files.isEmpty
        // Folders named on purpose must exist (a misspelt one checked nothing, exit 0).
        try reportingErrors {
            if let named = mappingOptions.folder { try MappingCatalog.requireFolder(named) }
            if wholeProject { try SchemaCatalog.requireFolder(schemaOptions.schemas) }
        }
        var files = self.files
        if wholeProject { try reportingErrors { files = try SourceFile.yamlFiles(in: schemaOptions.schemas) + SourceFile.yamlFiles(in: mappingOptions.path(schemaOptions)) } }
        if files.isEmpty {
            Console.err("error: no files to check: \(schemaOptions.schemas) and \(mappingOptions.path(schemaOptions)) have no .yaml files; name files or pass --schemas/--mappings")
            throw ExitCodeError(MapcExitCode.storeError)
        }
        // The schemas folder, read once: the versions that load (a mapping is checked against
        // them) and, when a file has errors, those errors as the catalog's failure.
        let partial = Result { try SchemaCatalog.partial(directory: schemaOptions.schemas) }
        let catalog: Result<SchemaCatalog, any Error> = partial.flatMap { loaded in
            loaded.diagnostics.hasErrors ? .failure(DiagnosticsError(loaded.diagnostics)) : .success(loaded.catalog)
        }
        var checkedOrderFile = false
        var mappingSteps: [MappingModel] = []
        // The passes of each step, from the mappings folder and the files named: a pass is
        // checked with the others (what one leaves, another may read).
        let mappingFolder = (try? SourceFile.yamlFiles(in: mappingOptions.path(schemaOptions))) ?? []
        let readMappings = Self.mappingFiles(mappingFolder + files)
        for path in files {
            let source: SourceFile
            do {
                source = try SourceFile.read(path: path)
            } catch {
                // At the file, as the schemas folder's reading says it of its own files (said once).
                diagnostics.append(.error("\(error)", at: FileLocation(path: path, line: 1, column: 1)))
                continue
            }
            renderer.add(source)
            // A schema the catalog has loaded is not read again (a history of 117 versions was
            // parsed three times): its diagnostics are the catalog's for the file.
            if case .success(let loaded) = catalog, let schema = loaded.schemas.first(where: { $0.source?.path == path }) {
                check(schema, found: loaded.warnings.filter { $0.location?.path == path }, path: path, into: &diagnostics, summaries: &summaries)
                continue
            }
            switch ProjectFileKind.classify(source, fallback: fallbackKind(of: path)) {
            case .mapping:
                let (found, summary, model) = checkMapping(source, catalog: catalog, partial: try? partial.get().catalog, read: readMappings)
                diagnostics += found.diagnostics
                if let updated = found.updatedSource { renderer.add(updated) }
                if let summary { summaries.append(summary) }
                if let model { mappingSteps.append(model) }
            case .versionOrder:
                checkedOrderFile = true
                let (versions, found) = VersionOrder.parse(source: source)
                diagnostics += found
                if let versions, !found.hasErrors {
                    summaries.append("\(path): version order, \(versions.count) version\(versions.count == 1 ? "" : "s")")
                }
            case .schema:
                // A data file named by mistake: said as one, not as a schema's dozen errors (the
                // YAML read once for both questions).
                let document = YAMLDocument(source: source)
                if let other = ProjectFileKind.notASchema(document.root, path: path) {
                    diagnostics.append(.error(other, at: FileLocation(path: path, line: 1, column: 1)))
                    continue
                }
                let (schema, found) = SchemaLoader.parse(document: document, source: source)
                // What only the folder shows of this file (another file declaring its version) is
                // said of it too, at the path it was named by.
                let inFolder = ((try? partial.get().diagnostics) ?? []).compactMap { Self.said($0, at: path) }
                check(schema, found: found + inFolder.filter { !found.contains($0) }, path: path, into: &diagnostics, summaries: &summaries)
            }
        }
        // The project as a whole: the version order, and one mapping file per step.
        if wholeProject || checkedOrderFile {
            switch catalog {
            case .success(let loaded):
                if let problem = loaded.orderProblem {
                    diagnostics.append(.error(problem, at: nil))
                } else {
                    summaries.append("versions: \(loaded.orderDescription)")
                    // Every step of the history: a store at any version must reach the newest.
                    if wholeProject, let mappings = stepMappings(readMappings) {
                        diagnostics += StepDiagnostics.of((try? MigrationPlanner.chainGaps(catalog: loaded, mappings: mappings)) ?? [], catalog: loaded, mappings: mappings)
                    }
                }
            case .failure(let error as DiagnosticsError):
                // The folder's diagnostics of a file named (`schemas/versions.yaml`, which the folder
                // reads as `./schemas/versions.yaml`) are said once, at the path it was named by
                // (below, by a set: 50,000 diagnostics compared each with every other took 44 s).
                diagnostics += error.diagnostics
                // The history is checked where it can be: the steps between versions that load
                // (one file's errors hid a forgotten renaming identifier sixty versions away).
                if wholeProject, let loaded = try? partial.get().catalog, let mappings = stepMappings(readMappings) {
                    if let steps = loaded.loadedSteps {
                        diagnostics += StepDiagnostics.of(MigrationPlanner.chainGaps(steps, mappings: mappings), catalog: loaded, mappings: mappings)
                        // A file whose version could not be read is in error under no name.
                        let unchecked = loaded.versionsWithErrors.keys.sorted().map { $0.isEmpty ? "a file whose version is not read" : $0 }
                        summaries.append(unchecked.isEmpty ? "versions: the steps of the history between the versions that load checked"
                            : "versions: the steps of the history checked, except those next to \(unchecked.joined(separator: ", ")), whose file\(unchecked.count == 1 ? " has" : "s have") errors")
                    } else {
                        summaries.append("versions: the steps of the history not checked: where the versions in error belong in the order is unknown (a file with errors names no version, the version order file has errors, or the names tell no order)")
                    }
                }
            case .failure(let error):
                diagnostics.append(.error("\(error)", at: nil))
            }
        }
        diagnostics += duplicateSteps(mappingSteps)
        // What the policy files were found to hold (a method with Core Data's hook labels).
        diagnostics += PolicyLoader.warnings
        // A file named and also read with the schemas folder (`schemas/v3.yaml`, read as
        // `./schemas/v3.yaml`) has its diagnostics said once, at the path it was named by.
        let named = Dictionary(files.map { (Self.standardized($0), $0) }, uniquingKeysWith: { first, _ in first })
        diagnostics = diagnostics.map { diagnostic in diagnostic.location.flatMap { named[Self.standardized($0.path)] }.flatMap { Self.said(diagnostic, at: $0) } ?? diagnostic }
        var seen: Set<Diagnostic> = []
        diagnostics = diagnostics.filter { seen.insert($0).inserted }
        diagnostics = Self.inFileOrder(diagnostics)
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
            for summary in summaries { Console.text(summary) }
            Console.text("\(files.count) file\(files.count == 1 ? "" : "s") checked: \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        }
        if diagnostics.hasErrors { throw ExitCodeError(MapcExitCode.invalidInput) }
    }

    /// A schema file's diagnostics, with what SQLite could not build as errors now (not when
    /// `init` or `run` meets it), and its summary line when it has no errors.
    private func check(_ schema: Schema?, found: [Diagnostic], path: String, into diagnostics: inout [Diagnostic], summaries: inout [String]) {
        var found = found
        if let schema, !found.hasErrors {
            found += StoreFormat.storageDiagnostics(of: schema, in: path)
        }
        diagnostics += found
        if let schema, !found.hasErrors {
            let count = schema.entities.count
            summaries.append("\(path): \(schema.displayName), \(count) entit\(count == 1 ? "y" : "ies"), model hash \(VersionHash.modelHash(of: schema).prefix(12))")
        }
    }

    /// What `check` says of the history's steps no mapping file covers: an error for a step that
    /// cannot be inferred, a warning for one that drops values or may not mean what it infers.
    /// A diagnostic of the file at `path`, however the folder's reading spells its path
    /// (`./schemas/v1.yaml` for `schemas/v1.yaml`), said at `path` as it was named; nil for
    /// another file's.
    private static func said(_ diagnostic: Diagnostic, at path: String) -> Diagnostic? {
        guard let location = diagnostic.location, standardized(location.path) == standardized(path) else { return nil }
        var said = diagnostic
        said.location?.path = path
        return said
    }

    private static func standardized(_ path: String) -> String { Files.standardized(path) }


    /// What a file is taken for when its content does not say: a mapping in a mappings folder, the
    /// version order under its usual name, a schema otherwise.
    private func fallbackKind(of path: String) -> ProjectFileKind {
        let url = Files.fileURL(path)
        if url.lastPathComponent == VersionOrder.fileName { return .versionOrder }
        if url.deletingLastPathComponent().standardizedFileURL == Files.fileURL(mappingOptions.path(schemaOptions)).standardizedFileURL { return .mapping }
        return .schema
    }

    /// Errors for mapping files that map the same step and pass as another file checked, or as
    /// another file in their folder (`MappingCatalog.clash`): `plan` and `run` cannot choose.
    private func duplicateSteps(_ checked: [MappingModel]) -> [Diagnostic] {
        func path(_ model: MappingModel) -> String { Self.standardized(model.file?.path ?? "") }
        var all = checked
        let folders = Set(checked.compactMap { $0.file.map { Files.fileURL($0.path).deletingLastPathComponent().path } })
        let checkedPaths = Set(checked.map(path))
        for folder in folders {
            for file in (try? SourceFile.yamlFiles(in: folder)) ?? [] where !checkedPaths.contains(Self.standardized(file)) {
                guard let source = try? SourceFile.read(path: file), ProjectFileKind.classify(source, fallback: .schema) == .mapping,
                      let model = MappingLoader.parse(source: source).mapping else { continue }
                all.append(model)
            }
        }
        return checked.compactMap { entry in
            let others = all.filter { MappingCatalog.clash($0, entry) && path($0) != path(entry) }.compactMap { $0.file?.path }
            return others.isEmpty ? nil : MappingCatalog.clashDiagnostic(entry, with: others)
        }
    }

    /// Diagnostics by file (in the order the files were checked), then line and column, as a
    /// compiler lists them; those of no file keep their place among the files.
    static func inFileOrder(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        var rank: [String?: Int] = [:]
        for diagnostic in diagnostics where rank[diagnostic.location?.path] == nil { rank[diagnostic.location?.path] = rank.count }
        return diagnostics.enumerated().sorted { a, b in
            let left = (rank[a.element.location?.path] ?? 0, a.element.location?.line ?? 0, a.element.location?.column ?? 0, a.offset)
            let right = (rank[b.element.location?.path] ?? 0, b.element.location?.line ?? 0, b.element.location?.column ?? 0, b.offset)
            return left < right
        }.map(\.element)
    }

    /// The mapping files the steps of a history are checked with: the folder's, or, where one of
    /// them has errors (which its own check reports), those that give a model, as the editor
    /// takes them (one file with errors hid every step's diagnostics). Nil when the folder
    /// cannot be read.
    private func stepMappings(_ read: [String: ReadMapping]) -> MappingCatalog? {
        if let catalog = try? mappingOptions.catalog(schemaOptions) { return catalog }
        guard let folder = try? mappingOptions.path(schemaOptions) else { return nil }
        let inFolder = read.filter { Files.parentFolder(of: $0.key) == Self.standardized(folder) }
        return MappingCatalog(directory: folder, loaded: inFolder.keys.sorted().compactMap { inFolder[$0]?.parsed.mapping })
    }

    /// A mapping file read before the check: its text and what parsing it gave.
    private struct ReadMapping {
        var text: String
        var parsed: (mapping: MappingModel?, diagnostics: [Diagnostic])
    }

    /// The mapping files among `paths`, read and parsed once, by standardized path (each read by
    /// the name it was given last, so its diagnostics name it so): the passes of each step, and
    /// what the check of each file starts from. Files that are not mapping files, or cannot be
    /// read, are left out (the check of each file says why).
    private static func mappingFiles(_ paths: [String]) -> [String: ReadMapping] {
        var named: [String: String] = [:]
        for path in paths { named[standardized(path)] = path }
        var read: [String: ReadMapping] = [:]
        for (key, path) in named {
            guard let source = try? SourceFile.read(path: path), ProjectFileKind.classify(source, fallback: .schema) == .mapping else { continue }
            read[key] = ReadMapping(text: source.text, parsed: MappingLoader.parse(source: source))
        }
        return read
    }

    /// Checks one mapping file with the other passes of its step among `read`; with
    /// --update-hashes, records the current hashes in it first (and returns the rewritten text,
    /// which the diagnostics' lines and carets then refer to).
    private func checkMapping(_ source: SourceFile, catalog: Result<SchemaCatalog, any Error>, partial: SchemaCatalog?, read: [String: ReadMapping]) -> ((diagnostics: [Diagnostic], updatedSource: SourceFile?), String?, MappingModel?) {
        // Parsed already when the mappings were read (the text the same).
        let known = read[Self.standardized(source.path)].flatMap { $0.text == source.text ? $0.parsed : nil }
        var (mapping, diagnostics) = known ?? MappingLoader.parse(source: source)
        // What was read is checked even when some of it was not (an unknown key, a bad value):
        // every mistake of the file in one run.
        guard var model = mapping else { return ((diagnostics, nil), nil, nil) }
        let loadedCleanly = !diagnostics.hasErrors
        let loaded: SchemaCatalog
        // Said in the summary, not counted: another version's file with errors.
        var unusedVersionsInError: [String] = []
        switch catalog {
        case .success(let catalog): loaded = catalog
        case .failure(let error as DiagnosticsError):
            // Another version's file with errors does not stop this mapping's check: it is
            // checked against the versions that load (the errors are the files' own to report).
            guard let partial else { return ((diagnostics + error.diagnostics, nil), nil, model) }
            // Those of its own versions' files are said (it cannot be checked without them), and
            // those of files whose version is not known; another version's are its file's.
            let broken = partial.versionsWithErrors.filter { $0.key != model.source && $0.key != model.destination }
            let others = Set(broken.values.compactMap { $0.location.map { Self.standardized($0.path) } })
            diagnostics += error.diagnostics.filter { diagnostic in diagnostic.location.map { !others.contains(Self.standardized($0.path)) } ?? true }
            unusedVersionsInError = broken.keys.sorted()
            loaded = partial
        case .failure(let error): return ((diagnostics + [.error("\(error)", at: FileLocation(path: source.path, line: 1, column: 1))], nil), nil, model)
        }
        var updatedSource: SourceFile?
        if updateHashes, loadedCleanly, let from = loaded.schema(version: model.source), let to = loaded.schema(version: model.destination),
           let text = MappingHashUpdater.update(model, source: from, destination: to), text != source.text {
            do {
                try Console.write(text, to: source.path)
                let updated = SourceFile(path: source.path, text: text)
                updatedSource = updated
                let reparsed = MappingLoader.parse(source: updated)
                diagnostics = reparsed.diagnostics
                model = reparsed.mapping ?? model
            } catch {
                diagnostics.append(.error("\(error)", at: nil))
            }
        }
        var checker = MappingChecker(mapping: model)
        checker.companions = MappingChecker.otherPasses(of: model, among: read.keys.sorted().compactMap { read[$0]?.parsed.mapping })
        diagnostics += checker.check(catalog: loaded)
        guard !diagnostics.hasErrors else { return ((diagnostics, updatedSource), nil, model) }
        let count = model.entityMappings.count
        return ((diagnostics, updatedSource), "\(source.path): mapping \(model.source) -> \(model.destination), \(count) entity mapping\(count == 1 ? "" : "s")" + (updateHashes ? ", hashes recorded" : "")
                + (unusedVersionsInError.isEmpty ? "" : " (the files of \(unusedVersionsInError.joined(separator: ", ")), which it does not use, have errors: `mapc check` of the project reports them)"), model)
    }
}
