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
    /// Entity mapping positions by name, and each mapping's identity suffix: fixed for a run.
    let indexByName: [String: Int]
    /// The entity mappings' names by position.
    private let mappingNames: [String]
    private let identitySuffixes: [String]
    let policies: [EntityMigrationPolicy]
    let evaluators: [Evaluator]
    private let startDate = Date()

    // Per-run state, valid while `run()` executes.
    private var connection: Database?
    private var rowWriter: RowWriter?
    /// Whether the source store is attached to the destination connection as `mapc_source`.
    var sourceAttached = false
    /// Objects created by each mapping.
    var created: [Int]
    /// What ran as SQL: mapping names, and "Name.relationships".
    var compiledWork: [String] = []
    /// Mappings whose relationships were set while their objects were created.
    var relationshipsDone: Set<Int> = []
    /// Mappings that have created all their objects (phase 1 is past them).
    var creationFinished: Set<Int> = []
    /// The mapping being worked on.
    var currentMapping = 0
    /// The objects of each entity that validation counted, and the connection's change count then
    /// (validation checks again what a hook wrote after it): the summary's counts.
    var validatedCounts: (objects: [String: Int], changes: Int)?
    /// The destination object being related in phase 2, with its source object.
    var currentRelation: (destination: StoredKey, source: SourceObject)?
    /// The key rules of the declarative mappings that have started, by mapping position.
    private(set) var keyRules: [Int: KeyRule] = [:]
    /// The mappings whose objects anything may look up by source object (`$manager` calls naming
    /// them, policies, copied relationships); nil when that may be any. Objects of a mapping
    /// nobody looks up, created by SQL with its relationships, record no associations.
    lazy var lookedUpMappings: Set<Int>? = Self.lookedUpMappings(in: mapping)
    /// Per mapping position, the source properties phase 1 and phase 2 read (nil: all of them).
    /// Phase 1 reads those of the relationships it writes with the rows too.
    lazy var creationProperties: [Set<String>?] = mapping.entityMappings.indices.map { index in
        let entityMapping = mapping.entityMappings[index]
        guard relationshipsAtCreation[index] else { return SourceProjection.creation(entityMapping) }
        guard let attributes = SourceProjection.creation(entityMapping), let relationships = SourceProjection.relationships(entityMapping) else { return nil }
        return attributes.union(relationships)
    }
    lazy var relationshipProperties: [Set<String>?] = mapping.entityMappings.map(SourceProjection.relationships)
    /// Per mapping position, its filter when it is a nil test of a source attribute.
    lazy var nilTests: [NilTest?] = mapping.entityMappings.map { entityMapping in entityMapping.filter.flatMap { nilTest($0.expression, in: entityMapping) } }
    /// Per mapping position, whether the interpreter writes the mapping's relationships with its rows.
    lazy var relationshipsAtCreation: [Bool] = mapping.entityMappings.indices.map(writesRelationshipsAtCreation)
    /// The relationships being written with the rows, by mapping position, once the mapping starts.
    var creationLinks: [Int: CreationLinks] = [:]
    /// Per destination table, the key ranges of compiled creations that recorded no associations,
    /// with their mappings: enough to say which mapping made an object.
    var unrecordedBlocks: [(table: String, range: ClosedRange<Int64>, mapping: Int)] = []
    /// Per destination table whose mappings keep their source keys: the source table, the
    /// entities read so far and the range set aside.
    private var keptKeys: [String: (sourceTable: String, entities: Set<String>, range: ClosedRange<Int64>)] = [:]
    private var attributePlans: [String: AttributePlan] = [:]
    /// The plan asked for last: objects come mapping by mapping, so it is found without hashing.
    private var lastAttributePlan: (index: Int, entity: String, plan: AttributePlan)?
    /// The objects each mapping's evaluator has bound to `$source` and `$destination`.
    private var bound: [(source: ObjectRef?, destination: ObjectRef?)]
    /// Per destination entity: its stored attributes' types and defaults, for checking what policies set.
    private var storedAttributes: [String: (types: [String: AttributeType], defaults: [(String, Value)])] = [:]

    /// Mappings whose associations are not one per object of the mapping's own entities: an
    /// object of another entity, one made from a source of another entity, or one a policy
    /// associated itself (`associate`, which may give an object a second source). SQL would relate
    /// their objects differently from `createRelationships` once per association, so they are
    /// related one by one.
    private(set) var irregularAssociations: Set<Int> = []

    static let sourceSchemaName = "mapc_source"
    static let associations = "mapc_scratch.assoc"
    /// The associations table and its indexes: by source (`$manager` lookups) and by destination
    /// (which mapping made an object).
    static let associationsSchema = [
        """
        CREATE TABLE \(associations) (mapping INTEGER NOT NULL, source INTEGER NOT NULL, source_entity TEXT NOT NULL, \
        destination INTEGER NOT NULL, entity TEXT NOT NULL, id TEXT)
        """,
        "CREATE INDEX mapc_scratch.assoc_source ON assoc (mapping, source)",
        "CREATE INDEX mapc_scratch.assoc_destination ON assoc (destination, entity)",
    ]
    /// The number of associations a mapping recorded (from the index by mapping).
    func associationCount(of index: Int) throws -> Int {
        try Int.fetchOne(try writer.statement("SELECT count(*) FROM \(Self.associations) WHERE mapping = ?", scratch: true), arguments: [index]) ?? 0
    }

    /// Where a mapping's associations lie: the row before its first, and its last.
    static let associationsRange = "SELECT min(rowid) - 1, max(rowid) FROM \(associations) WHERE mapping = ?"
    /// A batch of a mapping's associations in the order they were recorded, after a row and up to
    /// its last: a range of rows read in order. A mapping's rows are recorded together, so the range
    /// holds few others. Left to itself SQLite would take the `(mapping, source)` index and read and
    /// sort every row of the mapping for each batch, which made the relate phase quadratic in the
    /// objects a policy made.
    static let associationsBatch = "SELECT rowid, source_entity, source, entity, destination, id FROM \(associations) NOT INDEXED WHERE rowid > ? AND rowid <= ? AND mapping = ? ORDER BY rowid LIMIT ?"
    /// One recorded association: its row, the source object, and the destination object with its
    /// stored identity (nil in formats that keep none).
    struct Association {
        var row: Int64
        var source: StoredKey
        var destination: StoredKey
        var id: String?
    }

    /// Calls `body` with a mapping's associations in the order they were recorded, `size` at a
    /// time, after the row `after` when given: those recorded when the call starts, not the ones
    /// `body` may record. `body` returns whether to go on.
    static func forEachAssociationBatch(of mapping: Int, size: Int, after: Int64? = nil, in db: Database, _ body: ([Association]) throws -> Bool) throws {
        guard let range = try Row.fetchOne(db.cachedStatement(sql: associationsRange), arguments: [mapping]),
              let first: Int64 = try range.storedIfPresent(0, "a row number"), let end: Int64 = try range.storedIfPresent(1, "a row number") else { return }
        var last = max(first, after ?? first)
        let statement = try db.cachedStatement(sql: associationsBatch)
        let columns = StatementColumns(statement)
        while true {
            var batch: [Association] = []
            batch.reserveCapacity(size)
            let rows = try Row.fetchCursor(statement, arguments: [last, end, mapping, size])
            while try rows.next() != nil {
                batch.append(Association(row: try columns.integer(0, "a row number"),
                                         source: StoredKey(entity: try columns.text(1, "an entity name"), key: try columns.integer(2, "a row key")),
                                         destination: StoredKey(entity: try columns.text(3, "an entity name"), key: try columns.integer(4, "a row key")),
                                         id: try columns.textIfPresent(5, "an object id")))
            }
            guard let final = batch.last else { return }
            last = final.row
            guard try body(batch) else { return }
        }
    }

    init(step: StepMigration) throws {
        self.step = step
        sourceStore = step.source
        destinationStore = step.destination
        destinationSchema = step.destination.schema
        mapping = step.mapping
        sourceGraph = StoreObjectGraph(store: step.source, readsMigrationSource: true)
        mappingNames = mapping.entityMappings.map(\.name)
        // Lookups, associations and messages name mappings: two of one name would be mixed up
        // (the loader refuses them; a model made in code may not have been loaded).
        if let repeated = Dictionary(grouping: mappingNames, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            throw MigrationError.setup("two entity mappings are named '\(repeated)'; give each mapping of the model a name of its own")
        }
        indexByName = Dictionary(mapping.entityMappings.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        identitySuffixes = mapping.entityMappings.enumerated().map { index, entityMapping in
            let first = step.mapping.entityMappings.firstIndex { $0.source == entityMapping.source && $0.type != .remove }
            return first == index ? "" : ".\(entityMapping.name)"
        }
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
        created = Array(repeating: 0, count: mapping.entityMappings.count)
        bound = Array(repeating: (nil, nil), count: mapping.entityMappings.count)
        guard mapping.destination.isEmpty || step.destination.schema.version == mapping.destination else {
            throw MigrationError.setup("the destination store is laid out for \(step.destination.schema.version), but the mapping goes to \(mapping.destination)")
        }
    }

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
        var counts: [(String, Int)] = []
        for entity in destinationSchema.entities {
            counts.append((entity.name, try validatedCounts?.objects[entity.name] ?? destinationStore.count(of: entity.name, exactly: true)))
        }
        return MigrationSummary(sourceVersion: mapping.source, destinationVersion: mapping.destination,
                                created: ObjectCounts(zip(mapping.entityMappings, created).map { ($0.name, $1) }), phaseSeconds: seconds, destinationCounts: ObjectCounts(counts),
                                compiled: compiledWork)
    }

    /// The three phases on the destination connection, timing each.
    private func run(on db: Database, seconds: inout [MigrationPhase: Double]) throws {
        connection = db
        validatedCounts = nil
        // A refused row is named with the mapping that made it, wherever the writer finds out.
        rowWriter = RowWriter(store: destinationStore, db: db, buffersRows: true) { refused in
            let (property, message) = switch refused.reason {
            case .uniqueness(let problem): (problem.key ?? "", problem.message)
            case .identityTaken: ("id", "another destination object already has id '\(refused.id)'; a policy creating several objects per source object must give each its own id")
            }
            return MigrationError.value(mapping: refused.origin ?? "?", entity: refused.entity, object: refused.id, property: property, message: message)
        }
        defer { connection = nil; rowWriter = nil }
        try db.execute(sql: "ATTACH DATABASE '' AS mapc_scratch")
        defer { try? db.execute(sql: "DETACH DATABASE mapc_scratch") }
        for statement in Self.associationsSchema { try db.execute(sql: statement) }
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
    private func stoppedByCancellation(_ error: DatabaseError) -> Bool {
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
    private func hookFailure(_ error: any Error, _ entityMapping: EntityMapping, object: ObjectRef?) -> any Error {
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
        if currentMapping < mappingNames.count, mappingNames[currentMapping] == entityMapping.name {
            return currentMapping
        }
        return indexByName[entityMapping.name] ?? currentMapping
    }

    /// The position of the entity mapping named in a `$manager` call, or an error suggesting the closest name.
    private func index(ofMappingNamed name: String) throws -> Int {
        guard let index = indexByName[name] else {
            throw MapcError.notFound("no entity mapping named '\(name)'" + (Suggestions.didYouMean(name, in: mapping.entityMappings.map(\.name)).map { "; \($0)" } ?? ""))
        }
        return index
    }

    /// The suffix the identity rule adds to a source id for a mapping: none for the first mapping
    /// reading its source entity, `.MappingName` for later ones, so ids stay unique and predictable
    /// in formats that keep identities.
    func identitySuffix(_ index: Int) -> String {
        identitySuffixes[index]
    }

    /// A source object as policies see it.
    func sourceObject(_ data: ObjectData) -> SourceObject {
        sourceGraph.remember(data)
        return SourceObject(data: data, graph: sourceGraph)
    }

    // MARK: Building destination objects (for policies)

    /// A destination object for a source object: the mapping's destination entity (or `entity`),
    /// with every attribute expression evaluated and defaults for the rest. Its identity is the
    /// source's for the first mapping reading that source entity, `sourceID.MappingName` otherwise
    /// (kept by formats that store identities; others identify it by its key once inserted).
    public func makeDestination(for source: SourceObject, mapping entityMapping: EntityMapping, entity: String? = nil) throws -> DestinationObject {
        let index = mappingIndex(entityMapping)
        guard let entityName = entity ?? entityMapping.destination else {
            throw MigrationError.setup("mapping '\(entityMapping.name)' has no destination entity in \(destinationSchema.version)")
        }
        let plan = try attributePlan(index, entityName)
        let id = source.data.id + identitySuffix(index)
        let row = try destinationValues(plan, for: source, destination: ObjectRef(entity: entityName, id: id), mapping: entityMapping)
        return destinationObject(plan, entity: entityName, id: id, row)
    }

    /// A destination object of values in its plan's order.
    private func destinationObject(_ plan: AttributePlan, entity: String, id: String, _ row: (values: [Value], storable: Bool)) -> DestinationObject {
        // Made at its final size (`reserveCapacity` is not specialised across modules: it looked
        // up generic metadata per object).
        var attributes = [String: Value](minimumCapacity: plan.steps.count)
        for (step, value) in zip(plan.steps, row.values) { attributes[step.name] = value }
        var destination = DestinationObject(entity: entity, id: id, attributes: attributes)
        destination.attributeTypes = plan.types
        destination.isStorable = row.storable
        return destination
    }

    /// The values a mapping gives a destination object's stored attributes, in the plan's order
    /// (the entity's stored attributes'), and whether each is already of its attribute's type, so
    /// that the row is written as it is. An abstract entity's objects are never storable: `write`
    /// refuses them.
    private func destinationValues(_ plan: AttributePlan, for source: SourceObject, destination: ObjectRef, mapping entityMapping: EntityMapping) throws -> (values: [Value], storable: Bool) {
        var values = [Value](repeating: .null, count: plan.steps.count)
        var storable = plan.isConcrete
        for (position, step) in plan.steps.enumerated() {
            // A `$source.key` value as read is taken first: the expression is not even copied.
            var result: EvalValue?
            if let attribute = step.sourceAttribute, let stored = source.data.attributes[attribute] {
                result = .scalar(stored)
            } else if let expression = step.expression {
                result = try evaluate(expression, for: source, destination: destination, mapping: entityMapping, property: step.name) { try $0.evaluate($1) }
            }
            if let result {
                switch ValueCoercion.coerce(result, to: step.type) {
                case .success(let value): values[position] = value
                case .failure(let problem):
                    throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: step.name,
                                               message: "\(problem.message) (from source object \(source.ref))")
                }
            } else if step.copies, let value = source.data.attributes[step.name] {
                // Copied as read; a value of another type is for `write` to coerce or refuse.
                values[position] = value
                if case .success(let coerced) = ValueCoercion.coerce(.scalar(value), to: step.type), coerced == value {} else { storable = false }
            } else {
                values[position] = step.defaultValue
                storable = storable && step.defaultIsStorable
            }
        }
        return (values, storable)
    }

    /// What the default policy's `createDestinationInstances` does (`makeDestination`, then
    /// `insert`), with the values kept in the row's order from the expressions to the statement:
    /// no dictionary of them per object. An object whose values need coercing goes the long way.
    private func createDestination(_ index: Int, for source: SourceObject, mapping entityMapping: EntityMapping) throws {
        guard let entityName = entityMapping.destination else {
            _ = try makeDestination(for: source, mapping: entityMapping)   // throws its error
            return
        }
        let plan = try attributePlan(index, entityName)
        let id = source.data.id + identitySuffix(index)
        let row = try destinationValues(plan, for: source, destination: ObjectRef(entity: entityName, id: id), mapping: entityMapping)
        guard row.storable, plan.matchesInsertOrder else {
            try insert(destinationObject(plan, entity: entityName, id: id, row), associatedWith: source, mapping: entityMapping)
            return
        }
        _ = try insertRow(index, from: source, entity: entityName, id: id, values: row.values, mapping: entityMapping)
    }

    /// How one destination attribute gets its value in a mapping: an expression, a copy, or the
    /// default. A class: the steps are walked for every object, and a reference is one retain
    /// where a struct of these fields was a copy of each.
    private final class AttributeStep {
        let name: String
        let type: AttributeType
        let expression: MappingExpression?
        /// For an expression `$source.name`: the attribute read. Its value is the one the source
        /// object was read with (what the evaluator's key path would find), taken without
        /// evaluating; an object read without it (a transient, a relationship) goes through the evaluator.
        let sourceAttribute: String?
        let copies: Bool
        let defaultValue: Value
        /// Whether the default is already of the attribute's type (so `write` need not coerce it).
        let defaultIsStorable: Bool

        init(name: String, type: AttributeType, expression: MappingExpression?, sourceAttribute: String?, copies: Bool, defaultValue: Value) {
            self.name = name
            self.type = type
            self.expression = expression
            self.sourceAttribute = sourceAttribute
            self.copies = copies
            self.defaultValue = defaultValue
            if case .success(let coerced) = ValueCoercion.coerce(.scalar(defaultValue), to: type) { defaultIsStorable = coerced == defaultValue } else { defaultIsStorable = false }
        }
    }

    /// A mapping's attribute steps for one destination entity, with the entity's attribute types.
    private struct AttributePlan {
        var steps: [AttributeStep]
        var types: [String: AttributeType]
        var isConcrete: Bool
        /// Whether the steps are in the order the entity's rows take their values (they are the
        /// same stored attributes; a row's values need no reordering).
        var matchesInsertOrder: Bool
    }

    /// Per mapping and destination entity, worked out once rather than per object.
    private func attributePlan(_ index: Int, _ entityName: String) throws -> AttributePlan {
        if let last = lastAttributePlan, last.index == index, last.entity == entityName { return last.plan }
        let key = "\(index)/\(entityName)"
        if let plan = attributePlans[key] {
            lastAttributePlan = (index, entityName, plan)
            return plan
        }
        guard let destinationEntity = destinationSchema.entity(named: entityName) else {
            throw MigrationError.setup("mapping '\(mapping.entityMappings[index].name)' has no destination entity '\(entityName)' in \(destinationSchema.version)")
        }
        let entityMapping = mapping.entityMappings[index]
        let steps = destinationSchema.allAttributes(of: destinationEntity).filter { !$0.isTransient }.map { attribute in
            let expression = entityMapping.attributeMapping(named: attribute.name)?.expression
            return AttributeStep(name: attribute.name, type: attribute.type, expression: expression, sourceAttribute: expression.flatMap { sourceAttribute(read: $0.expression, in: entityMapping) },
                                 copies: entityMapping.type == .copy, defaultValue: attribute.defaultValue ?? .null)
        }
        let rowOrder = destinationEntity.isAbstract ? [] : try writer.insertPlan(entityName).attributeNames
        let plan = AttributePlan(steps: steps, types: Dictionary(steps.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first }), isConcrete: !destinationEntity.isAbstract,
                                 matchesInsertOrder: !destinationEntity.isAbstract && rowOrder == steps.map(\.name))
        attributePlans[key] = plan
        lastAttributePlan = (index, entityName, plan)
        return plan
    }

    /// The key of an expression `$source.key` (one key after the source variable) when it names a
    /// stored attribute of the mapping's source entity (so of its sub-entities too), else nil: only
    /// such a value is in a source object as read, exactly as the evaluator would find it.
    func sourceAttribute(read expression: Expr, in entityMapping: EntityMapping) -> String? {
        guard case .keyPath(let root, let components) = expression.kind, root.kind == .variable("source") || root.kind == .evaluatedObject,
              components.count == 1, case .key(let key, _) = components[0],
              let sourceName = entityMapping.source, let entity = sourceStore.schema.entity(named: sourceName),
              case .attribute(let attribute)? = sourceStore.schema.property(named: key, in: entity), !attribute.isTransient else { return nil }
        return key
    }

    /// Writes a destination object and records that `mapping` created it from `source`.
    @discardableResult
    public func insert(_ destination: DestinationObject, associatedWith source: SourceObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        let row = try rowValues(of: destination, mapping: entityMapping)
        let key = try insertRow(mappingIndex(entityMapping), from: source, entity: destination.entity, id: destination.id, values: row.values, mapping: entityMapping)
        return try stored(row.object, under: key)
    }

    /// A destination object made storable (its values coerced, when anything but `makeDestination`
    /// set them) and its values in the order its row takes them.
    private func rowValues(of destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> (object: DestinationObject, values: [Value]) {
        var storable = destination
        if !destination.isStorable { storable.attributes = try storableAttributes(of: destination, mapping: entityMapping) }
        return (storable, try writer.insertPlan(destination.entity).attributeNames.map { storable.attributes[$0] ?? .null })
    }

    /// An object as inserted under `key`: with its key and the identity it is stored under.
    private func stored(_ object: DestinationObject, under key: Int64) throws -> DestinationObject {
        var inserted = object
        inserted.primaryKey = key
        inserted.id = try storedID(entity: object.entity, key: key, id: object.id)
        return inserted
    }

    /// Writes the row of an object a mapping creates from a source object, values in the order
    /// of the entity's stored attributes: under the key the mapping's rule gives (the rule is then
    /// the association), with the relationships written with the rows, and otherwise recording
    /// its association when anything may ask for it. Returns the object's key.
    private func insertRow(_ index: Int, from source: SourceObject, entity: String, id: String, values: [Value], mapping entityMapping: EntityMapping) throws -> Int64 {
        try checkIdentity(id, of: entity, mapping: entityMapping)
        var ruleKey: Int64?
        if let rule = keyRules[index], let sourceKey = source.data.key, rule.sourceEntities.contains(source.data.entity),
           destinationStore.layout.entities[entity]?.table == rule.table, let key = rule.destinationKey(ofSource: sourceKey) {
            ruleKey = key
        }
        var key = ruleKey
        var links: (plan: RowWriter.InsertPlan, targets: [Int64?])?
        if creationLinks[index] != nil {
            // Named as it is stored, as phase 2 names it in its errors: its key comes first.
            let chosen = try ruleKey ?? writer.reserveKeys(1, for: destinationStore.layout.storage(of: entity))
            key = chosen
            links = try linksAtCreation(index, for: source, destination: ObjectRef(entity: entity, id: try storedID(entity: entity, key: chosen, id: id), key: chosen),
                                        mapping: entityMapping)
        }
        let inserted = try writeRow(entity: entity, id: id, values: values, key: key, links: links, mapping: entityMapping)
        if ruleKey == nil {
            if recordsAssociations(index, relationshipsDone: relationshipsDone.contains(index)) {
                var object = DestinationObject(entity: entity, id: try storedID(entity: entity, key: inserted, id: id))
                object.primaryKey = inserted
                try associate(source: source.ref, destination: &object, mapping: entityMapping)
            } else if let table = destinationStore.layout.entities[entity]?.table {
                // Nobody looks the object up and phase 2 has nothing to set: its key is enough to
                // say which mapping made it.
                noteUnrecorded(inserted, in: table, by: index)
            }
        }
        created[index] += 1
        return inserted
    }

    /// An inserted object's identity: the one it was given, where the format keeps identities,
    /// otherwise the one its key makes.
    private func storedID(entity: String, key: Int64, id: String) throws -> String {
        destinationStore.strategy.objectID(entity: entity, key: key, stored: try writer.keepsIdentity(of: entity) ? id : nil)
    }

    /// Records that a mapping made the object under `key` in `table` without recording its
    /// association: consecutive keys extend the mapping's last block.
    func noteUnrecorded(_ key: Int64, in table: String, by index: Int) {
        if let last = unrecordedBlocks.last, last.table == table, last.mapping == index, last.range.upperBound == key - 1 {
            unrecordedBlocks[unrecordedBlocks.count - 1].range = last.range.lowerBound...key
        } else {
            unrecordedBlocks.append((table, key...key, index))
        }
    }

    /// Writes a new destination object that no source object is migrated into, as a Core Data
    /// policy inserts a new object into the destination context (a `Continent` made once for
    /// many countries). It counts as created by the mapping; `setRelationship` links it.
    @discardableResult
    public func insert(_ destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        let inserted = try write(destination, mapping: entityMapping)
        created[mappingIndex(entityMapping)] += 1
        return inserted
    }

    /// Writes a destination object under a key handed out now.
    private func write(_ destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        let row = try rowValues(of: destination, mapping: entityMapping)
        try checkIdentity(destination.id, of: destination.entity, mapping: entityMapping)
        return try stored(row.object, under: try writeRow(entity: destination.entity, id: destination.id, values: row.values, mapping: entityMapping))
    }

    /// Refuses an identity the destination format would store cut short.
    private func checkIdentity(_ id: String, of entity: String, mapping entityMapping: EntityMapping) throws {
        guard try writer.keepsIdentity(of: entity), ValueLimits.containsNUL(id) else { return }
        throw MigrationError.value(mapping: entityMapping.name, entity: entity, object: id, property: "id",
                                   message: "an id cannot contain the NUL character (U+0000): SQLite would cut it short there")
    }

    /// Inserts the row of a destination object (values in the order of its entity's stored
    /// attributes, each storable, its identity checked) under `key` or a key handed out now, with
    /// the relationships written with the row; a refused constraint named.
    private func writeRow(entity: String, id: String, values: [Value], key chosen: Int64? = nil, links: (plan: RowWriter.InsertPlan, targets: [Int64?])? = nil,
                          mapping entityMapping: EntityMapping) throws -> Int64 {
        let plan = try links?.plan ?? writer.insertPlan(entity)
        do {
            // A row a constraint refuses is named by the writer, maybe later (it holds rows back).
            return try writer.insert(plan, entity: entity, id: id, values: values, key: chosen, linkedTo: links?.targets ?? [], origin: entityMapping.name)
        } catch let error as RowWriter.UnstorableValue {
            throw MigrationError.value(mapping: entityMapping.name, entity: entity, object: id, property: error.property, message: error.problem)
        }
    }

    /// The object's attribute values coerced to their attributes' types, or an error naming the
    /// object, the attribute and the value that does not fit (a policy may set anything).
    private func storableAttributes(of destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> [String: Value] {
        func refuse(_ property: String, _ message: String) -> MigrationError {
            MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: property, message: message)
        }
        if let (name, reason) = destination.rejected.min(by: { $0.key < $1.key }) { throw refuse(name, reason) }
        let (types, defaults) = try storedAttributes(of: destination.entity, mapping: entityMapping)
        var result: [String: Value] = [:]
        result.reserveCapacity(defaults.count)
        for (name, value) in defaults where destination.attributes[name] == nil { result[name] = value }
        for (name, value) in destination.attributes {
            guard let type = types[name] else { throw refuse(name, "\(destination.entity) has no stored attribute '\(name)'") }
            switch ValueCoercion.coerce(.scalar(value), to: type) {
            case .success(let coerced): result[name] = coerced
            case .failure(let problem): throw refuse(name, "\(value) cannot be stored: \(problem.message)")
            }
        }
        return result
    }

    /// A concrete destination entity's stored attributes: types and defaults, worked out once.
    private func storedAttributes(of entityName: String, mapping entityMapping: EntityMapping) throws -> (types: [String: AttributeType], defaults: [(String, Value)]) {
        if let known = storedAttributes[entityName] { return known }
        guard let entity = destinationSchema.entity(named: entityName), !entity.isAbstract else {
            throw MigrationError.setup("mapping '\(entityMapping.name)' creates \(entityName) objects, but \(destinationSchema.version) has no such concrete entity")
        }
        let stored = destinationSchema.allAttributes(of: entity).filter { !$0.isTransient }
        let known = (Dictionary(stored.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first }), stored.map { ($0.name, $0.defaultValue ?? .null) })
        storedAttributes[entityName] = known
        return known
    }

    /// Records that `mapping` created `destination` from `source` (`NSMigrationManager.associate`).
    public func associate(source: ObjectRef, destination: DestinationObject, mapping entityMapping: EntityMapping) throws {
        // The object may have a source already: several sources relate it several times.
        irregularAssociations.insert(mappingIndex(entityMapping))
        var copy = destination
        try associate(source: source, destination: &copy, mapping: entityMapping)
    }

    private func associate(source: ObjectRef, destination: inout DestinationObject, mapping entityMapping: EntityMapping) throws {
        guard let key = destination.primaryKey else { throw MigrationError.setup("associate an object after inserting it") }
        guard let sourceKey = try sourceKey(of: source) else { throw MigrationError.setup("\(source) is not in the source store") }
        let stored = try destinationStore.layout.storage(of: destination.entity).idColumn == nil ? nil : destination.id
        if destination.entity != entityMapping.destination || source.entity != entityMapping.source {
            irregularAssociations.insert(mappingIndex(entityMapping))
        }
        try writer.writeStatement("INSERT INTO \(Self.associations) (mapping, source, source_entity, destination, entity, id) VALUES (?, ?, ?, ?, ?, ?)", scratch: true)
            .execute([mappingIndex(entityMapping).databaseValue, sourceKey.databaseValue, source.entity.databaseValue, key.databaseValue,
                      destination.entity.databaseValue, stored.databaseValue])
    }

    // MARK: Which objects are looked up

    /// The mappings named by `$manager` lookups in the model's expressions; nil when lookups may
    /// reach any mapping: a custom policy (its code may ask anything), a lookup by source
    /// relationship or by destination object, a mapping name that is not a literal, or a `copy`
    /// mapping (it carries relationships over through whichever mapping migrated the targets).
    static func lookedUpMappings(in mapping: MappingModel) -> Set<Int>? {
        var named: Set<Int> = []
        let index = Dictionary(mapping.entityMappings.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        for entityMapping in mapping.entityMappings {
            if entityMapping.policy != nil || entityMapping.type == .copy { return nil }
            let expressions = (entityMapping.attributes + entityMapping.relationships).map(\.expression.expression)
                + [entityMapping.filter?.expression, entityMapping.sourceExpression?.expression].compactMap { $0 }
            var pending = expressions
            while let expression = pending.popLast() {
                pending += expression.children
                guard case .method(let receiver, let selector, _, let arguments) = expression.kind, receiver.kind == .variable("manager") else { continue }
                switch selector {
                case MethodSelector.destinationInstancesForEntityMapping.rawValue:
                    guard case .literal(.string(let name))? = arguments.first?.kind, let position = index[name] else { return nil }
                    named.insert(position)
                case MethodSelector.fetchRequestForSourceEntity.rawValue:
                    // The predicate is evaluated with `$manager` bound too: its lookups count.
                    guard let predicate = fetchPredicate(arguments) else { return nil }
                    pending.append(predicate)
                default:
                    return nil
                }
            }
        }
        return named
    }

    /// The predicate of a `fetchRequestForSourceEntityNamed:predicateString:` call's arguments,
    /// parsed: the fetch evaluates it per object with the mapping's variables (`$manager`,
    /// `$source`) bound, so what it looks up counts as the mapping's. Nil when the string is not
    /// a literal or does not parse; the analyses then assume the worst.
    static func fetchPredicate(_ arguments: [Expr]) -> Expr? {
        guard arguments.count == 2, case .literal(.string(let text)) = arguments[1].kind, case .success(let predicate) = ExpressionParser.parse(text) else { return nil }
        return predicate
    }

    /// Whether an entity of the source has its table to itself. Every row of the source is of an
    /// entity the schema has (`Store.checkEveryRowIsRecognised`, before any step), so such a table's
    /// rows are all that entity's, and SQLite counts them from an index without reading them.
    func isAloneInItsTable(_ storage: EntityStorage) -> Bool {
        sourceStore.layout.entities.values.filter { $0.table == storage.table }.count == 1
    }

    /// The number of source objects of exactly one entity: the progress total of a mapping that
    /// reads them. Without the shortcut, a scan of the whole table per mapping.
    func sourceCount(ofExactEntity entity: String) throws -> Int {
        guard let storage = sourceStore.layout.entities[entity], isAloneInItsTable(storage) else {
            return try sourceStore.count(of: entity, exactly: true)
        }
        return try sourceStore.reading { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(storage.table.quotedDatabaseIdentifier)") ?? 0 }
    }

    /// Whether a mapping's objects must record their associations: someone may look them up, or
    /// its relationships are set in phase 2 (which finds each object's source that way).
    func recordsAssociations(_ index: Int, relationshipsDone: Bool) -> Bool {
        if let looked = lookedUpMappings, !looked.contains(index), relationshipsDone || mapping.entityMappings[index].relationships.isEmpty { return false }
        return true
    }

    // MARK: Key rules

    /// How a declarative mapping's destination keys follow from its source keys: `destination =
    /// source + offset`, every key of `range` in `table` set aside for the mapping. Mappings that
    /// read different entities of one source table into one destination table share an offset of
    /// 0 and one range: they keep the source's keys (as Core Data's lightweight migration keeps
    /// `Z_PK`), and a destination key still has one source object, whose entity tells the mapping.
    struct KeyRule {
        /// The source table the mapping reads.
        var sourceTable: String
        /// The entities of the source table it reads, and their discriminators.
        var sourceEntities: [String]
        var sourceDiscriminators: [DatabaseValue]
        /// The destination table its objects go to.
        var table: String
        var offset: Int64
        /// The destination keys set aside for it.
        var range: ClosedRange<Int64>
        /// The destination entity of its objects.
        var entity: String
        /// Whether every object of its source entities has an object of the mapping (no filter,
        /// no fetch): then `source key + offset` is an object's key without looking.
        var isComplete: Bool

        func destinationKey(ofSource key: Int64) -> Int64? {
            let (sum, overflow) = key.addingReportingOverflow(offset)
            return overflow || !range.contains(sum) ? nil : sum
        }
    }

    /// Whether a mapping creates exactly one destination object of its destination entity per
    /// source object it reads, all from one source table: no custom policy, and its sources are its
    /// source entity or Xcode's standard fetch of a hierarchy.
    func followsKeyRule(_ index: Int) -> Bool {
        let entityMapping = mapping.entityMappings[index]
        guard entityMapping.policy == nil, entityMapping.type == .transform || entityMapping.type == .copy,
              entityMapping.destination != nil, entityMapping.source != nil else { return false }
        return entityMapping.sourceExpression.map { CreationPhase.standardFetch($0.expression) != nil } ?? true
    }

    /// Fixes a declarative mapping's key rule as it starts. When the step keeps keys (an inferred
    /// step, as Core Data's lightweight migration keeps `Z_PK`) the source's keys are kept where
    /// they are free, and otherwise moved to a range of their own. Otherwise (a mapping model's
    /// step) keys are numbered from the table's first free key in creation order, as Core Data's
    /// migration manager numbers new objects, and a rule exists only where that numbering is
    /// arithmetic: the mapping reads every row of a source table whose keys have no gaps. Nil for
    /// other mappings, for a source with no objects, and where keys would not fit in 64 bits: their
    /// objects record associations.
    func startKeyRule(_ index: Int) throws -> KeyRule? {
        guard followsKeyRule(index) else { return nil }
        let entityMapping = mapping.entityMappings[index]
        let read: String
        var entities: [String]
        if let fetch = entityMapping.sourceExpression.flatMap({ CreationPhase.standardFetch($0.expression) }) {
            guard let root = sourceStore.schema.entity(named: fetch.entity) else { return nil }
            read = fetch.entity
            entities = sourceStore.schema.hierarchy(under: root).filter { !$0.isAbstract }.map(\.name)
        } else {
            read = entityMapping.source ?? ""
            entities = [read]
        }
        guard let destinationName = entityMapping.destination, let sourceStorage = sourceStore.layout.entities[read],
              let destinationStorage = destinationStore.layout.entities[destinationName] else { return nil }
        entities = entities.filter { sourceStore.layout.entities[$0]?.table == sourceStorage.table }
        // A mapping model's step numbers a filtered or fetched mapping's objects through associations.
        if !step.keepsKeys, entityMapping.filter != nil || entityMapping.sourceExpression != nil { return nil }
        let bounds = try sourceStore.reading { db in
            // Each in a query of its own: SQLite reads a lone min() or max() of the key from one end
            // of the table, but scans every row for both together.
            let key = sourceStorage.primaryKey.quotedDatabaseIdentifier, table = sourceStorage.table.quotedDatabaseIdentifier
            return try Row.fetchOne(db, sql: "SELECT (SELECT min(\(key)) FROM \(table)), (SELECT max(\(key)) FROM \(table))")
        }
        guard let bounds, let low: Int64 = try bounds.storedIfPresent(0, "a row key"), let high: Int64 = try bounds.storedIfPresent(1, "a row key") else { return nil }
        let discriminators = entities.compactMap { sourceStore.layout.entities[$0]?.discriminator }
        let isComplete = entityMapping.filter == nil && entityMapping.sourceExpression == nil
        let first = try writer.reserveKeys(0, for: destinationStorage)
        let table = destinationStorage.table
        let rule: KeyRule
        if !step.keepsKeys {
            // Numbered from the table's first free key in creation order, as Core Data's migration
            // manager numbers new objects: a rule only when the mapping reads every row of a source
            // table whose keys have no gaps (otherwise the objects record associations).
            // Every row is the mapping's entity when the table holds no other; otherwise count them.
            // A table's own count is SQLite's quick `count(*)` (from its smallest index); with a
            // second column the query scans every row.
            let counts: (total: Int64, read: Int64)?
            if isAloneInItsTable(sourceStorage) {
                let total = Int64(try sourceCount(ofExactEntity: read))
                counts = (total, total)
            } else {
                let row = try sourceStore.reading { db in
                    try Row.fetchOne(db, sql: "SELECT count(*), count(CASE WHEN \(sourceStorage.entityColumn.quotedDatabaseIdentifier) = ? THEN 1 END) FROM \(sourceStorage.table.quotedDatabaseIdentifier)",
                                     arguments: [sourceStorage.discriminator])
                }
                counts = try row.flatMap { row in
                    guard let total: Int64 = try row.storedIfPresent(0, "a count"), let read: Int64 = try row.storedIfPresent(1, "a count") else { return nil }
                    return (total, read)
                }
            }
            guard let counts, counts.total == counts.read, high.subtractingReportingOverflow(low) == (counts.total - 1, false) else { return nil }
            let (offset, o1) = first.subtractingReportingOverflow(low)
            let (last, o2) = high.addingReportingOverflow(offset)
            guard !o1, !o2 else { return nil }
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: offset, range: first...last, entity: destinationName, isComplete: isComplete)
        } else if let shared = keptKeys[table], shared.sourceTable == sourceStorage.table, shared.entities.isDisjoint(with: entities) {
            // Another entity of the same source table: its keys are free in the shared range.
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: 0, range: shared.range, entity: destinationName, isComplete: isComplete)
            keptKeys[table]?.entities.formUnion(entities)
        } else if keptKeys[table] == nil, first <= low {
            // The source's keys are all free here: keep them.
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: 0, range: low...high, entity: destinationName, isComplete: isComplete)
            keptKeys[table] = (sourceStorage.table, Set(entities), low...high)
        } else {
            let (offset, o1) = first.subtractingReportingOverflow(low)
            guard !o1 else { return nil }
            let (last, o2) = high.addingReportingOverflow(offset)
            guard !o2 else { return nil }
            // A range of its own, above every key set aside or handed out in the table so far.
            rule = KeyRule(sourceTable: sourceStorage.table, sourceEntities: entities, sourceDiscriminators: discriminators, table: table, offset: offset, range: first...last, entity: destinationName, isComplete: isComplete)
        }
        try writer.reserve(through: rule.range.upperBound, in: table)
        if step.keepsKeys, rule.offset == 0 {
            // Keys kept as they are keep their store's high-water mark too (Core Data's Z_MAX, above
            // the largest key when objects were deleted): a deleted object's key is never handed
            // out again under the store's UUID, where an old object URI would name a new object.
            let mark = try sourceStore.reading { try sourceStore.strategy.highestKey(inTable: sourceStorage.table, layout: sourceStore.layout, $0) }
            try writer.reserve(through: mark, in: table)
            try destinationStore.strategy.raiseKeyCounter(inTable: table, layout: destinationStore.layout, to: mark, writer.db)
        }
        keyRules[index] = rule
        return rule
    }

    /// The key rules whose ranges hold a destination key (several when they share one).
    private func keyRules(holding destination: StoredKey) -> [(index: Int, rule: KeyRule)] {
        guard let table = destinationStore.layout.entities[destination.entity]?.table else { return [] }
        return keyRules.filter { $0.value.table == table && $0.value.range.contains(destination.key) }.map { ($0.key, $0.value) }
    }

    // MARK: Keys and identities

    /// The source store key of a reference.
    func sourceKey(of ref: ObjectRef) throws -> Int64? {
        if let key = ref.key { return key }
        return try sourceStore.locate(id: ref.id)?.key
    }

    /// A destination object's reference from an association row's fields.
    private func destinationRef(entity: String, key: Int64, stored: String?) -> ObjectRef {
        ObjectRef(entity: entity, id: destinationStore.strategy.objectID(entity: entity, key: key, stored: stored), key: key)
    }

    /// The destination objects a mapping created from a source object. `sourceID` is the
    /// object's identity when it comes from a reference the source graph handed out.
    func destinations(of mappingIndex: Int, source: StoredKey, sourceID: String? = nil) throws -> [ObjectRef] {
        if let rule = keyRules[mappingIndex] {
            guard rule.sourceEntities.contains(source.entity), let key = rule.destinationKey(ofSource: source.key) else { return [] }
            // Once a complete rule's mapping has created its objects, every source object has
            // one, of the mapping's entity, with the identity `makeDestination` (and the compiled
            // SQL) gives it: nothing to look up.
            if rule.isComplete, creationFinished.contains(mappingIndex), let sourceID {
                let stored = destinationStore.layout.entities[rule.entity]?.idColumn == nil ? nil : sourceID + identitySuffix(mappingIndex)
                return [destinationRef(entity: rule.entity, key: key, stored: stored)]
            }
            guard let found = try destinationObject(inTable: rule.table, key: key) else { return [] }
            return [found]
        }
        let sourceKey = source.key
        let rows = try Row.fetchAll(try writer.statement("SELECT entity, destination, id FROM \(Self.associations) WHERE mapping = ? AND source = ? AND source_entity = ? ORDER BY rowid", scratch: true),
                                    arguments: [mappingIndex, sourceKey, source.entity])
        return try rows.map { row in
            destinationRef(entity: try row.stored(0, "an entity name"), key: try row.stored(1, "a row key"), stored: try row.storedIfPresent(2, "an object id"))
        }
    }

    /// The destination object stored under a key in a table, if any.
    private func destinationObject(inTable table: String, key: Int64) throws -> ObjectRef? {
        let lookup: RowLookup
        if let known = rowLookups[table] {
            lookup = known
        } else {
            guard let storage = destinationStore.layout.entities.values.first(where: { $0.table == table }) else { return nil }
            let columns = [storage.entityColumn] + (storage.idColumn.map { [$0] } ?? [])
            lookup = RowLookup(storage: storage, statement: try writer.statement(
                "SELECT \(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM main.\(table.quotedDatabaseIdentifier) WHERE \(storage.primaryKey.quotedDatabaseIdentifier) = ?"))
            rowLookups[table] = lookup
        }
        // The statement is kept: the rows held back are written before it runs.
        try writer.flush()
        let row = StatementColumns(lookup.statement)
        let rows = try Row.fetchCursor(lookup.statement, arguments: [key])
        guard try rows.next() != nil else { return nil }
        let discriminator = row.value(0)
        let stored = lookup.storage.idColumn == nil ? nil : try row.textIfPresent(1, "an object id")
        // Stepped to its end, so the statement holds nothing open between lookups.
        while try rows.next() != nil {}
        guard let entity = destinationStore.layout.entity(withDiscriminator: discriminator, inTable: table) else { return nil }
        return destinationRef(entity: entity, key: key, stored: stored)
    }

    /// How a row of a destination table is found by key: worked out once per table, not per lookup.
    private struct RowLookup {
        var storage: EntityStorage
        var statement: Statement
    }
    private var rowLookups: [String: RowLookup] = [:]

    /// The mapping that created a destination object, for messages: by key rule, association or
    /// the key range of a creation that recorded none.
    func mapping(of destination: StoredKey) throws -> Int? {
        if let (index, _) = try association(of: destination) { return index }
        guard let table = destinationStore.layout.entities[destination.entity]?.table else { return nil }
        return unrecordedBlocks.first { $0.table == table && $0.range.contains(destination.key) }?.mapping
    }

    /// The mapping and source object an association records for a destination object.
    func association(of destination: StoredKey) throws -> (mapping: Int, source: StoredKey)? {
        let rules = keyRules(holding: destination)
        if let (_, any) = rules.first {
            // The source object the key comes from; its entity says which of the rules made it.
            let key = destination.key - any.offset
            guard let data = try sourceStore.object(entity: any.sourceEntities.first ?? "", key: key),
                  let (index, _) = rules.first(where: { $0.rule.sourceEntities.contains(data.entity) }) else { return nil }
            return (index, StoredKey(entity: data.entity, key: key))
        }
        guard let row = try Row.fetchOne(try writer.statement("SELECT mapping, source_entity, source FROM \(Self.associations) WHERE destination = ? AND entity = ? LIMIT 1", scratch: true),
                                         arguments: [destination.key, destination.entity]) else { return nil }
        return (try row.stored(0, "a mapping number"), StoredKey(entity: try row.stored(1, "an entity name"), key: try row.stored(2, "a row key")))
    }

    /// The destination key of a reference to a destination object.
    func destinationKey(of ref: ObjectRef) throws -> Int64? {
        if let key = ref.key { return key }
        return try destinationStore.locate(id: ref.id, try db)?.key
    }

    // MARK: $manager lookups

    /// The destination objects an entity mapping made from the source objects (Core Data's `destinationInstances(forEntityMappingName:sourceInstances:)`).
    public func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        let index = try index(ofMappingNamed: name)
        var result: [ObjectRef] = []
        for source in sourceInstances {
            guard let key = try sourceKey(of: source) else { continue }
            result += try destinations(of: index, source: StoredKey(entity: source.entity, key: key), sourceID: source.isSourceObject ? source.id : nil)
        }
        return result
    }

    /// The destination objects made from the source objects by whichever mapping made them, for a source relationship's targets.
    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        // Each related source object through the first mapping (in order) that migrated it.
        var result: [ObjectRef] = []
        for source in sourceInstances {
            guard let key = try sourceKey(of: source) else { continue }
            for (index, candidate) in mapping.entityMappings.enumerated() where candidate.source == source.entity {
                let found = try destinations(of: index, source: StoredKey(entity: source.entity, key: key), sourceID: source.isSourceObject ? source.id : nil)
                if let first = found.first {
                    result.append(first)
                    break
                }
            }
        }
        return result
    }

    /// The source objects an entity mapping made the destination objects from.
    public func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectRef]) throws -> [ObjectRef] {
        let index = try index(ofMappingNamed: name)
        var result: [ObjectRef] = []
        for destination in destinationInstances {
            guard let key = try destinationKey(of: destination),
                  let (mappingIndex, source) = try association(of: StoredKey(entity: destination.entity, key: key)), mappingIndex == index,
                  let data = try sourceStore.object(entity: source.entity, key: source.key) else { continue }
            result.append(sourceGraph.ref(data))
        }
        return result
    }

    /// The source object a destination object was created from: the object being related in
    /// phase 2 when it is that one, otherwise through the association its mapping recorded.
    public func sourceObject(for destination: DestinationObject) throws -> SourceObject? {
        guard let key = try destination.primaryKey ?? destinationKey(of: destination.ref) else { return nil }
        let stored = StoredKey(entity: destination.entity, key: key)
        if let current = currentRelation, current.destination == stored { return current.source }
        guard let (_, source) = try association(of: stored), let data = try sourceStore.object(entity: source.entity, key: source.key) else { return nil }
        return sourceObject(data)
    }

    // MARK: Relationships (for policies)

    /// Evaluates the mapping's relationship expressions for one destination object and writes
    /// them. A `copy` mapping carries each same-named source relationship over through the
    /// mappings of the related objects.
    public func applyRelationshipMappings(_ entityMapping: EntityMapping, to destination: DestinationObject) throws {
        guard let source = try sourceObject(for: destination), let steps = relationshipSteps(entityMapping, destination.entity) else { return }
        for (relationship, propertyMapping) in steps {
            let targets: [ObjectRef]
            if let propertyMapping {
                targets = try relatedObjects(propertyMapping, relationship, for: source, destination: destination.ref, mapping: entityMapping)
            } else if entityMapping.type == .copy, let sourceIDs = source.data.relationships[relationship.name] {
                let keys = source.data.relatedKeys[relationship.name] ?? []
                let refs = zip(sourceIDs, keys).map { ObjectRef(entity: $1.entity, id: $0, key: $1.key) }
                targets = try destinationInstances(forSourceRelationshipNamed: relationship.name, sourceInstances: refs)
            } else {
                continue
            }
            try setRelationship(relationship.name, of: destination, to: targets, mapping: entityMapping)
        }
    }

    /// The objects a relationship mapping's expression gives a destination object: a list, one
    /// object, or none for nil; anything else is an error naming the object.
    func relatedObjects(_ propertyMapping: PropertyMapping, _ relationship: Relationship, for source: SourceObject, destination: ObjectRef,
                        mapping entityMapping: EntityMapping) throws -> [ObjectRef] {
        // The usual form, `destinationInstances("Name", $source)`: the lookup the evaluator would make.
        if let name = Self.lookupOfTheSource(propertyMapping.expression.expression),
           let found = try? destinationInstances(forEntityMappingNamed: name, sourceInstances: [source.ref]) {
            return found
        }
        let result = try evaluate(propertyMapping.expression, for: source, destination: destination, mapping: entityMapping, property: relationship.name) {
            try $0.evaluate($1)
        }
        return try (result.elements ?? (result.isNull ? [] : [result])).map { item in
            guard case .object(let ref) = item else {
                throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: relationship.name,
                                           message: "a relationship takes objects, but the expression gave \(item.kindName)")
            }
            return ref
        }
    }

    /// A mapping's relationships of a destination entity, each with its relationship mapping:
    /// worked out once per mapping and entity, not per object. Nil for an unknown entity.
    func relationshipSteps(_ entityMapping: EntityMapping, _ entityName: String) -> [(Relationship, PropertyMapping?)]? {
        let index = mappingIndex(entityMapping)
        if let known = relationshipStepsByMapping[index]?[entityName] { return known }
        guard let entity = destinationSchema.entity(named: entityName) else { return nil }
        let steps = destinationSchema.allRelationships(of: entity).filter { !$0.isTransient }.map { ($0, entityMapping.relationshipMapping(named: $0.name)) }
        relationshipStepsByMapping[index, default: [:]][entityName] = steps
        return steps
    }
    /// By mapping position, then destination entity.
    private var relationshipStepsByMapping: [Int: [String: [(Relationship, PropertyMapping?)]]] = [:]

    /// Sets a destination relationship to destination objects, in order.
    public func setRelationship(_ name: String, of destination: DestinationObject, to targets: [ObjectRef], mapping entityMapping: EntityMapping) throws {
        guard !destination.isSourceObject else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(destination.ref) is an object of the source store; relationships are set on the destination objects created from it, "
                                        + "which manager.destinationInstances(forEntityMappingNamed:sourceInstances:) gives")
        }
        guard let owner = try destination.primaryKey ?? destinationKey(of: destination.ref), let setting = try relationshipSetting(name, of: destination.entity) else {
            throw MigrationError.setup("no relationship '\(name)' on \(destination.entity) in \(destinationSchema.version)")
        }
        let relationship = setting.relationship, storage = setting.storage
        try checkCount(of: targets, setting, of: destination.ref, mapping: entityMapping)
        let writer = try self.writer
        if targets.isEmpty && !relationship.isToMany {
            try writer.unlink(name, of: storage, owner: owner)
            return
        }
        for (position, target) in targets.enumerated() {
            let key = try targetKey(target, setting, of: destination.ref, mapping: entityMapping)
            try writer.link(name, of: storage, owner: owner, target: key, position: position, inversePosition: relationship.isToMany ? nil : try appendPosition(setting, target: key))
        }
    }

    /// Refuses more than one object for a to-one relationship.
    func checkCount(of targets: [ObjectRef], _ setting: RelationshipSetting, of destination: ObjectRef, mapping entityMapping: EntityMapping) throws {
        guard !setting.relationship.isToMany && targets.count > 1 else { return }
        throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: setting.relationship.name,
                                   message: "to-one relationship was given \(targets.count) objects (\(targets.prefix(3).map(\.description).joined(separator: ", ")))")
    }

    /// The destination key of an object a relationship is set to, once it is known to be a
    /// destination object of an entity the relationship takes; otherwise an error saying which
    /// mapping gives the right objects.
    func targetKey(_ target: ObjectRef, _ setting: RelationshipSetting, of destination: ObjectRef, mapping entityMapping: EntityMapping) throws -> Int64 {
        let relationship = setting.relationship, allowed = setting.allowed, name = relationship.name
        guard !target.isSourceObject else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(target) is an object of the source store; a relationship takes the destination objects created from it: "
                                        + "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mapping.entityMappings.first { $0.source == target.entity && allowed.contains($0.destination ?? "") }?.name ?? "<mapping>")\", <source objects>)")
        }
        guard allowed.contains(target.entity) else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(target) is not \(English.withArticle(relationship.destination)); check which entity mapping the expression names")
        }
        guard let key = try destinationKey(of: target) else {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "\(target) does not exist in the destination store")
        }
        return key
    }

    /// What `setRelationship` needs of a destination relationship: worked out once per entity and
    /// name, not per object. Nil when the entity has no such relationship.
    func relationshipSetting(_ name: String, of entityName: String) throws -> RelationshipSetting? {
        let key = PropertyName(entity: entityName, property: name)
        if let known = relationshipSettings[key] { return known }
        guard let entity = destinationSchema.entity(named: entityName),
              case .relationship(let relationship)? = destinationSchema.property(named: name, in: entity) else { return nil }
        let allowed = destinationSchema.entity(named: relationship.destination).map { Set(destinationSchema.hierarchy(under: $0).map(\.name)) } ?? []
        var appendPosition: String?
        if let inverse = destinationSchema.inverse(of: relationship), inverse.isToMany, inverse.isOrdered,
           let storage = destinationStore.layout.entities[relationship.destination],
           case .inverseForeignKey(let table, let column, let orderColumn?, _)? = storage.relationships[inverse.name] {
            appendPosition = "SELECT COALESCE(MAX(\(orderColumn.quotedDatabaseIdentifier)), -1) + 1 FROM \(table.quotedDatabaseIdentifier) WHERE \(column.quotedDatabaseIdentifier) = ?"
        }
        let setting = RelationshipSetting(relationship: relationship, allowed: allowed, storage: try destinationStore.layout.storage(of: entityName), appendPosition: appendPosition)
        relationshipSettings[key] = setting
        return setting
    }

    /// A destination relationship as `setRelationship` writes it.
    struct RelationshipSetting {
        var relationship: Relationship
        /// The entities its objects may be of: its destination and the sub-entities.
        var allowed: Set<String>
        var storage: EntityStorage
        /// For a to-one whose inverse is an ordered to-many: the query for the next place in that list.
        var appendPosition: String?
    }
    private var relationshipSettings: [PropertyName: RelationshipSetting] = [:]

    /// Where an object goes in the ordered to-many inverse of a to-one relationship: at the end.
    private func appendPosition(_ setting: RelationshipSetting, target: Int64) throws -> Int? {
        guard let sql = setting.appendPosition else { return nil }
        return try Int.fetchOne(try writer.statement(sql), arguments: [target])
    }
}
