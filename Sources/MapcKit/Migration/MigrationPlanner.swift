import Foundation

/// One step of a migration plan.
public struct MigrationStep: Sendable {
    /// The version migrated from.
    public var source: Schema
    /// The version migrated to.
    public var destination: Schema
    /// The mapping used.
    public var mapping: MappingModel
    /// Whether the mapping was inferred rather than read from a file.
    public var isInferred: Bool
    /// SHA-256 of the mapping file's text (or of the inferred mapping as `mapc infer` writes it).
    public var mappingSHA256: String
}

/// Why no plan exists: the step that cannot be made, and why.
public struct PlanError: Error, CustomStringConvertible, Sendable {
    /// The step's source version.
    public var from: String
    /// The step's destination version.
    public var to: String
    /// The reasons inference failed, or another explanation.
    public var reasons: [String]

    public var description: String {
        "cannot migrate from \(from) to \(to): no mapping file for the step and it cannot be inferred:\n" + reasons.map { "  - \($0)" }.joined(separator: "\n")
            + "\nwrite mappings/mapping_\(from)_to_\(to).yaml (`mapc infer --from \(from) --to \(to) --output …` gives a starting point), or add an intermediate version"
    }
}

/// Plans a progressive migration: the chain of steps from a store's version to a target version,
/// each with a mapping file when one exists (a file skipping versions, such as v1 to v3, is
/// preferred when present) or an inferred mapping otherwise.
public enum MigrationPlanner {
    /// The steps from `source` to `destination`; empty when they are the same version. Throws
    /// `PlanError` naming the first step that has neither a mapping nor a possible inference.
    public static func plan(from source: Schema, to destination: Schema, catalog: SchemaCatalog, mappings: MappingCatalog) throws -> [MigrationStep] {
        let versions = catalog.schemas
        guard let start = versions.firstIndex(where: { $0.version == source.version }),
              let end = versions.firstIndex(where: { $0.version == destination.version }) else {
            throw PlanError(from: source.version, to: destination.version, reasons: ["both versions must be in the schemas folder"])
        }
        if start == end { return [] }
        guard start < end else {
            throw PlanError(from: source.version, to: destination.version, reasons: ["\(destination.version) is older than \(source.version); mapc migrates forward only (restore a backup to go back)"])
        }
        var steps: [MigrationStep] = []
        var index = start
        while index < end {
            // The furthest explicit mapping from here that does not overshoot.
            if let (target, mapping) = (index + 1...end).reversed().lazy.compactMap({ j in mappings.mapping(from: versions[index].version, to: versions[j].version).map { (j, $0) } }).first {
                steps.append(MigrationStep(source: versions[index], destination: versions[target], mapping: mapping, isInferred: false,
                                           mappingSHA256: VersionHash.sha256(mapping.file?.text ?? "")))
                index = target
                continue
            }
            let result = MappingInference.infer(from: versions[index], to: versions[index + 1])
            guard let mapping = result.mapping else {
                throw PlanError(from: versions[index].version, to: versions[index + 1].version, reasons: result.problems.map(\.description))
            }
            let text = MappingWriter.yaml(mapping, source: versions[index], destination: versions[index + 1], changes: result.changes, notes: result.notes)
            steps.append(MigrationStep(source: versions[index], destination: versions[index + 1], mapping: mapping, isInferred: true, mappingSHA256: VersionHash.sha256(text)))
            index += 1
        }
        return steps
    }
}
