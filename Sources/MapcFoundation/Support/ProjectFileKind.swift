package import Yams

/// What a YAML file of a mapc project holds, decided from its parsed top-level keys (never from
/// text patterns, so flow style, comments and key order cannot change the answer).
package enum ProjectFileKind: String, Sendable {
    /// A schema file: one model version (`model:`, `version:`, `entities:`).
    case schema
    /// A mapping file: one migration step (`source:`, `destination:`, `entityMappings:`).
    case mapping
    /// The order of a model's versions (`versions:`), see `VersionOrder`.
    case versionOrder

    /// Classifies a file by its top-level keys. A file whose YAML does not parse, or whose top level
    /// is not a mapping, is classified by where it was found (`fallback`), so that the matching
    /// reader reports the problem with its position.
    package static func classify(_ source: SourceFile, fallback: ProjectFileKind) -> ProjectFileKind {
        guard YAMLGuard.problem(with: source.text) == nil, let node = try? Yams.compose(yaml: source.text, .basic) else { return fallback }
        return classify(node, fallback: fallback)
    }

    /// The same, of a file already read (a `YAMLDocument`'s root), so it is not read twice.
    package static func classify(_ root: Node?, fallback: ProjectFileKind) -> ProjectFileKind {
        recognised(root) ?? fallback
    }

    /// `recognised(_:)` of a file's text (nil too when its YAML does not parse).
    package static func recognised(_ source: SourceFile) -> ProjectFileKind? {
        guard YAMLGuard.problem(with: source.text) == nil, let node = try? Yams.compose(yaml: source.text, .basic) else { return nil }
        return recognised(node)
    }

    /// What a file is by its top-level keys alone; nil when none is one of mapc's (another
    /// tool's YAML, such as a `docker-compose.yaml` an editor opens in the same workspace).
    package static func recognised(_ root: Node?) -> ProjectFileKind? {
        guard let mapping = root?.mapping else { return nil }
        let keys = Set(mapping.keys.compactMap { $0.scalar?.string })
        if keys.contains("entityMappings") { return .mapping }
        if keys.contains("entities") || keys.contains("model") { return .schema }
        if keys.contains("versions") { return .versionOrder }
        if keys.contains("source") || keys.contains("destination") { return .mapping }
        return nil
    }

    /// Why a file named as a schema is another kind of mapc's files, said with what reads it;
    /// nil when it may be a schema (its errors, if any, are then a schema's).
    package static func notASchema(_ source: SourceFile) -> String? {
        guard YAMLGuard.problem(with: source.text) == nil, let root = try? Yams.compose(yaml: source.text, .basic) else { return nil }
        return notASchema(root, path: source.path)
    }

    /// The same, of a file already read (its root).
    package static func notASchema(_ root: Node?, path: String) -> String? {
        guard let mapping = root?.mapping else { return nil }
        let keys = Set(mapping.keys.compactMap { $0.scalar?.string })
        switch recognised(root) {
        case .mapping?:
            return "\(path) is a mapping file, not a schema: name a schema file or a version (`mapc check` checks a mapping file)"
        case .versionOrder?:
            return "\(path) is the version order file, not a schema: name a schema file or a version (`mapc check` checks the order)"
        case .schema?:
            return nil
        case nil:
            // A data file (`mapc dump`'s JSON, or one written for `mapc load`): objects by entity.
            return keys.contains("objects") ? "\(path) is a data file (objects of a version), not a schema: `mapc load \(path) STORE` reads it into a store" : nil
        }
    }
}
