import Foundation
import MapcFoundation
import MapcModel

/// One step of a migration plan.
public struct MigrationStep: Sendable {
    /// The version migrated from.
    public var source: Schema
    /// The version migrated to.
    public var destination: Schema
    /// The mapping used (the first pass of a step with several).
    public var mapping: MappingModel
    /// Every mapping file of the step, in pass order, when it has several (see `allPasses`).
    public var passes: [MappingModel] = []

    /// The mappings the step runs, in order: its passes, or its one mapping.
    public var allPasses: [MappingModel] { passes.isEmpty ? [mapping] : passes }
    /// Whether the mapping was inferred rather than read from a file.
    public var isInferred: Bool
    /// SHA-256 of the mapping file's text (or of the inferred mapping as `mapc infer --output` writes it).
    public var mappingSHA256: String {
        switch identity {
        case .digest(let digest): return digest
        case .inferred(let result, let order):
            // Written only when asked (a run records it): planning 116 inferred steps spent a
            // third of its time writing mapping text nobody read.
            return VersionHash.sha256(MappingWriter.yaml(result.skeleton, source: source, destination: destination, changes: result.changes, notes: result.notes, order: order))
        }
    }
    /// Whether the step goes to an older version (always through a mapping file).
    public var isDowngrade = false
    /// For an inferred step taken through several versions at once, the versions between, oldest
    /// first (empty for a step to the next version): the inference from the first to the last
    /// carries every value as the steps through each would, so the store is rewritten once.
    public var passesThrough: [String] = []
    /// For an inferred step, what it drops: removed entities ("entity Note") and properties
    /// ("Note.image") whose values are lost. A run refuses such a step unless told to accept it.
    /// In a plan for a store (`Migrator.plan(forStoreAt:)`), those the store may hold a value of
    /// (the others are `droppedButNotHeld`), which the run asks again.
    public var droppedValues: [String] = []
    /// In a plan for a store, what the step drops that the store holds no value of.
    package var droppedButNotHeld: [String] = []
    /// For an inferred step, what it drops, each with where a store keeps it.
    package var dropped: [DroppedValue] = []
    /// For an inferred step, attributes made required whose nil values become their default
    /// ("Photo.caption (nil becomes "")"), as Core Data's lightweight migration does.
    public var nilsFilled: [String] = []
    /// For an inferred step, attributes whose values it converts to another number type, with
    /// what that can cost ("Book.rating (double -> float: values are rounded …)").
    public var valuesConverted: [String] = []

    /// For an inferred step, properties that look renamed without a renaming identifier (an added
    /// and a removed property of one type), each saying how to declare the rename.
    public var probableRenames: [String] {
        if case .inferred(let result, _) = identity { return result.probableRenames }
        return []
    }

    /// For an inferred step, its renames and cautions (`InferenceResult.hints`), and what the
    /// chain it begins does unlike one inference across it (`chainNotes`).
    package var hints: [String] {
        if case .inferred(let result, _) = identity { return result.hints + chainNotes }
        return []
    }

    /// For the first of inferred steps kept apart, where Core Data's lightweight migration, which
    /// infers straight from the store's model to the current one, would give other values
    /// (`InferredChain.directDifferences`).
    package var chainNotes: [String] = []

    /// Whether the step is inferred and adds the property to the entity's objects (new in its
    /// destination: each object gets the default, or nil), rather than carrying it.
    package func adds(_ property: String, to entity: String) -> Bool {
        guard case .new? = inferredOrigins?.properties[entity]?[property] else { return false }
        return true
    }

    /// For an inferred step, where each value of the destination comes from.
    var inferredOrigins: InferredOrigins? {
        if case .inferred(let result, _) = identity { return result.origins }
        return nil
    }

    /// What identifies the step's mapping: the digest of its files, or the inference it writes.
    private var identity: Identity

    private enum Identity: Sendable {
        case digest(String)
        case inferred(InferenceResult, VersionOrder?)
    }

    /// A step through mapping files whose text has the digest `mappingSHA256`.
    init(source: Schema, destination: Schema, mapping: MappingModel, mappingSHA256: String, isDowngrade: Bool = false) {
        self.source = source
        self.destination = destination
        self.mapping = mapping
        self.isInferred = false
        self.isDowngrade = isDowngrade
        self.identity = .digest(mappingSHA256)
    }

    /// An inferred step: its mapping is the inference's, identified as `mapc infer` would write it.
    init(source: Schema, destination: Schema, inferred result: InferenceResult, mapping: MappingModel, order: VersionOrder?) {
        self.source = source
        self.destination = destination
        self.mapping = mapping
        self.isInferred = true
        self.dropped = result.dropped
        self.droppedValues = result.droppedValues
        self.nilsFilled = result.nilsFilled
        self.valuesConverted = result.valuesConverted
        self.identity = .inferred(result, order)
    }
}

/// Why no plan exists: the step that cannot be made, and why.
public struct PlanError: Error, CustomStringConvertible, Sendable {
    /// The step's source version.
    public var from: String
    /// The step's destination version.
    public var to: String
    /// The reasons inference failed, or another explanation.
    public var reasons: [String]
    /// What inference saw besides, which is no reason the step fails (a probable rename without
    /// its identifier, which may be what the step means).
    public var notes: [String] = []
    /// The folder mapping files are read from ("" when the mappings did not come from a folder).
    public var mappingsDirectory: String
    /// Whether the step goes to an older version (never inferred: it needs a mapping file).
    public var isDowngrade: Bool
    /// The steps of the chain that cannot be made after this one, in order: a plan reports every
    /// blocker, not the first alone.
    public var later: [PlanError] = []
    /// The steps of the chain that can be made (those before, between and after the blockers),
    /// whose mapping files a caller checks too, so that their problems are reported with these.
    public var madeSteps: [MigrationStep] = []
    /// What checking the mapping files of `madeSteps` found (filled by `Migrator.plan`): a
    /// missing policy in step 1 is reported with a blocked step 33 -> 34, not hidden by it.
    public var mappingProblems: [Diagnostic] = []

    /// The version the plan's inferred steps began at, before `from`, when there were some: a
    /// mapping file from it that skips `from` makes the step possible too.
    public var skippingFrom: String? = nil

    /// The mapping file that would make the step possible.
    public var suggestedFile: String {
        MappingCatalog.suggestedFile(from: from, to: to, in: mappingsDirectory)
    }

    public var description: String {
        ([self] + later).map(\.stepDescription).joined(separator: "\n")
    }

    /// This step's part of the description.
    private var stepDescription: String {
        if isDowngrade {
            return "cannot migrate from \(from) down to \(to): a downgrade runs only with a mapping file, never inferred"
                + (reasons.isEmpty ? "" : ":\n" + reasons.map { "  - \($0)" }.joined(separator: "\n"))
                + "\nwrite \(suggestedFile) mapping \(from) to \(to) (it may skip versions), or restore a backup"
        }
        return "cannot migrate from \(from) to \(to): no mapping file for the step and it cannot be inferred:\n" + reasons.map { "  - \($0)" }.joined(separator: "\n")
            + notes.map { "\n  note: \($0)" }.joined()
            + "\nwrite \(suggestedFile) (inference writes a skeleton of it, with everything inferable filled in), or add an intermediate version"
            + (skippingFrom.map { ", or write \(MappingCatalog.suggestedFile(from: $0, to: to, in: mappingsDirectory)) from \($0) (where the inferred steps before it start), which skips \(from)" } ?? "")
    }
}

/// Plans a progressive migration: the chain of steps from a store's version to a target version,
/// in the catalog's declared version order. Forward, each step uses a mapping file when one exists
/// (a file skipping versions, such as v1 to v3, is preferred when present) or an inferred mapping
/// otherwise. Backward (a downgrade), only mapping files are used: mapc never infers a downgrade.
/// Consecutive inferred steps are then taken as one wherever that changes no value
/// (`InferredChain`), unless every version is to be a step of its own.
package enum MigrationPlanner {
    /// The steps from `source` to `destination`; empty when they are the same version. Throws
    /// `PlanError` naming the first step that has neither a mapping nor a possible inference, and
    /// `MapcError` when the catalog's versions have no declared order.
    ///
    /// `storeHolds`, for a plan made for one store at `source`, answers whether the store holds
    /// objects of an entity (of `source`): asked only once a step is blocked, so that a problem
    /// of entities the store has no objects of does not stop it, as it does not stop Core Data,
    /// which validates the objects a migration makes. `storeHoldsNil` answers, likewise, whether
    /// an object of exactly an entity has no value for an attribute (both of `source`), so that
    /// an attribute made required with nothing to fill a nil with does not stop a store holding none.
    package static func plan(from source: Schema, to destination: Schema, catalog: SchemaCatalog, mappings: MappingCatalog,
                             everyVersion: Bool = false, directly: Bool = false, storeHolds: ((String) throws -> Bool)? = nil,
                             storeHoldsNil: ((_ attribute: String, _ entity: String) throws -> Bool)? = nil) throws -> [MigrationStep] {
        let versions = try catalog.orderedSchemas()
        guard let start = versions.firstIndex(where: { $0.version == source.version }),
              let end = versions.firstIndex(where: { $0.version == destination.version }) else {
            throw PlanError(from: source.version, to: destination.version, reasons: ["both versions must be in the schemas folder"],
                            mappingsDirectory: mappings.directory, isDowngrade: false)
        }
        if start == end { return [] }
        var steps: [MigrationStep] = []
        // Every step that cannot be made, in order: the chain goes on past each as if it were.
        var blockers: [PlanError] = []
        var index = start
        let forward = start < end
        // Where the inferred steps just made began (nil after a mapping file's step or a blocker).
        var inferredFrom: Int?
        // Which entities may have objects, traced from the store's version through the inferred
        // steps (nil once a mapping file's step, whose policies may make any, or an untraced step is met).
        var traced: InferredChain.State? = forward ? InferredChain.State(first: versions[start]) : nil
        // The same, from the entities the store holds objects of: asked of the store once a step
        // is blocked, the steps before traced again.
        var tracedInStore: InferredChain.State?
        var storeAsked = false
        var originsSinceStart: [InferredOrigins] = []
        while index != end {
            // The furthest explicit mapping from here that does not overshoot.
            let candidates = forward ? Array((index + 1...end).reversed()) : Array(end...(index - 1))
            if let (target, mapping) = candidates.lazy.compactMap({ j in mappings.mapping(from: versions[index].version, to: versions[j].version).map { (j, $0) } }).first {
                let passes = mappings.passes(from: versions[index].version, to: versions[target].version)
                var step = MigrationStep(source: versions[index], destination: versions[target], mapping: mapping,
                                         mappingSHA256: VersionHash.sha256(passes.map { $0.file?.text ?? "" }.joined(separator: "\u{0}")), isDowngrade: !forward)
                step.passes = passes
                steps.append(step)
                index = target
                inferredFrom = nil
                traced = nil
                tracedInStore = nil
                continue
            }
            guard forward else {
                throw PlanError(from: versions[index].version, to: versions[end].version, reasons: [], mappingsDirectory: mappings.directory, isDowngrade: true)
            }
            var result = MappingInference.infer(from: versions[index], to: versions[index + 1])
            if result.mapping == nil, traced != nil, !storeAsked, let storeHolds {
                storeAsked = true
                // A store that cannot say is taken to hold some: the step stays refused.
                let unheldAtStart = Set(versions[start].entities.filter { !$0.isAbstract }.map(\.name).filter { ((try? storeHolds($0)) ?? true) == false })
                if !unheldAtStart.isEmpty {
                    tracedInStore = originsSinceStart.reduce(InferredChain.State(first: versions[start], empty: unheldAtStart)) { state, origins in state?.after(origins) }
                }
            }
            // Entities no object can be of (new since the store's version), and those the store
            // held none of when asked (it may gain some: only what validation refuses is set aside).
            let empty = traced?.entitiesWithoutObjects(in: versions[index]) ?? []
            let unheld = (tracedInStore?.entitiesWithoutObjects(in: versions[index]) ?? []).subtracting(empty)
            // Attributes made required with nothing to fill a nil, asked of the store through
            // where their values came from: those it holds no nil of.
            var withoutNil: Set<EntityAttribute> = []
            if result.mapping == nil, let traced, let storeHoldsNil {
                for key in result.problems.flatMap(\.unlessNoNil) where traced.holdsNoNil(key, asking: storeHoldsNil) {
                    withoutNil.insert(key)
                }
            }
            if result.mapping == nil, !empty.isEmpty || !unheld.isEmpty || !withoutNil.isEmpty {
                // What stops it may concern only such entities: then it does not stop this store.
                var again = MappingInference.infer(from: versions[index], to: versions[index + 1], emptyEntities: empty, unheldEntities: unheld, attributesWithoutNil: withoutNil)
                if again.mapping != nil {
                    let store = versions[start].version
                    again.cautions += again.moot.map { moot in
                        if let key = moot.unlessNoNil.first, moot.unlessNoNil.isSubset(of: withoutNil) {
                            return "\(moot.entity).\(moot.property ?? ""): \(moot.reason); that does not stop a store coming from \(store): none of its \(key.entity) objects has \(key.attribute) nil (one saved with \(key.attribute) nil before the run fails its validation)"
                        }
                        // The source entity its objects would come from (a renamed entity has another name).
                        let from = again.origins.entities[moot.entity] ?? moot.entity
                        let why = unheld.contains(from) ? "the store held none of the objects they would come from; one saved before the run fails its validation"
                            : "none can come from \(store)"
                        return "\(moot.entity)\(moot.property.map { ".\($0)" } ?? ""): \(moot.reason); that does not stop a store coming from \(store): it has no \(moot.entity) objects (\(why))"
                    }
                }
                // Stopped or not, its problems are those a store coming from there can meet.
                result = again
            }
            guard let mapping = result.mapping else {
                // A problem a store's values could set aside, past a mapping file's step whose
                // values cannot be asked of the store before it runs: said, with the way round.
                var why: [String] = []
                // An attribute made required that the store holds a nil of: said, so the objects are found.
                if let traced, let storeHoldsNil {
                    for key in Set(result.problems.flatMap(\.unlessNoNil)).sorted(by: { ($0.entity, $0.attribute) < ($1.entity, $1.attribute) }) {
                        guard let stored = traced.storedSource(of: key), (try? storeHoldsNil(stored.attribute, stored.entity)) == true else { continue }
                        why.append("the store has \(stored.entity) objects whose \(stored.attribute) is nil (`mapc eval --store STORE --entity \(stored.entity) --where '\(stored.attribute) == nil' SELF` lists them): give them values, or give '\(key.attribute)' a default in \(versions[index + 1].version)")
                    }
                }
                if storeHoldsNil != nil, traced == nil, index != start, let mapped = steps.last(where: { !$0.isInferred }),
                   !result.problems.isEmpty, result.problems.allSatisfy({ !$0.unlessNoNil.isEmpty || $0.isRefusedByValidation }) {
                    why.append("a store in which no object meets this would migrate, but the values after the mapping step \(mapped.source.version) -> \(mapped.destination.version) cannot be asked of it before that step runs; "
                               + "migrate to \(versions[index].version) first (`mapc run --to \(versions[index].version)`), then this step is asked of the store")
                }
                var blocker = PlanError(from: versions[index].version, to: versions[index + 1].version, reasons: result.problems.map(\.description) + why,
                                        mappingsDirectory: mappings.directory, isDowngrade: false, skippingFrom: inferredFrom.map { versions[$0].version })
                blocker.notes = result.hints
                blockers.append(blocker)
                index += 1
                inferredFrom = nil
                traced = nil
                tracedInStore = nil
                continue
            }
            let step = MigrationStep(source: versions[index], destination: versions[index + 1], inferred: result, mapping: mapping, order: catalog.order)
            steps.append(step)
            if inferredFrom == nil { inferredFrom = index }
            if let origins = step.inferredOrigins { originsSinceStart.append(origins) }
            traced = step.inferredOrigins.flatMap { traced?.after($0) }
            tracedInStore = step.inferredOrigins.flatMap { tracedInStore?.after($0) }
            index += 1
        }
        if var first = blockers.first {
            first.later = Array(blockers.dropFirst())
            first.madeSteps = steps
            throw first
        }
        if everyVersion { return steps }
        return directly ? InferredChain.direct(steps, order: catalog.order) : InferredChain.combined(steps, order: catalog.order)
    }

    /// The inferred steps of the declared version order that a store could not take towards the
    /// newest version (`problem`), or only by dropping values (`droppedValues`, which `run`
    /// refuses unless told to accept), with any probable forgotten renames (`renames`): for each version with no mapping file leading forward
    /// from it, the step to the next. A store at any version plans as `plan` does, so these are
    /// the steps a store somewhere in the history would meet; `mapc check` reports them.
    package static func chainGaps(catalog: SchemaCatalog, mappings: MappingCatalog) throws -> [ChainGap] {
        let versions = try catalog.orderedSchemas()
        return chainGaps(versions.indices.dropLast().map { (versions[$0], versions[$0 + 1], Set(versions[($0 + 1)...].map(\.version))) }, mappings: mappings)
    }

    /// A step of the history no mapping file covers: why it cannot be inferred, or what its
    /// inference drops and may not mean, or the attributes made required that a store must hold
    /// no nil of for it to be inferred (`nilsRefused`: `run` asks the store).
    package typealias ChainGap = (problem: PlanError?, from: String, to: String, droppedValues: [String], hints: [String], nilsRefused: [InferenceProblem])

    /// `chainGaps` of the given steps (`SchemaCatalog.loadedSteps`: a history with files in error).
    package static func chainGaps(_ steps: [(from: Schema, to: Schema, later: Set<String>)], mappings: MappingCatalog) -> [ChainGap] {
        var gaps: [ChainGap] = []
        for step in steps {
            let (from, to) = (step.from.version, step.to.version)
            if mappings.mappings.contains(where: { $0.source == from && step.later.contains($0.destination) }) { continue }
            let result = MappingInference.infer(from: step.from, to: step.to)
            if result.mapping == nil, !result.problems.isEmpty, result.problems.allSatisfy({ !$0.unlessNoNil.isEmpty }) {
                // Only a nil stops it: a store holding none takes the step (`run` asks the store).
                gaps.append((nil, from, to, [], result.hints, result.problems))
            } else if result.mapping == nil {
                var blocker = PlanError(from: from, to: to, reasons: result.problems.map(\.description), mappingsDirectory: mappings.directory, isDowngrade: false)
                blocker.notes = result.hints
                gaps.append((blocker, from, to, [], result.hints, []))
            } else if !result.droppedValues.isEmpty || !result.hints.isEmpty {
                gaps.append((nil, from, to, result.droppedValues, result.hints, []))
            }
        }
        return gaps
    }
}

extension PlanError: LocalizedError {
    public var errorDescription: String? { description }
}
