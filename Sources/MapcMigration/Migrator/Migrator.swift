import Foundation
internal import CMapcSystem
import MapcFoundation
import MapcModel
import MapcStore

/// The front door: an app's versions, mappings and policies, ready to bring any store to any
/// version. Like GRDB's `DatabaseMigrator` it is a value that keeps no state and receives the
/// store it works on; like `NSMigrationManager` it runs Core Data's three phases, step by step.
///
/// ```swift
/// let migrator = try Migrator(schemasFolder: bundle.url(forResource: "schemas", withExtension: nil)!,
///                             mappingsFolder: bundle.url(forResource: "mappings", withExtension: nil))
/// let plan = try await migrator.plan(forStoreAt: storeURL)    // reads only
/// if plan.isNeeded {
///     let outcome = try await migrator.migrate(plan) { progress in … }
/// }
/// ```
///
/// The store is identified by its hashes, in whatever format it is (mapc's or Core Data's), and
/// migrated progressively along the versions' declared order as one atomic operation: it is
/// either left untouched or replaced, once, by the fully migrated and validated store.
public struct Migrator: Sendable {
    /// The model's versions, oldest first.
    public var schemas: SchemaCatalog
    /// The mapping files for the steps inference cannot make (or should not).
    public var mappings: MappingCatalog
    /// The custom policies the mappings may name.
    public var policies: PolicyRegistry
    /// Make every version a step of its own, each store built and validated. Off (the default),
    /// consecutive inferred steps are one step wherever the inference from the first version to
    /// the last carries every value as the steps would (`MigrationStep.passesThrough` names the
    /// versions passed): the store is rewritten once, not once per version, and validated
    /// against the last version only, as Core Data's lightweight migration infers and validates
    /// from the store's model straight to the current one.
    public var stepsThroughEveryVersion = false
    /// Make consecutive inferred steps one inference from the first version to the last even where
    /// that gives other values than the steps one after another, as Core Data's lightweight
    /// migration infers straight from the store's model to the current one: a default added and
    /// removed between is not filled, a property removed and added again keeps its values. Off
    /// (the default), the store goes through each version as an app opening each would, and a
    /// plan's note says where Core Data's one inference would differ. Ignored with
    /// `stepsThroughEveryVersion`.
    public var infersDirectly = false

    /// A migrator over versions, mappings and policies already loaded.
    public init(schemas: SchemaCatalog, mappings: MappingCatalog = MappingCatalog(), policies: PolicyRegistry = .shared) {
        self.schemas = schemas
        self.mappings = mappings
        self.policies = policies
    }

    /// A migrator over a schemas folder and a mappings folder (which must exist when given).
    public init(schemasFolder: URL, mappingsFolder: URL? = nil, policies: PolicyRegistry = .shared) throws {
        self.init(schemas: try SchemaCatalog(directory: schemasFolder.path),
                  mappings: try mappingsFolder.map { try MappingCatalog(folder: $0.path) } ?? MappingCatalog(), policies: policies)
    }

    /// A migrator over schema and mapping files an app bundles as text, by file name (a
    /// `versions.yaml` among the schema files declares their order).
    public init(schemaFiles: [String: String], mappingFiles: [String: String] = [:], policies: PolicyRegistry = .shared) throws {
        self.init(schemas: try SchemaCatalog(files: schemaFiles), mappings: try MappingCatalog(files: mappingFiles), policies: policies)
    }

    // MARK: Questions (read only)

    /// What a store is: its format, metadata, the version its hashes identify, the objects it
    /// holds and the migrations applied to it. Reads the store; never writes it. Throws when the
    /// store is damaged (SQLite's quick check, which reads the whole file: a damaged index that
    /// reading the objects never meets is damage a status must not hide).
    public func status(ofStoreAt url: URL) throws -> StoreStatus {
        let (format, metadata) = try Store.metadata(at: Files.path(of: url))
        if let damaged = Store.damage(at: Files.path(of: url)) { throw damaged }
        let matching = schemas.versions(matching: metadata, format: format)
        var status = StoreStatus(url: url, format: format.identifier, formatName: format.name, metadata: metadata,
                                 version: schemas.version(of: metadata, format: format)?.version, compatibleVersions: matching.map(\.version))
        status.model = metadata.model ?? status.version.flatMap { schemas.schema(version: $0)?.model }
        if status.version != nil {
            status.identification = "recognised by its \(English.count(metadata.entityHashes.count, "entity hash", "entity hashes"))"
        } else if let recorded = metadata.version, schemas.schema(version: recorded) == nil, schemas.versionsWithErrors[recorded] != nil {
            status.identification = "it is at version '\(recorded)', whose schema file has errors: mend that file (`mapc check` shows its errors)"
        } else if let mismatch = schemas.modelMismatch(metadata) {
            status.identification = mismatch.message
        } else {
            // What `version(ofStoreAt:)` and `plan` say of it: another model's store (a Core Data
            // store records no model name), or the closest version and what differs.
            status.identification = schemas.unidentifiedStore(at: Files.path(of: url), format: format, metadata: metadata, checkedForDamage: true).description
        }
        if !matching.isEmpty {
            let store = try Store.open(at: Files.path(of: url), catalog: schemas, readOnly: true)
            defer { try? store.close() }
            // Rows of no entity the version has (a run and a dump refuse them): counted nowhere, the
            // counts would mislead.
            try store.checkEveryRowIsRecognised()
            status.objectCounts = ObjectCounts(try store.schema.entities.map { ($0.name, try store.count(of: $0.name, exactly: true)) })
            status.otherTables = try store.foreignTables().map(\.described)
        }
        status.history = try StoreHistory.read(at: Files.path(of: url), format: format)
        if format.identifier == StoreFormat.coreData.identifier {
            let external = CoreDataExternalData.beside(store: Files.path(of: url))
            do { status.externalData = try external.countedValues().map(external.describe) } catch {
                status.externalData = "in \(Files.fileURL(external.supportFolder).lastPathComponent), which cannot be counted: \(error)"
            }
        }
        return status
    }

    /// The version a store is at, found by its hashes; an error naming the differences when no
    /// version matches. `claimed` (a version the caller believes it is at) must agree with the hashes.
    public func version(ofStoreAt url: URL, claimed: String? = nil) throws -> Schema {
        let (format, metadata) = try Store.metadata(at: Files.path(of: url))
        let matching = schemas.versions(matching: metadata, format: format)
        guard !matching.isEmpty else {
            throw schemas.unidentifiedStore(at: Files.path(of: url), format: format, metadata: metadata)
        }
        if let claimed {
            // A version the schemas do not have is named as such (with the closest name), before
            // the store's own version is compared with it.
            _ = try schemas.require(version: claimed)
            guard let named = matching.first(where: { $0.version == claimed }) else {
                throw MapcError.store("\(Files.path(of: url)) is at version \(matching.map(\.version).joined(separator: " or ")), not \(claimed) (checked by its hashes)")
            }
            return named
        }
        guard let version = schemas.version(of: metadata, format: format) else {
            throw schemas.unidentifiedStore(at: Files.path(of: url), format: format, metadata: metadata)
        }
        return version
    }

    /// The version a plan to `target` starts from, and what to say of it. Versions whose changes
    /// touched no hash (a new default, a renamed class), or whose changes between them undo each
    /// other (an attribute removed and added again), are one to a store's hashes, and Core Data
    /// takes a store whose hashes match a model as compatible with it (its migration infers from
    /// that one structure to the current model). So a store whose hashes match several versions is
    /// taken for the latest of them up to the target (the target itself: nothing to do), the steps
    /// between a round trip its data need not take; but not past a mapping file for a step on the
    /// way (an upgrade from a version between the two), which does work the hashes cannot see and
    /// runs. Taken past versions it does not match, the plan says so, with `--from` for the other
    /// reading. A store that names its version (mapc's format records it) starts there, and so does
    /// a version `claimed`.
    private func start(ofStoreAt url: URL, claimed: String?, target: Schema) throws -> (version: Schema, note: String?) {
        let current = try version(ofStoreAt: url, claimed: claimed)
        guard claimed == nil else { return (current, nil) }
        let (format, metadata) = try Store.metadata(at: Files.path(of: url))
        let matching = Set(schemas.versions(matching: metadata, format: format).map(\.version))
        guard matching.count > 1, metadata.version.map(matching.contains) != true,
              let ordered = try? schemas.orderedSchemas(), let index = ordered.firstIndex(where: { $0.version == current.version }),
              let targetIndex = ordered.firstIndex(where: { $0.version == target.version }), index < targetIndex else { return (current, nil) }
        let position = Dictionary(ordered.enumerated().map { ($1.version, $0) }, uniquingKeysWith: { first, _ in first })
        func fileStarts(at step: Int) -> Bool {
            mappings.mappings.contains { $0.source == ordered[step].version && (position[$0.destination] ?? -1) > step }
        }
        var taken = index
        for later in (index + 1)...targetIndex {
            if fileStarts(at: later - 1) { break }
            if matching.contains(ordered[later].version) { taken = later }
        }
        let passed = ordered[index..<taken].map(\.version).filter { !matching.contains($0) }
        guard taken > index, !passed.isEmpty else { return (ordered[taken], nil) }
        let alike = ordered[index...taken].map(\.version).filter(matching.contains)
        return (ordered[taken], "the store's hashes are those of \(alike.joined(separator: ", ")) (their changes between undo each other): it is taken for \(ordered[taken].version), "
                + "the latest, as Core Data's migration reads one structure; written at \(current.version), its data would go through \(passed.joined(separator: ", ")) first "
                + "(`\(English.option("--from", current.version))` plans that)")
    }

    /// The steps that would bring a store to `version` (the newest when nil): mapping files where
    /// present, inferred mappings otherwise, downgrades only through mapping files. Reads the store's
    /// metadata, when steps are needed the tables the model does not have (`notes`), and when a
    /// step's inference is blocked whether the store holds objects of each entity; never writes it. Throws `PlanError` for the steps that can be neither (every one, in order, with
    /// what checking the other steps' mapping files found: `mappingProblems`).
    public func plan(forStoreAt url: URL, from claimed: String? = nil, to version: String? = nil) throws -> MigrationPlan {
        try plan(forStoreAt: url, from: claimed, to: version, withNotes: true)
    }

    /// The plan, with its `notes` only when asked: a plan made to be run at once leaves them to
    /// the run, which looks at the store's tables again under its lock anyway.
    package func plan(forStoreAt url: URL, from claimed: String?, to version: String?, withNotes: Bool) throws -> MigrationPlan {
        let target = try version.map { try schemas.require(version: $0) } ?? schemas.newest()
        let (current, startNote) = try start(ofStoreAt: url, claimed: claimed, target: target)
        // Opened only if a step is blocked, to ask which entities the store holds objects of.
        var opened: Store?
        defer { try? opened?.close() }
        let holds = { (entity: String) throws -> Bool in
            let store = try opened ?? Store.open(at: Files.path(of: url), schema: current, readOnly: true)
            opened = store
            return try store.holdsObjects(of: entity)
        }
        do {
            let holdsNil = { (attribute: String, entity: String) throws -> Bool in
                let store = try opened ?? Store.open(at: Files.path(of: url), schema: current, readOnly: true)
                opened = store
                return try store.holdsNil(of: attribute, in: entity)
            }
            var steps = try MigrationPlanner.plan(from: current, to: target, catalog: schemas, mappings: mappings, everyVersion: stepsThroughEveryVersion,
                                                  directly: infersDirectly, storeHolds: holds, storeHoldsNil: holdsNil)
            // What the steps drop that the store holds no value of costs nothing (the run asks again, under its lock).
            if steps.contains(where: { $0.isInferred && !$0.dropped.isEmpty }) {
                let store = try opened ?? Store.open(at: Files.path(of: url), schema: current, readOnly: true)
                opened = store
                for (index, split) in try StoreMigration.droppedValues(of: steps, keptBy: store).enumerated() where steps[index].isInferred {
                    (steps[index].droppedValues, steps[index].droppedButNotHeld) = split
                }
            }
            var plan = MigrationPlan(store: url, current: current, target: target, steps: steps)
            if withNotes, plan.isNeeded { (plan.notes, plan.refusalInStoreFormat) = try Self.foreignTableNotes(ofStoreAt: url, version: current, writing: steps.map(\.destination)) }
            // Said by a plan and a run alike (a run's plan has no other notes).
            if let startNote { plan.notes.insert(startNote, at: 0) }
            return plan
        } catch var error as PlanError {
            error.mappingProblems = MappingChecker.problems(of: error.madeSteps, policies: policies)
            throw error
        }
    }

    /// What a migration of the store would leave out besides its objects, in sentences: Core
    /// Data's persistent history, mirroring state, tables the model does not have (a run refuses
    /// those holding rows unless the loss is accepted); and the refusal a run in the store's own
    /// format would meet making a store of one of the `destinations` (a Core Data store of a
    /// version with what mapc does not import).
    private static func foreignTableNotes(ofStoreAt url: URL, version: Schema, writing destinations: [Schema]) throws -> (notes: [String], refusal: String?) {
        let store = try Store.open(at: Files.path(of: url), schema: version, readOnly: true)
        defer { try? store.close() }
        let refusal = destinations.lazy.compactMap { store.format.refusal(writing: $0) }.first
        let tables = try store.foreignTables()
        var notes = ForeignTable.notes(tables) + store.layoutNotes()
        let unasked = tables.filter(\.needsConsent)
        if !unasked.isEmpty {
            notes.append("a run refuses to leave out \(unasked.map(\.describedWithCost).joined(separator: ", ")) unless the loss is accepted (`mapc run --accept-data-loss`; in code, `MigrationOptions.acceptsDataLoss`)")
        }
        return (notes, refusal)
    }

    /// Checks every mapping file a plan uses against its versions; throws `DiagnosticsError` with
    /// every problem (positions in the files) when any has errors, and otherwise returns the
    /// warnings (a value that may not fit its attribute, a literal a double changes), as
    /// `mapc check` prints them.
    @discardableResult
    public func check(_ plan: MigrationPlan) throws -> [Diagnostic] {
        try MappingChecker.check(plan.steps, policies: policies)
    }

    // MARK: Migrating

    /// Brings the store at `url` to `version` (the newest when nil): plans, checks the mapping
    /// files, and runs the steps as one atomic operation (see `MigrationOptions` for a dry run,
    /// writing elsewhere and keeping a backup). Returns at once, with no steps, when the store is
    /// already there.
    public func migrate(storeAt url: URL, from claimed: String? = nil, to version: String? = nil, options: MigrationOptions = MigrationOptions(),
                        progress: ((MigrationProgress) -> Void)? = nil) throws -> MigrationOutcome {
        try replanningOnce {
            let plan = try self.plan(forStoreAt: url, from: claimed, to: version, withNotes: false)
            return try migrate(plan, options: options, progress: progress)
        }
    }

    /// Runs `attempt` (which plans and migrates), and once more when the store changed between
    /// its plan and its lock (`MigrationError.storeChanged`: another process migrated it
    /// meanwhile): planned again, a store that process brought to the target is current.
    package func replanningOnce<T>(_ attempt: () throws -> T) throws -> T {
        do {
            return try attempt()
        } catch MigrationError.storeChanged {
            return try attempt()
        }
    }

    /// The plan, with a step of the store's version to itself when the store is already at the
    /// version asked for but `format` is another than its own: a conversion is a migration, which
    /// reads every value (Core Data's external files included) and writes it in the new format.
    package func converting(_ plan: MigrationPlan, to format: StoreFormat?) throws -> MigrationPlan {
        guard !plan.isNeeded, let format, try Store.metadata(at: Files.path(of: plan.store)).format.identifier != format.identifier else { return plan }
        let result = MappingInference.infer(from: plan.current, to: plan.current)
        guard let mapping = result.mapping else {
            throw MigrationError.setup("version \(plan.current.version) cannot be mapped to itself: \(result.problems.map(\.description).joined(separator: "; "))")
        }
        var converted = plan
        converted.steps = [MigrationStep(source: plan.current, destination: plan.current, inferred: result, mapping: mapping, order: schemas.order)]
        return converted
    }

    /// Nothing to do, for a store that is what its hashes say: its tables are all there and hold
    /// rows of its entities only (a table dropped behind the store, or rows of no entity of the
    /// version, are refused, as `status` and `dump` refuse them, not called current).
    package func checkTables(ofCurrent plan: MigrationPlan) throws {
        let store = try Store.open(at: Files.path(of: plan.store), schema: plan.current, readOnly: true)
        defer { try? store.close() }
        try store.checkEveryRowIsRecognised()
    }

    /// Runs a plan made by `plan(forStoreAt:)`. A store already at the version asked for is
    /// converted when `options.destinationFormat` is another format than its own.
    public func migrate(_ plan: MigrationPlan, options: MigrationOptions = MigrationOptions(), progress: ((MigrationProgress) -> Void)? = nil) throws -> MigrationOutcome {
        let plan = try converting(plan, to: options.destinationFormat)
        guard plan.isNeeded else {
            try checkTables(ofCurrent: plan)
            return try StoreMigration.runWithoutSteps(store: Files.path(of: plan.store), options: options)
        }
        try check(plan)
        return try StoreMigration.run(store: Files.path(of: plan.store), steps: plan.steps, options: options, policies: policies) { index, count, update in
            var update = update
            update.step = index
            update.steps = count
            progress?(update)
        }
    }
}

extension Migrator {
    /// Turns off SQLite's memory statistics for the whole process: with them on (SQLite's
    /// default), every allocation and free SQLite makes takes one global mutex (3.4% of an
    /// interpreted migration's samples, about 6% of its time: docs/performance.md). The `mapc` command does it first thing;
    /// an app may do the same, before anything in the process uses SQLite (`sqlite3_config` is
    /// refused after that, and is not safe while another thread uses SQLite). Nothing in mapc
    /// or GRDB reads the statistics.
    ///
    /// - Returns: whether it was done; false once SQLite is in use (nothing changes then).
    @discardableResult
    public static func disableSQLiteMemoryStatistics() -> Bool {
        mapc_disable_memory_statistics() == 0
    }
}
