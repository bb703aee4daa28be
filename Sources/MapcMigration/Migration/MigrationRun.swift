import Foundation
internal import CMapcSystem
internal import GRDB
import MapcModel
import MapcStore

/// One migration run, and what custom policies and `$manager` expressions ask of it: the
/// equivalent of `NSMigrationManager` during `migrateStore`. `StepMigration.run()` makes one on the
/// destination connection once the setup is checked; it owns that connection, its row writer and
/// the source-to-destination associations (`AssociationIndex`, in a scratch database, so memory
/// stays flat) for exactly the run's lifetime, and is dropped when the run ends. Evaluators refer
/// to it weakly, so nothing keeps it alive. What it knows before reading an object is a
/// `MigrationAnalysis`; what it has done, a `MigrationLedger`; its keys follow `KeyRules`.
///
/// Objects are identified by key: a declarative mapping's by its key rule (`KeyRule`), other
/// objects through the associations they record (`AssociationIndex`).
/// What a crash report says of a policy's crash.
package enum PolicyCrash {
    /// The custom policy a run is working through and what it does there ("the custom policy X
    /// of mapping 'Y', creating objects (phase 1)"), nil outside one: a stop asked meanwhile
    /// waits for the policy's hook to return, which an endless one never does.
    package static var running: String? {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
    nonisolated(unsafe) private static var current: String?
    private static let lock = NSLock()

    /// What a crash report says of the policy running (`noteRunningPolicy`), kept so that a
    /// mistake found meanwhile is added to it.
    nonisolated(unsafe) private static var report = ""

    /// Clears what a crash says: no policy runs.
    static func clearReport() {
        lock.withLock { report = "" }
        mapc_crash_context_clear()
    }

    /// Sets what a crash in the policy running says.
    static func setReport(_ text: String) {
        lock.withLock { report = text }
        mapc_crash_context_set(text)
    }

    /// Adds a mistake the policy made before it may crash: a key it read that is none (which
    /// fails the run when the hook returns, as Core Data raises at the read), so that a
    /// `fatalError` on the nil it got (`guard … else { fatalError() }`, common in ported policies)
    /// is reported with its cause.
    static func noteMistake(_ text: String) {
        let full = lock.withLock { report.isEmpty ? "" : report + " Before it crashed, \(text)." }
        if !full.isEmpty { mapc_crash_context_set(full) }
    }

    /// That the store is as it was (a test of a fixture's copy leaves it out: no store of the
    /// user's was being migrated).
    package static let storeUnchanged = "The store was not changed: a migration writes a new file and puts it in place only once it is complete and valid, "
        + "and the next run removes what this one left."
}

final class MigrationRun: MigrationManagerFunctions {
    /// The store migrated from (read only). Not a policy's: the migration holds its connection,
    /// and a call into it from a hook would re-enter it (objects are read with `SourceObject`).
    let sourceStore: Store
    /// The store being built: not a policy's either (objects are written with `insert`).
    let destinationStore: Store
    /// The mapping model run.
    let mapping: MappingModel
    /// The destination schema.
    let destinationSchema: Schema

    let step: StepMigration
    let sourceGraph: StoreObjectGraph
    /// What policies' hooks did through destination objects' subscripts (`PolicyHookLog`).
    let hookLog: PolicyHookLog
    /// What the run knows of the mapping before reading any object.
    let analysis: MigrationAnalysis
    let policies: [EntityMigrationPolicy]
    /// The mappings' evaluators and what each has bound.
    let evaluators: MappingEvaluators
    /// Builds destination objects from the mappings' expressions.
    let builder: DestinationBuilder
    /// Sets destination relationships.
    let setter: RelationshipSetter
    /// Reads the source store's objects and counts.
    let sources: SourceReader
    let startDate = Date()
    /// What the run's policies are handed: the public face of the run.
    private(set) lazy var manager = MigrationManager(run: self)

    /// The destination connection, for exactly the run's lifetime (`db` writes held-back rows first).
    let connection: Database
    /// The destination's row writer, on that connection.
    let writer: RowWriter
    /// The run's associations, in a scratch database attached to that connection.
    let associations: AssociationIndex
    /// Whether the source store is attached to the destination connection as `mapc_source` (the
    /// compiled path reads it there).
    let sourceAttached: Bool
    /// What the run has done so far: the summary's source.
    var ledger: MigrationLedger
    /// The mapping being worked on.
    var currentMapping = 0
    /// The destination object being related in phase 2, with its source object.
    var currentRelation: (destination: StoredKey, source: SourceObject)?
    /// The destination relationship whose targets are being worked out (phase 2): a lookup by
    /// source relationship looks for objects it takes.
    var relationshipBeingSet: Relationship?
    /// Each destination entity's hierarchy, by name, as lookups by source relationship ask.
    var entitiesUnder: [String: Set<String>] = [:]
    /// How many writes a policy has asked of the manager itself (objects inserted or associated,
    /// relationships and values set), not through the default relationships: a policy saying it
    /// keeps the default whose hook writes more is related one by one (`RelationshipPhase`).
    var policyWrites = 0
    /// The key rules of the declarative mappings that have started.
    var keyRules = KeyRules()
    /// The relationships being written with the rows, by mapping position, once the mapping starts.
    var creationLinks: [Int: CreationLinks] = [:]
    /// The source store's name on the destination connection, where the compiled path reads it.
    static let sourceSchemaName = "mapc_source"
    private var tablesOrderedByAppCollations: Set<String>?
    private var tablesOfAnotherAffinity: [String: Bool] = [:]

    /// Whether a source table has a column declared with another affinity than its format's,
    /// read once per table for the run: each compiled mapping of the table asks (a table that
    /// 1,800 sub-entities share was read 1,800 times, column by column).
    func sourceTableHasColumnsOfAnotherAffinity(_ table: String) throws -> Bool {
        if let known = tablesOfAnotherAffinity[table] { return known }
        let found = try !sourceStore.columnsOfAnotherAffinity(inTable: table).isEmpty
        tablesOfAnotherAffinity[table] = found
        return found
    }

    /// The source tables (lowercased) with an index ordered by an app's collation, read once for
    /// the run: each compiled mapping asks.
    func sourceTablesOrderedByAppCollations() throws -> Set<String> {
        if let tablesOrderedByAppCollations { return tablesOrderedByAppCollations }
        let tables = try sourceStore.tablesOrderedByAppCollations()
        tablesOrderedByAppCollations = tables
        return tables
    }

    /// A run of `step` on the destination connection `db`, which the run owns until it returns.
    private init(step: StepMigration, setup: Setup, connection db: Database, sourceAttached: Bool) {
        self.step = step
        sourceStore = step.source
        destinationStore = step.destination
        destinationSchema = step.destination.schema
        mapping = step.mapping
        analysis = setup.analysis
        policies = setup.policies
        usesDefaultCreation = setup.policies.map { type(of: $0) == EntityMigrationPolicy.self }
        let files = step.externalFiles ?? step.source.path.map(CoreDataExternalData.beside(store:))
        let graph = StoreObjectGraph(store: step.source, readsMigrationSource: true)
        graph.externalFiles = files
        // A date from text is rounded to the source's count only where the destination counts the
        // same (a run converting the format would round it twice: `.097Z` stored as `.0970001Z`).
        if step.source.strategy.dateEpoch != step.destination.strategy.dateEpoch { graph.literalDateEpoch = nil }
        sourceGraph = graph
        hookLog = PolicyHookLog(schema: step.destination.schema)
        let now = startDate
        let evaluators = MappingEvaluators(mapping: step.mapping, policies: setup.policies, graph: graph, now: now)
        self.evaluators = evaluators
        ledger = MigrationLedger(mappingCount: step.mapping.entityMappings.count)
        connection = db
        // A refused row is named with the mapping that made it, wherever the writer finds out.
        let mappingsWithPolicies = Set(step.mapping.entityMappings.filter { $0.policy != nil }.map(\.name))
        // The mapping that made a refused row, when the identity rule named the row after it.
        let analysis = setup.analysis
        let namedAfter = { (refused: RowWriter.RefusedRow) -> String? in
            guard let name = refused.origin, let index = analysis.indexByName[name], !analysis.identitySuffixes[index].isEmpty,
                  refused.id.hasSuffix(analysis.identitySuffixes[index]) else { return nil }
            return name
        }
        writer = RowWriter(store: step.destination, db: db, buffersRows: true) { refused in
            let (property, message) = switch refused.reason {
            case .uniqueness(let problem): (problem.key ?? "", problem.message)
            case .identityTaken where refused.origin.map(mappingsWithPolicies.contains) ?? false:
                ("id", "another destination object already has id '\(refused.id)'; a policy creating several objects per source object must give each its own id")
            case .identityTaken where namedAfter(refused) != nil:
                // The identity rule's name for a later mapping's object, held already (a store an
                // earlier mapping of the same name migrated).
                ("id", "another destination object already has id '\(refused.id)', the id mapping '\(refused.origin ?? "")' gives the object it makes from '\(refused.id.dropLast((refused.origin?.count ?? 0) + 1))' "
                 + "(a mapping after the first to read an object names its object '<source id>.<mapping name>'); "
                 + "rename the mapping '\(refused.origin ?? "")' (and the $manager lookups naming it) so that its objects' ids differ")
            case .identityTaken:
                // Without a policy each source object makes one object of its own id: two share it in the store.
                ("id", "another destination object already has id '\(refused.id)': the store being migrated holds more than one object with this id (its unique index "
                 + "dropped or bypassed), where ids are unique across a store; give one of them another id, then migrate again")
            }
            return MigrationError.value(mapping: refused.origin ?? "?", entity: refused.entity, object: refused.id, property: property, message: message)
        }
        associations = AssociationIndex(writer: writer)
        setter = RelationshipSetter(mapping: step.mapping, destinationStore: step.destination, writer: writer)
        builder = DestinationBuilder(mapping: step.mapping, destinationSchema: step.destination.schema, sourceSchema: step.source.schema, writer: writer, evaluators: evaluators)
        let (sourceFormat, destinationFormat) = (step.source.format, step.destination.format)
        builder.sourceGraph = graph
        builder.externalConversion = { CoreDataExternalValue.Conversion.between($0, of: sourceFormat, $1, of: destinationFormat, files: files) }
        sources = SourceReader(store: step.source, graph: graph, analysis: setup.analysis, evaluators: evaluators,
                               batchSize: step.batchSize, readsAhead: step.readsAhead)
        self.sourceAttached = sourceAttached
        evaluators.answerManagerCalls(with: self)
        // The run owns the setter: it is never asked once the run is gone.
        setter.sourceName = { [unowned self] destination in try? self.sourceName(of: destination) }
    }

    /// What a run needs that is worked out, and checked, before any store is touched.
    private struct Setup {
        var analysis: MigrationAnalysis
        /// One instance per entity mapping: its policy, or the default one.
        var policies: [EntityMigrationPolicy]

        init(_ step: StepMigration) throws {
            let mapping = step.mapping
            analysis = try MigrationAnalysis(mapping: mapping, source: step.source, destination: step.destination, readBefore: step.entitiesReadByEarlierPasses)
            policies = try mapping.entityMappings.map { entityMapping in
                guard let name = entityMapping.policy else { return EntityMigrationPolicy() }
                guard let made = step.policies.makePolicy(named: name) else {
                    throw MigrationError.setup("mapping '\(entityMapping.name)' names policy '\(name)', which is not registered; \(step.policies.hint(forUnknownPolicy: name))")
                }
                return made
            }
            guard mapping.destination.isEmpty || step.destination.schema.version == mapping.destination else {
                throw MigrationError.setup("the destination store is laid out for \(step.destination.schema.version), but the mapping goes to \(mapping.destination)")
            }
        }
    }

    var rowLookups: [String: RowLookup] = [:]
    /// By mapping position, then destination entity.
    var relationshipStepsByMapping: [Int: [String: [(Relationship, PropertyMapping?)]]] = [:]

    // MARK: Running

    /// The destination connection, the rows the writer holds back written first (`RowWriter.flush`).
    var db: Database {
        get throws {
            try writer.flush()
            return connection
        }
    }

    /// The destination's page cache while a join table's links are written, in KiB (SQLite's
    /// default is 2 MiB): a many-to-many's join table gets its links in its owners' order, and its
    /// index of the other side in no order (docs/performance.md). Only then: elsewhere a larger
    /// cache measured slower and 34 MB larger.
    static let joinTableCacheKiB = 32 * 1024

    /// Runs `body` with the destination's page cache at `joinTableCacheKiB` when `enlarged`, then
    /// gives it back (SQLite frees the pages beyond it).
    func withJoinTableCache<T>(if enlarged: Bool, _ body: () throws -> T) throws -> T {
        guard enlarged else { return try body() }
        let db = try self.db
        let cacheSize = try Int.fetchOne(db, sql: "PRAGMA main.cache_size")
        try db.execute(sql: "PRAGMA main.cache_size = \(-Self.joinTableCacheKiB)")
        defer { if let cacheSize { try? db.execute(sql: "PRAGMA main.cache_size = \(cacheSize)") } }
        return try body()
    }

    /// Runs a step: checks its setup, then on the destination connection (the source attached to
    /// it for the compiled path, the associations' scratch database beside it) makes the run and
    /// drives its three phases, each timed. The run and everything it holds end when this returns.
    static func run(_ step: StepMigration) throws -> MigrationSummary {
        let setup = try Setup(step)
        var seconds: [MigrationPhase: Double] = [:]
        var ledger = MigrationLedger(mappingCount: step.mapping.entityMappings.count)
        // The whole run reads its source in one read transaction: one snapshot, no transaction per
        // read (batches read ahead on another connection see the same rows: nobody can commit).
        do {
            try step.source.readingInOneTransaction { try step.destination.database.writeWithoutTransaction { db in
                try StatementCancellation.run(on: db, isCancelled: step.isCancelled) {
                    try AssociationIndex.attach(to: db)
                    defer { try? AssociationIndex.detach(from: db) }
                    var sourceAttached = false
                    // SQLite attaches only a file of the destination's text encoding (UTF-8): a
                    // UTF-16 store (valid, if rare) is read object by object, which converts its text.
                    let encoding = try step.source.reading { try String.fetchOne($0, sql: "PRAGMA encoding") }
                    if step.allowsSQL, let path = step.source.path, encoding == (try String.fetchOne(db, sql: "PRAGMA main.encoding")) {
                        try db.execute(sql: "ATTACH DATABASE ? AS \(sourceSchemaName)", arguments: [path])
                        sourceAttached = true
                    }
                    defer { if sourceAttached { try? db.execute(sql: "DETACH DATABASE \(sourceSchemaName)") } }
                    let run = MigrationRun(step: step, setup: setup, connection: db, sourceAttached: sourceAttached)
                    try run.runPhases(seconds: &seconds)
                    ledger = run.ledger
                }
            } }
        } catch let error as DatabaseError where stoppedByCancellation(error, step) {
            throw MigrationError.cancelled
        }
        return try ledger.summary(of: step.mapping, destination: step.destination.schema, phaseSeconds: seconds) { try step.destination.countObjects(of: $0, exactly: true) }
    }

    /// The three phases, timing each.
    private func runPhases(seconds: inout [MigrationPhase: Double]) throws {
        defer {
            PolicyCrash.clearReport()
            PolicyCrash.running = nil
        }
        hookLog.write = { [unowned self] object, attribute, value in
            // A transient attribute is the object's own to hold: Core Data stores none.
            if let entity = self.destinationSchema.entity(named: object.entity),
               self.destinationSchema.allAttributes(of: entity).first(where: { $0.name == attribute })?.isTransient == true { return }
            // A write the policy asked for, as `MigrationManager.setValue` counts one.
            self.policyWrites += 1
            try self.setValue(value, forKey: attribute, of: object, mapping: self.mapping.entityMappings[self.currentMapping])
        }
        hookLog.read = { [unowned self] object, attribute in
            guard let key = object.primaryKey else { return nil }
            // Rows the writer holds back are written first.
            try self.writer.flush()
            return try self.destinationStore.attributeValues(ofKey: key, entity: object.entity, in: self.connection)?[attribute]
        }
        defer { (hookLog.write, hookLog.read) = (nil, nil) }
        try hookLog.installed { try runPhasesTimed(seconds: &seconds) }
    }

    private func runPhasesTimed(seconds: inout [MigrationPhase: Double]) throws {
        var clock = Date()
        try connection.inTransaction(.deferred) {
            try CreationPhase().run(self)
            try writer.flush()
            return .commit
        }
        seconds[.create] = Date().timeIntervalSince(clock)
        clock = Date()
        try connection.inTransaction(.deferred) {
            try RelationshipPhase().run(self)
            try writer.flush()
            try destinationStore.strategy.finishWriting(connection, layout: destinationStore.layout)
            return .commit
        }
        seconds[.relate] = Date().timeIntervalSince(clock)
        clock = Date()
        ledger.validatedCounts = try ValidationPhase().run(self)
        // Validation wrote what its hooks inserted before checking it (`ValidationPhase`).
        try writer.finish()
        seconds[.validate] = Date().timeIntervalSince(clock)
    }

    func report(_ phase: MigrationPhase, _ mappingName: String?, _ completed: Int, _ total: Int?, finished: Bool = false) {
        var progress = MigrationProgress(phase: phase, mapping: mappingName, completed: completed, total: total, isFinished: finished)
        progress.mappingIndex = mappingName.flatMap { name in mapping.entityMappings.firstIndex { $0.name == name } }
        progress.mappingCount = mapping.entityMappings.count
        step.progress?(progress)
    }

    /// Whether a statement of `step` failed because `StatementCancellation` stopped it for the caller.
    static func stoppedByCancellation(_ error: DatabaseError, _ step: StepMigration) -> Bool {
        error.resultCode == .SQLITE_INTERRUPT && step.isCancelled()
    }

    /// Whether a statement of this run failed because `StatementCancellation` stopped it.
    func stoppedByCancellation(_ error: DatabaseError) -> Bool {
        Self.stoppedByCancellation(error, step)
    }

    /// Says which custom policy the run is about to call into, for a crash report: a trap in the
    /// policy's code ends the process, and the `mapc` command then writes this before the
    /// runtime's backtrace (`mapc_crash_note_install`). Nothing for a mapping without a policy.
    private func noteRunningPolicy(_ index: Int, _ doing: String) {
        guard !usesDefaultCreation[index] else {
            PolicyCrash.clearReport()
            PolicyCrash.running = nil
            return
        }
        let source = PolicyRegistry.shared.compiledSource(of: type(of: policies[index])).map { " (\($0))" } ?? ""
        let policy = "the custom policy \(type(of: policies[index])) of mapping '\(mapping.entityMappings[index].name)'"
        PolicyCrash.running = "\(policy), \(doing)"
        PolicyCrash.setReport("\(policy) crashed while \(doing). " + PolicyCrash.storeUnchanged + " The crash report below names the policy's function\(source).")
        mapc_exit_context_set("error: \(policy) ended the process (it called exit) while \(doing), before the migration finished (exit status 3). "
                              + PolicyCrash.storeUnchanged + " A policy stops a migration by throwing an error, never by exit.")
    }

    /// Stops the run when its caller asked to cancel.
    func checkCancellation() throws {
        if step.isCancelled() { throw MigrationError.cancelled }
    }

    /// Makes mapping `index` the one being worked on, `doing` what the phase says (a crash while
    /// its custom policy runs is reported as the policy's, naming it and the phase).
    func beginMapping(_ index: Int, _ doing: String) {
        currentMapping = index
        noteRunningPolicy(index, doing)
    }

    /// Calls one of mapping `index`'s policy hooks with the mapping and the run's manager,
    /// turning its failures into `MigrationError.policy`.
    func callPolicy(_ index: Int, _ hook: (EntityMigrationPolicy, EntityMapping, MigrationManager) throws -> Void) throws {
        let entityMapping = mapping.entityMappings[index]
        do {
            try hook(policies[index], entityMapping, manager)
            try finishHook(entityMapping)
        } catch { throw hookFailure(error, entityMapping, object: currentRelation?.source.ref) }
    }

    /// What a policy's hook left for the run when it returned, through subscripts that cannot
    /// throw: the first value it could not read through `SourceObject`'s (which returns nil),
    /// a key it read that a destination object's entity does not have, or a value it set on an
    /// object in the store that could not be written, fail the run naming them.
    private func finishHook(_ entityMapping: EntityMapping) throws {
        let failure = hookLog.take()
        // The log's own failures are said as this mapping's (a value the hook could not read:
        // as the policy's failure, no expression of the mapping read it).
        if case .policy("", let message)? = failure as? MigrationError { throw MigrationError.policy(mapping: entityMapping.name, message: message) }
        if let failure { throw failure }
    }

    /// Whether mapping `index`'s policy ran the default `createRelationships` in `body`: a policy
    /// saying it keeps the default is taken at its word only once it has (checked on one object).
    func runsDefaultRelationships(_ index: Int, _ body: () throws -> Void) throws -> Bool {
        try policies[index].runsDefaultRelationships(body)
    }

    /// Phase 1's hook for one source object, as `callPolicy` runs a hook, without a closure: one
    /// formed per object copied the entity mapping into it each time.
    func createDestinationInstances(_ index: Int, for source: SourceObject, mapping entityMapping: EntityMapping) throws {
        do {
            if usesDefaultCreation[index] {
                try createDestination(index, for: source, mapping: entityMapping)
            } else {
                try policies[index].createDestinationInstances(for: source, mapping: entityMapping, manager: manager)
                try finishHook(entityMapping)
            }
        } catch {
            throw hookFailure(error, entityMapping, object: source.ref)
        }
    }

    /// Per mapping position, whether its policy is the default one: its object creation
    /// `createDestination` does without going through `DestinationObject`, and its failures are
    /// mapc's own, never reported as a custom policy's.
    let usesDefaultCreation: [Bool]

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
        sources.object(data)
    }
}
