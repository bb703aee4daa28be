import Foundation
import MapcFoundation
import MapcModel
import MapcStore
import MapcMigration

/// A project's files as an editor holds them (open documents over what is on disk), and what an
/// editor asks of them: the diagnostics `mapc check` gives, completions that know the model,
/// what a name is (hover) and where it is declared (definition). The language server (`mapc
/// lsp`) is a thin protocol layer over it.
package struct EditorProject {
    /// The schemas folder the project's versions are read from.
    package var schemasFolder: String
    /// The mappings folder.
    package var mappingsFolder: String
    /// The policies registered (a mapping's `policy:` is checked against them).
    package var policies: PolicyRegistry
    /// Where each policy class is declared, by the name mappings give it (for definitions).
    package var policyLocations: [String: FileLocation] = [:]
    /// Open documents' texts, by standardized path: what the editor shows, saved or not.
    package var open: [String: String] = [:]
    /// The schema files' readings kept from earlier requests (a server's), or nil to read each anew.
    package var schemaReadings: SchemaReadings?
    /// The mapping files read so far (an editor's server keeps them), likewise.
    package var mappingReadings: MappingReadings?

    /// A project of the folders given.
    package init(schemasFolder: String, mappingsFolder: String, policies: PolicyRegistry = .shared) {
        self.schemasFolder = Self.standardized(schemasFolder)
        self.mappingsFolder = Self.standardized(mappingsFolder)
        self.policies = policies
    }

    /// A path as the project keys it: absolute, standardized.
    package static func standardized(_ path: String) -> String { Files.standardized(path) }

    /// A file's text: as open in the editor, else as on disk.
    package func text(of path: String) -> String? {
        open[Self.standardized(path)] ?? (try? Files.read(Self.standardized(path), what: "the file", maxBytes: SourceFile.maxBytes)).map { SourceFile.withoutByteOrderMark(String(decoding: $0, as: UTF8.self)) }
    }

    /// The schemas folder's versions, open documents over the files on disk.
    package func catalog() throws -> SchemaCatalog {
        let (catalog, diagnostics) = partialCatalog()
        if diagnostics.hasErrors { throw DiagnosticsError(diagnostics) }
        return catalog
    }

    /// The catalog of the versions whose files load (open documents as typed), with every
    /// diagnostic of the schemas: a mapping is checked against it while another version's
    /// file is being typed.
    package func partialCatalog() -> (catalog: SchemaCatalog, diagnostics: [Diagnostic]) {
        SchemaCatalog.partial(files: yamlTexts(in: schemasFolder), directory: schemasFolder, reading: schemaReadings.map { readings in readings.reading(path:text:) } ?? { SchemaCatalog.FileReading(SourceFile(path: $0, text: $1)) })
    }

    /// A folder's YAML files by standardized path, as the editor holds them: open documents over
    /// the files on disk, and documents not saved yet.
    private func yamlTexts(in folder: String) -> [String: String] {
        var texts: [String: String] = [:]
        // A folder that cannot be listed gives the open documents alone (`check` says why).
        for path in (try? SourceFile.yamlFiles(in: folder)) ?? [] {
            let key = Self.standardized(path)
            if let text = text(of: key) { texts[key] = text }
        }
        for (path, text) in open where Files.parentFolder(of: path) == folder && SourceFile.isYAMLName(path) { texts[path] = text }
        return texts
    }

    /// What kind of file a path is: by its keys, else by its folder and name.
    package func kind(of path: String) -> ProjectFileKind {
        let standard = Self.standardized(path)
        let fallback: ProjectFileKind = (standard as NSString).lastPathComponent == VersionOrder.fileName ? .versionOrder
            : Files.parentFolder(of: standard) == mappingsFolder ? .mapping : .schema
        return ProjectFileKind.classify(SourceFile(path: standard, text: text(of: standard) ?? ""), fallback: fallback)
    }

    /// Whether a document is one of mapc's files: a YAML file in the project's schemas or
    /// mappings folder, or one whose top-level keys are a schema's, a mapping's or a version
    /// order's. An editor configured for every YAML file (as yaml-language-server is) also opens
    /// other tools' files, and Markdown: those get no diagnostics.
    package func isProjectFile(_ path: String) -> Bool {
        let standard = Self.standardized(path)
        guard SourceFile.isYAMLName(standard) else { return false }
        let folder = Files.parentFolder(of: standard)
        if folder == schemasFolder || folder == mappingsFolder { return true }
        return ProjectFileKind.recognised(SourceFile(path: standard, text: text(of: standard) ?? "")) != nil
    }

    /// The open mapping files of this project: those to check again when a schema changes.
    package var openMappings: [String] { open.keys.filter { Files.parentFolder(of: $0) == mappingsFolder && kind(of: $0) == .mapping }.sorted() }
    /// The open schema files of the project: the step into each is checked with it, so an edit
    /// anywhere (a mapping file written for a step, a version before changed) may change theirs.
    package var openSchemas: [String] { open.keys.filter { Files.parentFolder(of: $0) == schemasFolder && kind(of: $0) == .schema }.sorted() }

    /// A text's lines, whatever their endings (`\n` or `\r\n`, which Swift takes for one character).
    package static func lines(of text: String) -> [String] { SourceFile.lines(of: text) }

    // MARK: Diagnostics

    /// Whether a document is larger than `mapc check` reads a file (`SourceFile.maxBytes`).
    package static func isOversized(_ text: String) -> Bool { text.utf8.count > SourceFile.maxBytes }

    /// What a document past `SourceFile.maxBytes` is told, as `mapc check` refuses such a file:
    /// it is not parsed (an editor keeps such a document out of the project it checks).
    package static func oversized(_ path: String, bytes: Int) -> Diagnostic {
        .error("the document is \(bytes) bytes; the limit is \(SourceFile.maxBytes) bytes", at: FileLocation(path: path, line: 1, column: 1),
               fix: "split it, or keep large data out of schema and mapping files")
    }

    /// What checking a file needs of the rest of the project: the versions that load, with the
    /// schemas folder's diagnostics, and the mapping files that clash with one before them.
    /// Worked out once for the files checked after one edit (an edit to a schema checks every
    /// open mapping again, each against the same versions).
    package struct Surroundings {
        package let schemas: (catalog: SchemaCatalog, diagnostics: [Diagnostic])
        /// The mapping files' models, by path (errors or not, where the file gives one).
        package let mappings: [String: MappingModel]
        package let mappingClashes: [Diagnostic]
    }

    /// The project's surroundings as the editor holds them now.
    package func surroundings() -> Surroundings {
        let texts = yamlTexts(in: mappingsFolder)
        let sources = texts.keys.sorted().map { SourceFile(path: $0, text: texts[$0] ?? "") }.filter { !Self.isOversized($0.text) }
        let parsed = MappingCatalog.parse(sources, reading: mappingReadings.map { readings in { readings.reading(path: $0.path, text: $0.text) } } ?? MappingCatalog.FileReading.init)
        let models = Dictionary(parsed.files.compactMap { file in file.mapping.map { (file.path, $0) } }, uniquingKeysWith: { first, _ in first })
        return Surroundings(schemas: partialCatalog(), mappings: models, mappingClashes: MappingCatalog.withoutClashes(parsed.loaded).clashes)
    }

    /// The diagnostics of one file, as `mapc check` gives them for it (those located in it).
    package func diagnostics(for path: String, in known: Surroundings? = nil) -> [Diagnostic] {
        let standard = Self.standardized(path)
        guard isProjectFile(standard) else { return [] }
        let text = text(of: standard) ?? ""
        if Self.isOversized(text) { return [Self.oversized(standard, bytes: text.utf8.count)] }
        let source = SourceFile(path: standard, text: text)
        var found: [Diagnostic] = []
        switch kind(of: standard) {
        case .schema:
            let (schema, diagnostics) = SchemaLoader.parse(source: source)
            found = diagnostics
            if let schema, !diagnostics.hasErrors {
                found += StoreFormat.storageDiagnostics(of: schema, in: standard)
                found += stepDiagnostics(into: schema, at: standard, in: known ?? surroundings())
            }
        case .versionOrder:
            found = VersionOrder.parse(source: source).diagnostics
            // What the order lists in vain or leaves out, as `check` says it of the folder.
            for diagnostic in (known ?? surroundings()).schemas.diagnostics where diagnostic.location?.path == standard && !found.contains(diagnostic) {
                found.append(diagnostic)
            }
        case .mapping:
            // Read once per text: the folder's reading (`surroundings`) keeps it.
            let read = mappingReadings?.reading(path: standard, text: text)
            let (mapping, diagnostics) = read.flatMap { $0.isMapping ? ($0.mapping, $0.diagnostics) : nil } ?? MappingLoader.parse(source: source)
            found = diagnostics
            if let mapping {
                // Checked against the versions that load: another version's file half typed
                // in another tab is that file's to report.
                let around = known ?? surroundings()
                var checker = MappingChecker(mapping: mapping, policies: policies)
                checker.companions = MappingChecker.otherPasses(of: mapping, among: Array(around.mappings.values))
                found += checker.check(catalog: around.schemas.catalog)
                found += around.mappingClashes.filter { $0.location?.path == standard }
            }
        }
        return found.filter { $0.location == nil || $0.location?.path == standard }
    }

    /// What `check` of the project says of the step into a schema's version (located at its
    /// `version:` line): one inference, from the version before it (`StepDiagnostics`).
    private func stepDiagnostics(into schema: Schema, at path: String, in around: Surroundings) -> [Diagnostic] {
        let catalog = around.schemas.catalog
        guard let steps = catalog.loadedSteps?.filter({ $0.to.version == schema.version }), !steps.isEmpty else { return [] }
        // In file name order, as a mappings folder is read (of two files clashing, the first).
        let mappings = MappingCatalog(directory: mappingsFolder, loaded: around.mappings.keys.sorted().compactMap { around.mappings[$0] })
        return StepDiagnostics.of(MigrationPlanner.chainGaps(steps, mappings: mappings), catalog: catalog, mappings: mappings).map { diagnostic in
            // At the open file, as the editor names it (the catalog may name it otherwise).
            var said = diagnostic
            if said.location != nil { said.location?.path = path }
            return said
        }
    }

    /// What the expression of a property mapping on a line gives: its type, and whether it can be
    /// nil (and why), as the checker sees it.
    package func expressionSummary(in path: String, line: Int) -> String? {
        guard let context = mappingContext(path), let owner = entityMapping(at: line, in: context.mapping),
              let mapping = (owner.attributes + owner.relationships).first(where: { $0.location?.line == line || $0.expression.source.origin.line == line }) else { return nil }
        let scope = CheckScope(schema: context.source, source: owner.source)
        var checker = ExpressionChecker(scope: scope, source: mapping.expression.source)
        let type = checker.check(mapping.expression.expression)
        var summary = "\(mapping.name) = \(mapping.expression.source.text): \(type)"
        if let read = checker.firstNilSource(in: mapping.expression.expression) {
            let text = mapping.expression.source.text.unicodeScalarsSlice(read.range)
            summary += read.kind == .literal(.null) ? ", can be nil" : ", can be nil (\(ExpressionChecker.whyNil(read, text: String(text))))"
        } else if type != .unknown {
            summary += ", never nil"
        }
        return summary
    }

    /// A mapping file's text with its entity hashes recorded anew, as `mapc check --update-hashes`
    /// writes it; nil when the file is not a mapping of two known versions, or nothing changes.
    package func textWithUpdatedHashes(of path: String) -> String? {
        guard let context = mappingContext(path), let source = context.source, let destination = context.destination,
              let updated = MappingHashUpdater.update(context.mapping, source: source, destination: destination), updated != text(of: path) else { return nil }
        return updated
    }

    // MARK: What is where

    /// The mapping of an open mapping file, and its versions.
    private func mappingContext(_ path: String) -> (mapping: MappingModel, source: Schema?, destination: Schema?)? {
        guard let text = text(of: path), let mapping = MappingLoader.parse(source: SourceFile(path: Self.standardized(path), text: text)).mapping else { return nil }
        let catalog = Optional(partialCatalog().catalog)
        return (mapping, catalog?.schema(version: mapping.source), catalog?.schema(version: mapping.destination))
    }

    /// The mapping as read with the word that ends at a column of a line taken out: a key
    /// typed without its colon yet, which leaves the file no YAML.
    private func mappingContext(_ path: String, withoutWordEndingAt line: Int, column: Int) -> (mapping: MappingModel, source: Schema?, destination: Schema?)? {
        guard let text = text(of: path) else { return nil }
        var lines = Self.lines(of: text)
        guard line >= 1, line <= lines.count else { return nil }
        var characters = Array(lines[line - 1])
        var start = min(max(column - 1, 0), characters.count)
        while start > 0, characters[start - 1].isLetter || characters[start - 1].isNumber || characters[start - 1] == "_" { start -= 1 }
        var end = start
        while end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" { end += 1 }
        guard end > start else { return nil }
        characters.removeSubrange(start..<end)
        lines[line - 1] = String(characters)
        guard let mapping = MappingLoader.parse(source: SourceFile(path: Self.standardized(path), text: lines.joined(separator: "\n"))).mapping else { return nil }
        let catalog = Optional(partialCatalog().catalog)
        return (mapping, catalog?.schema(version: mapping.source), catalog?.schema(version: mapping.destination))
    }

    /// The mapping as read without the key its YAML error names (a key typed on another line
    /// than the cursor's, its colon not yet written), so that completion goes on elsewhere.
    private func mappingContextWithoutUnfinishedKey(_ path: String) -> (mapping: MappingModel, source: Schema?, destination: Schema?)? {
        guard let text = text(of: path),
              let unfinished = MappingLoader.parse(source: SourceFile(path: Self.standardized(path), text: text)).diagnostics
                .first(where: { $0.severity == .error && $0.message.hasPrefix("YAML syntax error: could not find expected ':'") }),
              let location = unfinished.location else { return nil }
        return mappingContext(path, withoutWordEndingAt: location.line, column: location.column + unfinished.length)
    }

    /// The entity mapping a line belongs to: the last one starting at or before it.
    private func entityMapping(at line: Int, in mapping: MappingModel) -> EntityMapping? {
        mapping.entityMappings.last { ($0.location?.line ?? .max) <= line }
    }

    /// The key path (`$source.note.bo`) ending at a column of a line, split into its root,
    /// the names before the last, and the last (partial) name.
    static func keyPath(in line: String, before column: Int) -> (root: String?, names: [String], partial: String, start: Int) {
        let characters = Array(line)
        var index = min(max(column - 1, 0), characters.count)
        let end = index
        while index > 0, characters[index - 1].isLetter || characters[index - 1].isNumber || "_.$@".contains(characters[index - 1]) { index -= 1 }
        let token = String(characters[index..<end])
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let partial = parts.popLast() ?? ""
        var root: String?
        if let first = parts.first, first.hasPrefix("$") || first == "SELF" { root = first; parts.removeFirst() }
        return (root, parts, partial, index + 1)
    }

    /// The entity a key path's names lead to from an entity, or nil where one is not a to-one or to-many relationship.
    private static func follow(_ names: [String], from entity: Entity, in schema: Schema) -> Entity? {
        var current = entity
        for name in names where !name.hasPrefix("@") {
            guard case .relationship(let relationship)? = schema.property(named: name, in: current), let next = schema.entity(named: relationship.destination) else { return nil }
            current = next
        }
        return current
    }

    /// What can be written at a position (line and column from 1): entity, property, version,
    /// policy and mapping names, `$` variables, selectors and keys, each with what it is.
    package func completions(in path: String, line: Int, column: Int) -> [EditorCompletion] {
        guard let text = text(of: path) else { return [] }
        let lines = Self.lines(of: text)
        guard line >= 1, line <= lines.count else { return [] }
        let current = lines[line - 1]
        let before = String(current.prefix(max(0, column - 1)))
        let trimmed = before.trimmingCharacters(in: .whitespaces)
        let indent = before.prefix { $0 == " " }.count
        let catalog = Optional(partialCatalog().catalog)
        switch kind(of: path) {
        case .schema:
            if trimmed.hasSuffix("type:") || trimmed.contains("type: ") && !trimmed.contains(",") {
                return AttributeType.allCases.map { EditorCompletion(label: $0.rawValue, detail: "attribute type", kind: .value) }
            }
            if trimmed.hasSuffix("destination:") || trimmed.contains("destination: ") || trimmed.hasSuffix("parent:") {
                let schema = SchemaLoader.parse(source: SourceFile(path: path, text: text)).schema
                return (schema?.entities ?? []).map { EditorCompletion(label: $0.name, detail: "entity", kind: .entity) }
            }
            return []
        case .versionOrder:
            return (catalog?.schemas ?? []).map { EditorCompletion(label: $0.version, detail: $0.displayName, kind: .value) }
        case .mapping:
            break
        }
        // A key being typed (`    s`) is no YAML until its colon: the file is read without it,
        // so that keys are completed where they are typed.
        guard let context = mappingContext(path) ?? mappingContext(path, withoutWordEndingAt: line, column: column) ?? mappingContextWithoutUnfinishedKey(path) else { return [] }
        // A line that continues an expression begun above (a block scalar, a value over lines) holds no key.
        let continuing = YAMLScalarPlacement.continuationLines(in: YAMLDocument(source: SourceFile(path: path, text: text))).contains(line)
        // The section a line is in: under `attributes:` or `relationships:`, its key is a property's.
        let section = lines[..<(line - 1)].last { $0.trimmingCharacters(in: .whitespaces).hasSuffix(":") && $0.prefix { $0 == " " }.count < indent }?.trimmingCharacters(in: .whitespaces)
        let inProperties = section == "attributes:" || section == "relationships:"
        // Keys and their values.
        if continuing {
            // Completed below, as in an expression.
        } else if let colon = trimmed.firstIndex(of: ":"), !trimmed.contains("$"), !trimmed.contains("("), !inProperties || indent == 0 {
            let key = trimmed[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "- "))
            switch key {
            case "source" where indent == 0, "destination" where indent == 0:
                return (catalog?.schemas ?? []).map { EditorCompletion(label: $0.version, detail: $0.displayName, kind: .value) }
            case "source": return (context.source?.entities ?? []).map { EditorCompletion(label: $0.name, detail: "entity of \(context.mapping.source)", kind: .entity) }
            case "destination": return (context.destination?.entities ?? []).map { EditorCompletion(label: $0.name, detail: "entity of \(context.mapping.destination)", kind: .entity) }
            case "policy": return policies.names.map { EditorCompletion(label: $0, detail: "policy", kind: .value) }
            case "type": return ["transform", "copy", "add", "remove"].map { EditorCompletion(label: $0, detail: "entity mapping type", kind: .value) }
            // Expressions: completed below.
            case "filter", "sourceExpression": break
            // A name, a section, user info, a list: no expression there.
            default: return []
            }
        } else if !trimmed.contains(":") {
            // A key being written: an entity mapping's, or a destination property under attributes/relationships.
            if indent == 0 { return MappingLoader.topKeys.map { EditorCompletion(label: $0, detail: "key", kind: .key) } }
            let owner = entityMapping(at: line, in: context.mapping)
            if let destination = context.destination, let name = owner?.destination, let entity = destination.entity(named: name), inProperties {
                let properties = section == "attributes:" ? destination.allAttributes(of: entity).map { ($0.name, $0.type.rawValue) }
                    : destination.allRelationships(of: entity).map { ($0.name, ($0.isToMany ? "to-many " : "to-one ") + $0.destination) }
                return properties.map { EditorCompletion(label: $0.0, detail: $0.1, kind: .property) }
            }
            return MappingLoader.entityMappingKeys.map { EditorCompletion(label: $0, detail: "key", kind: .key) }
        }
        // In an expression: the text of it before the cursor (a value YAML double-quotes is the
        // expression inside the quotes, its `\"` the expression's quotes).
        let owner = entityMapping(at: line, in: context.mapping)
        var expression = before
        if let opening = before.range(of: #"^\s*(- )?[A-Za-z_][A-Za-z0-9_]*: ""#, options: .regularExpression) {
            expression = String(before[opening.upperBound...]).replacingOccurrences(of: "\\\"", with: "\"")
        }
        if let quote = expression.lastIndex(of: "\""), expression[..<quote].filter({ $0 == "\"" }).count % 2 == 0 {
            let opened = expression[..<quote]
            if opened.hasSuffix("FUNCTION($manager, ") {
                return MethodSelector.allCases.filter(\.isManagerSelector).map { EditorCompletion(label: $0.rawValue, detail: "$manager selector", kind: .function) }
            }
            if opened.hasSuffix("FUNCTION($entityPolicy, ") {
                // The functions the mapping's policy gives its expressions (as `check` knows them).
                guard let policy = owner?.policy, let made = policies.makePolicy(named: policy) else { return [] }
                return made.functions.keys.sorted().map { EditorCompletion(label: $0, detail: "function of \(policy)", kind: .function) }
            }
            if opened.range(of: #"FUNCTION\([^,()]+, $"#, options: .regularExpression) != nil {
                return MethodSelector.allCases.filter { !$0.isManagerSelector }.map { EditorCompletion(label: $0.rawValue, detail: "selector", kind: .function) }
            }
            if opened.contains("EntityMappingNamed:") {
                return context.mapping.entityMappings.map { EditorCompletion(label: $0.name, detail: "\($0.source ?? "new") → \($0.destination ?? "dropped")", kind: .value) }
            }
            return []
        }
        let path = Self.keyPath(in: current, before: column)
        if path.root == nil && path.names.isEmpty && path.partial.hasPrefix("$") {
            return ["$source", "$manager", "$entityPolicy", "$destination", "$entityMapping", "$propertyMapping"].map { EditorCompletion(label: $0, detail: "variable", kind: .variable) }
        }
        // A bare word may also start a function: `uppercase:(…)`, `now()`, `FUNCTION(…)`, `TERNARY(…)`.
        let functions = path.root == nil && path.names.isEmpty
            ? NamedFunction.allCases.map { EditorCompletion(label: $0.rawValue, detail: "function", kind: .function) }
                + ["FUNCTION", "TERNARY", "CAST", "SUBQUERY", "FETCH"].map { EditorCompletion(label: $0, detail: "expression", kind: .function) }
            : []
        guard path.root == nil || path.root == "$source" || path.root == "SELF", let schema = context.source,
              let name = owner?.source, let start = schema.entity(named: name), let entity = Self.follow(path.names, from: start, in: schema) else { return functions }
        // A key as an expression reads it: `#function` for a reserved word.
        return functions + schema.allAttributes(of: entity).map { EditorCompletion(label: ExpressionLiteral.key($0.name), detail: "\($0.type.rawValue)\($0.isOptional ? ", optional" : "")", kind: .property) }
            + schema.allRelationships(of: entity).map { EditorCompletion(label: ExpressionLiteral.key($0.name), detail: ($0.isToMany ? "to-many " : "to-one ") + $0.destination, kind: .property) }
    }

    /// A name's declaration: where it is (nil when only described), what it is in one line, and
    /// how long the declared name is.
    package typealias Declaration = (location: FileLocation?, description: String, length: Int)

    /// The declaration of the name at a position (line and column from 1), and its one-line
    /// description. In a mapping: a key path's property (in the source version), a property
    /// mapping's key (the destination's property), an entity mapping named in a string, an entity
    /// named by `source:` or `destination:`, a version named by the file's own `source:` or
    /// `destination:` (its schema's `version:` line), a policy (its class, in the policies
    /// folder). In a schema: the entity a relationship's `destination:` or an entity's `parent:`
    /// names, and the relationship an `inverse:` names.
    package func declaration(in path: String, line: Int, column: Int) -> Declaration? {
        guard let text = text(of: path) else { return nil }
        let lines = Self.lines(of: text)
        guard line >= 1, line <= lines.count else { return nil }
        let current = Array(lines[line - 1])
        let (word, isKey) = Self.word(at: column, in: current)
        let key = Self.key(before: word.start, in: current)
        switch kind(of: path) {
        case .schema:
            return isKey ? nil : schemaDeclaration(of: word.partial, after: key, line: line, text: text, path: path)
        case .versionOrder:
            return nil
        case .mapping:
            break
        }
        guard let context = mappingContext(path) else { return nil }
        let name = word.partial
        let indent = current.prefix { $0 == " " }.count
        let owner = entityMapping(at: line, in: context.mapping)
        // A property mapping's key: the destination's property it sets.
        if isKey {
            guard let owner, let schema = context.destination, let entity = owner.destination.flatMap(schema.entity(named:)),
                  (owner.attributes + owner.relationships).contains(where: { $0.name == name && $0.location?.line == line }),
                  let property = schema.property(named: name, in: entity) else { return nil }
            return Self.declaration(of: property, in: entity, of: schema)
        }
        // The versions of the step.
        if indent == 0, key == "source" || key == "destination" {
            guard let schema = key == "source" ? context.source : context.destination, schema.version == name else { return nil }
            let entities = schema.entities.map(\.name)
            return (schema.versionLocation, "version \(schema.version) of \(schema.model): \(English.count(entities.count, "entity", "entities"))\(entities.isEmpty ? "" : " (\(entities.prefix(12).joined(separator: ", "))\(entities.count > 12 ? ", …" : ""))")", name.count)
        }
        // A policy, by the whole name (`Module.Class` names the class, as the registry reads it).
        if key == "policy", let policy = owner?.policy, String(current).contains(policy) {
            let functions = policies.makePolicy(named: policy).map { $0.functions.keys.sorted() }
            let registered = functions.map { $0.isEmpty ? "" : "; functions: \($0.joined(separator: ", "))" } ?? " (not among the policies read)"
            let className = policy.split(separator: ".").last.map(String.init) ?? policy
            return (policyLocations[policy] ?? policyLocations[className], "policy \(policy)\(registered)", className.count)
        }
        // A mapping named in a string.
        if let mapping = context.mapping.entityMappings.first(where: { $0.name == name }), String(current).contains("\"\(name)\"") {
            // A mapping's declaration is its list item (`- name: …`): the item's first character.
            return (mapping.location, "entity mapping \(mapping.name): \(mapping.source ?? "new") → \(mapping.destination ?? "dropped")", 1)
        }
        for (entityKey, schema) in [("source", context.source), ("destination", context.destination)] where key == entityKey {
            if let schema, let entity = schema.entity(named: name) { return Self.declaration(of: entity, in: schema) }
        }
        guard let owner, let schema = context.source, let start = owner.source.flatMap(schema.entity(named:)),
              word.root == nil || word.root == "$source" || word.root == "SELF", let entity = Self.follow(word.names, from: start, in: schema),
              let property = schema.property(named: name, in: entity) else { return nil }
        return Self.declaration(of: property, in: entity, of: schema)
    }

    /// What a hover over a position says: the declaration of the name there; on a property
    /// mapping's line, what its expression gives, and on its key the destination's property too.
    package func hover(in path: String, line: Int, column: Int) -> String? {
        let declared = declaration(in: path, line: line, column: column)
        guard let summary = expressionSummary(in: path, line: line) else { return declared?.description }
        guard let declared else { return summary }
        // On the key, the expression is what the hover is about; elsewhere the name is.
        return isOnKey(in: path, line: line, column: column) ? "\(summary)\n\ninto \(declared.description)" : declared.description
    }

    /// Whether a position is on a YAML key (`word(at:in:)`'s rule, as `declaration` reads it).
    private func isOnKey(in path: String, line: Int, column: Int) -> Bool {
        guard let text = text(of: path) else { return false }
        let lines = Self.lines(of: text)
        return line >= 1 && line <= lines.count && Self.word(at: column, in: Array(lines[line - 1])).isKey
    }

    /// The whole word under a column (from 1) of a line, as a key path ending where the word
    /// ends, and whether it is a YAML key: a name a `:` follows.
    static func word(at column: Int, in line: [Character]) -> (path: (root: String?, names: [String], partial: String, start: Int), isKey: Bool) {
        var end = min(max(column - 1, 0), line.count)
        while end < line.count, line[end].isLetter || line[end].isNumber || line[end] == "_" { end += 1 }
        let path = keyPath(in: String(line), before: end + 1)
        return (path, end < line.count && line[end] == ":" && path.root == nil && path.names.isEmpty)
    }

    /// The YAML key whose value starts with the word at an index of a line (`destination` for
    /// `{ destination: Note` at `Note`), or nil when the word is not a key's whole value.
    static func key(before start: Int, in line: [Character]) -> String? {
        var index = min(max(start - 1, 0), line.count)
        while index > 0, line[index - 1] == " " || line[index - 1] == "\"" || line[index - 1] == "'" { index -= 1 }
        guard index > 0, line[index - 1] == ":" else { return nil }
        index -= 1
        let keyEnd = index
        while index > 0, line[index - 1].isLetter || line[index - 1].isNumber || line[index - 1] == "_" { index -= 1 }
        return index < keyEnd ? String(line[index..<keyEnd]) : nil
    }

    /// In a schema file: the entity a `destination:` or `parent:` names, or the relationship an
    /// `inverse:` names (on its relationship's line).
    private func schemaDeclaration(of name: String, after key: String?, line: Int, text: String, path: String) -> Declaration? {
        guard let key, let schema = SchemaLoader.parse(source: SourceFile(path: Self.standardized(path), text: text)).schema else { return nil }
        switch key {
        case "destination", "parent":
            return schema.entity(named: name).map { Self.declaration(of: $0, in: schema) }
        case "inverse":
            // The relationship the line belongs to: the last declared at or above it (its own line
            // in flow style, `{ destination: …, inverse: … }`; a line below in block style).
            guard let relationship = schema.entities.flatMap(\.relationships).filter({ ($0.location?.line ?? .max) <= line }).max(by: { ($0.location?.line ?? 0) < ($1.location?.line ?? 0) }),
                  relationship.inverse == name,
                  let entity = schema.entity(named: relationship.destination), let inverse = schema.property(named: name, in: entity) else { return nil }
            return Self.declaration(of: inverse, in: entity, of: schema)
        default:
            return nil
        }
    }

    /// An entity's declaration and its properties in one line.
    private static func declaration(of entity: Entity, in schema: Schema) -> Declaration {
        let properties = schema.allAttributes(of: entity).map { "\($0.name): \($0.type.rawValue)" } + schema.allRelationships(of: entity).map { "\($0.name) → \($0.destination)" }
        return (entity.location, "entity \(entity.name) of \(schema.version): \(properties.joined(separator: ", "))", entity.name.count)
    }

    /// A property's declaration, described as the checker sees it.
    private static func declaration(of property: Property, in entity: Entity, of schema: Schema) -> Declaration {
        switch property {
        case .attribute(let attribute):
            return (attribute.location, "\(entity.name).\(attribute.name): \(attribute.type.rawValue), \(attribute.isOptional ? "optional (can be nil)" : "required") in \(schema.version)", attribute.name.count)
        case .relationship(let relationship):
            return (relationship.location, "\(entity.name).\(relationship.name): \(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination)\(relationship.isOptional ? ", optional" : "") in \(schema.version)", relationship.name.count)
        }
    }
}

/// One thing an editor can complete to.
package struct EditorCompletion: Sendable, Equatable {
    /// What it is, for the editor's icon.
    package enum Kind: Sendable { case entity, property, value, key, variable, function }
    /// The text inserted.
    package var label: String
    /// What it is, shown beside.
    package var detail: String
    /// Its kind.
    package var kind: Kind
}
