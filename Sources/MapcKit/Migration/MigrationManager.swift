import Foundation
internal import GRDB

/// The state of one migration run, and what custom policies and `$manager` expressions ask of it:
/// the equivalent of `NSMigrationManager` during `migrateStore`. A `StepMigration` makes one per
/// run; it holds the destination connection, the statements, the source-to-destination
/// associations (in a scratch database, so memory stays flat) and the evaluators, and is dropped
/// when the run ends. Evaluators refer to it weakly, so nothing keeps it alive.
///
/// Objects are identified by key. A declarative mapping (no custom policy: exactly one destination
/// object per source object it reads, all from one source table) follows a **key rule**: the
/// destination key is the source key plus an offset fixed when the mapping starts, in a range of
/// destination keys set aside for it, so its associations need no storage at all and the compiled
/// SQL and the interpreter give every object the same key. Objects a custom policy creates are
/// recorded as `(mapping, source key) → (destination entity, key)` rows in a scratch table, as
/// `NSMigrationManager.associate` does. Either way lookups work the same in every store format.
public final class MigrationManager: MigrationManagerFunctions {
    /// The store migrated from (read only). Not a policy's: the migration holds its connection,
    /// and a call into it from a hook would re-enter it (objects are read with `SourceObject`).
    let sourceStore: Store
    /// The store being built: not a policy's either (objects are written with `insert`).
    let destinationStore: Store
    /// The mapping model run.
    public let mapping: MappingModel
    /// The destination schema.
    public let destinationSchema: Schema

    let step: StepMigration
    let sourceGraph: StoreObjectGraph
    /// What the run knows of the mapping before reading any object.
    let analysis: MigrationAnalysis
    let policies: [EntityMigrationPolicy]
    let evaluators: [Evaluator]
    let startDate = Date()

    // Per-run state, valid while `run()` executes.
    var connection: Database?
    var rowWriter: RowWriter?
    /// Whether the source store is attached to the destination connection as `mapc_source`.
    var sourceAttached = false
    /// What the run has done so far: the summary's source.
    var ledger: MigrationLedger
    /// The mapping being worked on.
    var currentMapping = 0
    /// The destination object being related in phase 2, with its source object.
    var currentRelation: (destination: StoredKey, source: SourceObject)?
    /// The key rules of the declarative mappings that have started.
    var keyRules = KeyRules()
    /// The relationships being written with the rows, by mapping position, once the mapping starts.
    var creationLinks: [Int: CreationLinks] = [:]
    var attributePlans: [String: AttributePlan] = [:]
    /// The plan asked for last: objects come mapping by mapping, so it is found without hashing.
    var lastAttributePlan: (index: Int, entity: String, plan: AttributePlan)?
    /// The objects each mapping's evaluator has bound to `$source` and `$destination`.
    var bound: [(source: ObjectRef?, destination: ObjectRef?)]
    /// Per destination entity: its stored attributes' types and defaults, for checking what policies set.
    var storedAttributes: [String: (types: [String: AttributeType], defaults: [(String, Value)])] = [:]

    /// The source store's name on the destination connection, where the compiled path reads it.
    static let sourceSchemaName = "mapc_source"

    /// The run's associations; only during `run()`.
    var associations: AssociationIndex {
        get throws { AssociationIndex(writer: try writer) }
    }

    init(step: StepMigration) throws {
        self.step = step
        sourceStore = step.source
        destinationStore = step.destination
        destinationSchema = step.destination.schema
        mapping = step.mapping
        sourceGraph = StoreObjectGraph(store: step.source, readsMigrationSource: true)
        analysis = try MigrationAnalysis(mapping: step.mapping, source: step.source, destination: step.destination)
        var policies: [EntityMigrationPolicy] = []
        var evaluators: [Evaluator] = []
        for entityMapping in mapping.entityMappings {
            var policy = EntityMigrationPolicy()
            if let name = entityMapping.policy {
                guard let made = step.policies.makePolicy(named: name) else {
                    throw MigrationError.setup("mapping '\(entityMapping.name)' names policy '\(name)', which is not registered; \(step.policies.hint(forUnknownPolicy: name))")
                }
                policy = made
            }
            policies.append(policy)
            evaluators.append(Evaluator(context: EvaluationContext(graph: sourceGraph, manager: nil, policyFunctions: policy.functions, now: startDate)))
        }
        self.policies = policies
        self.evaluators = evaluators
        ledger = MigrationLedger(mappingCount: mapping.entityMappings.count)
        bound = Array(repeating: (nil, nil), count: mapping.entityMappings.count)
        guard mapping.destination.isEmpty || step.destination.schema.version == mapping.destination else {
            throw MigrationError.setup("the destination store is laid out for \(step.destination.schema.version), but the mapping goes to \(mapping.destination)")
        }
    }

    var rowLookups: [String: RowLookup] = [:]
    /// By mapping position, then destination entity.
    var relationshipStepsByMapping: [Int: [String: [(Relationship, PropertyMapping?)]]] = [:]
    var relationshipSettings: [PropertyName: RelationshipSetting] = [:]

    // MARK: Running

    /// The destination connection; only during `run()`.
    var db: Database {
        get throws {
            guard let connection else { throw MigrationError.setup("the migration is not running") }
            // Rows the writer holds back are written first (`RowWriter.flush`).
            try rowWriter?.flush()
            return connection
        }
    }

    /// The row writer of the destination; only during `run()`.
    var writer: RowWriter {
        get throws {
            guard let rowWriter else { throw MigrationError.setup("objects can only be written while the migration runs") }
            return rowWriter
        }
    }

    func run() throws -> MigrationSummary {
        for evaluator in evaluators { evaluator.context.manager = self }
        var seconds: [MigrationPhase: Double] = [:]
        // The whole run reads its source in one read transaction: one snapshot, no transaction per
        // read (batches read ahead on another connection see the same rows: nobody can commit).
        do {
            try sourceStore.readingInOneTransaction { try destinationStore.database.writeWithoutTransaction { db in
                try StatementCancellation.run(on: db, isCancelled: step.isCancelled) { try run(on: db, seconds: &seconds) }
            } }
        } catch let error as DatabaseError where stoppedByCancellation(error) {
            throw MigrationError.cancelled
        }
        return try ledger.summary(of: mapping, destination: destinationSchema, phaseSeconds: seconds) { try destinationStore.count(of: $0, exactly: true) }
    }

    /// The three phases on the destination connection, timing each.
    func run(on db: Database, seconds: inout [MigrationPhase: Double]) throws {
        connection = db
        ledger.validatedCounts = nil
        // A refused row is named with the mapping that made it, wherever the writer finds out.
        rowWriter = RowWriter(store: destinationStore, db: db, buffersRows: true) { refused in
            let (property, message) = switch refused.reason {
            case .uniqueness(let problem): (problem.key ?? "", problem.message)
            case .identityTaken: ("id", "another destination object already has id '\(refused.id)'; a policy creating several objects per source object must give each its own id")
            }
            return MigrationError.value(mapping: refused.origin ?? "?", entity: refused.entity, object: refused.id, property: property, message: message)
        }
        defer { connection = nil; rowWriter = nil }
        try AssociationIndex.attach(to: db)
        defer { try? AssociationIndex.detach(from: db) }
        if step.allowsSQL, let path = sourceStore.path {
            try db.execute(sql: "ATTACH DATABASE ? AS \(Self.sourceSchemaName)", arguments: [path])
            sourceAttached = true
        }
        defer {
            if sourceAttached { try? db.execute(sql: "DETACH DATABASE \(Self.sourceSchemaName)") }
            sourceAttached = false
        }
        var clock = Date()
        try db.inTransaction(.deferred) {
            try CreationPhase().run(self)
            try rowWriter?.flush()
            return .commit
        }
        seconds[.create] = Date().timeIntervalSince(clock)
        clock = Date()
        try db.inTransaction(.deferred) {
            try RelationshipPhase().run(self)
            try rowWriter?.flush()
            try destinationStore.strategy.finishWriting(db, layout: destinationStore.layout)
            return .commit
        }
        seconds[.relate] = Date().timeIntervalSince(clock)
        clock = Date()
        try ValidationPhase().run(self)
        // Validation wrote what its hooks inserted before checking it (`ValidationPhase`).
        try rowWriter?.finish()
        seconds[.validate] = Date().timeIntervalSince(clock)
    }

    func report(_ phase: MigrationPhase, _ mappingName: String?, _ completed: Int, _ total: Int?, finished: Bool = false) {
        var progress = MigrationProgress(phase: phase, mapping: mappingName, completed: completed, total: total, isFinished: finished)
        progress.mappingIndex = mappingName.flatMap { name in mapping.entityMappings.firstIndex { $0.name == name } }
        progress.mappingCount = mapping.entityMappings.count
        step.progress?(progress)
    }

    /// Whether a statement failed because `StatementCancellation` stopped it for the caller.
    func stoppedByCancellation(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_INTERRUPT && step.isCancelled()
    }

    /// Stops the run when its caller asked to cancel.
    func checkCancellation() throws {
        if step.isCancelled() { throw MigrationError.cancelled }
    }

    /// Runs a policy hook, turning its failures into `MigrationError.policy`.
    func hook(_ entityMapping: EntityMapping, _ body: () throws -> Void) throws {
        do { try body() } catch { throw hookFailure(error, entityMapping, object: currentRelation?.source.ref) }
    }

    /// Phase 1's hook for one source object, as `hook` runs it, without a closure: one formed per
    /// object copied the entity mapping into it each time.
    func createDestinationInstances(_ index: Int, for source: SourceObject, mapping entityMapping: EntityMapping) throws {
        do {
            if usesDefaultCreation[index] {
                try createDestination(index, for: source, mapping: entityMapping)
            } else {
                try policies[index].createDestinationInstances(for: source, mapping: entityMapping, manager: self)
            }
        } catch {
            throw hookFailure(error, entityMapping, object: source.ref)
        }
    }

    /// Per mapping position, whether its policy is the default one: its object creation
    /// `createDestination` does without going through `DestinationObject`, and its failures are
    /// mapc's own, never reported as a custom policy's.
    private lazy var usesDefaultCreation: [Bool] = policies.map { type(of: $0) == EntityMigrationPolicy.self }

    /// A policy hook's failure as the migration reports it.
    func hookFailure(_ error: any Error, _ entityMapping: EntityMapping, object: ObjectRef?) -> any Error {
        switch error {
        case let error as MigrationError: return error
        // Not the policy's failure: the cancellation stopped a statement it ran.
        case let error as DatabaseError where stoppedByCancellation(error): return MigrationError.cancelled
        // The default policy's failures are mapc's own (a full disk, say), not a policy's; so is
        // SQLite's failure in anything a policy asked the manager for: the store's, whatever
        // the hook (a full disk surfaced as a policy's failure, exit 3, at some sizes).
        case _ where usesDefaultCreation[mappingIndex(entityMapping)]: return error
        case let error as DatabaseError: return error
        case let error as ExpressionError: return MigrationError.policy(mapping: entityMapping.name, message: error.description)
        default: return MigrationError.policyFailed(mapping: entityMapping.name, object: object, error: error)
        }
    }

    /// Evaluates an expression for a source object, locating failures in the mapping file.
    func evaluate<T>(_ expression: MappingExpression, for source: SourceObject, destination destinationRef: ObjectRef? = nil, mapping entityMapping: EntityMapping,
                     property: String, _ run: (Evaluator, Expr) throws -> T) throws -> T {
        let index = mappingIndex(entityMapping)
        let evaluator = evaluators[index]
        // Bound once per object, not per expression: the variables only change with the objects.
        let sourceRef = source.ref
        if bound[index].source != sourceRef || bound[index].destination != destinationRef || bound[index].source == nil {
            evaluator.context.evaluatedObject = .object(sourceRef)
            evaluator.context.variables["source"] = .object(sourceRef)
            evaluator.context.variables["destination"] = destinationRef.map { .object($0) } ?? .null
            evaluator.context.variables["entityMapping"] = .handle(.opaque(entityMapping.name))
            bound[index] = (sourceRef, destinationRef)
        }
        do {
            return try run(evaluator, expression.expression)
        } catch let error as ExpressionError {
            throw MigrationError.expression(mapping: entityMapping.name, property: property, object: source.ref, diagnostic: error.diagnostic(in: expression.source))
        }
    }

    /// Forgets what a mapping's evaluator has bound, after its context was set another way.
    func unbind(_ index: Int) {
        bound[index] = (nil, nil)
    }

    func mappingIndex(_ entityMapping: EntityMapping) -> Int {
        // Mostly the mapping being worked on: found without hashing its name (names are unique).
        if currentMapping < analysis.mappingNames.count, analysis.mappingNames[currentMapping] == entityMapping.name {
            return currentMapping
        }
        return analysis.indexByName[entityMapping.name] ?? currentMapping
    }

    /// The position of the entity mapping named in a `$manager` call, or an error suggesting the closest name.
    func index(ofMappingNamed name: String) throws -> Int {
        try analysis.index(ofMappingNamed: name)
    }

    /// The suffix the identity rule adds to a source id for a mapping (`MigrationAnalysis.identitySuffixes`).
    func identitySuffix(_ index: Int) -> String {
        analysis.identitySuffixes[index]
    }

    /// A source object as policies see it.
    func sourceObject(_ data: ObjectData) -> SourceObject {
        sourceGraph.remember(data)
        return SourceObject(data: data, graph: sourceGraph)
    }
}
