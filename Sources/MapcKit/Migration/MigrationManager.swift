import Foundation
import GRDB

/// The three phases of a migration.
public enum MigrationPhase: String, Sendable, CaseIterable {
    /// Phase 1: create destination objects and their attributes.
    case create
    /// Phase 2: set relationships.
    case relate
    /// Phase 3: validate the whole destination store.
    case validate
}

/// Where a migration is, for progress displays.
public struct MigrationProgress: Sendable {
    /// The phase.
    public var phase: MigrationPhase
    /// The entity mapping being worked on; nil between mappings and during validation.
    public var mapping: String?
    /// Objects done in this mapping (or rules checked in validation).
    public var completed: Int
    /// Objects to do in this mapping, when known (for a filtered mapping, the objects it reads).
    public var total: Int?
    /// Whether this mapping's work in this phase (or the validation) is done.
    public var isFinished = false
}

/// What a migration did.
public struct MigrationSummary: Sendable {
    /// The source version.
    public var sourceVersion: String
    /// The destination version.
    public var destinationVersion: String
    /// Objects created by each entity mapping, in mapping order.
    public var created: [(mapping: String, count: Int)]
    /// Seconds spent in each phase.
    public var phaseSeconds: [MigrationPhase: Double]
    /// Objects of each destination entity, after the migration.
    public var destinationCounts: [(entity: String, count: Int)]
    /// Entity mappings (and their relationships) that ran as compiled SQL rather than object by object.
    public var compiled: [String] = []

    /// The summary as JSON.
    public var json: JSONValue {
        .object([
            ("source", .string(sourceVersion)), ("destination", .string(destinationVersion)),
            ("created", .object(created.map { ($0.mapping, .integer(Int64($0.count))) })),
            ("seconds", .object(MigrationPhase.allCases.map { ($0.rawValue, .double((phaseSeconds[$0] ?? 0).rounded(toPlaces: 3))) })),
            ("objects", .object(destinationCounts.map { ($0.entity, .integer(Int64($0.count))) })),
            ("compiled", .array(compiled.map(JSONValue.string))),
        ])
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        let factor = pow(10, Double(places))
        return (self * factor).rounded() / factor
    }
}

/// Runs a mapping model over a source store into an empty destination store, the way
/// `NSMigrationManager` does: phase 1 creates destination objects entity mapping by entity
/// mapping, phase 2 sets relationships, phase 3 validates everything.
///
/// Work streams: source objects are read in batches, destination rows written with prepared
/// statements inside one transaction per phase, and the source-to-destination associations kept
/// in a scratch SQLite database rather than in memory, so memory does not grow with the store.
public final class MigrationManager: MigrationManagerFunctions {
    /// The store migrated from (read only).
    public let sourceStore: Store
    /// The mapping model run.
    public let mapping: MappingModel
    /// The destination schema.
    public let destinationSchema: Schema
    /// The store being built; set while `migrate(into:)` runs.
    public private(set) var destinationStore: Store?
    /// Reports progress; called from the migrating thread.
    public var progress: ((MigrationProgress) -> Void)?
    /// Objects read per batch.
    public var batchSize = 2_000
    /// Whether mappings SQLite can run with the same results are compiled to SQL (when the source
    /// store is a file). Off, every object goes through the interpreter; tests compare the two.
    public var allowsSQL = true
    private var sourceAttached = false
    /// What ran as SQL: mapping names, and "Name.relationships".
    private var compiledWork: [String] = []
    /// Mappings whose relationships were set while their objects were created.
    private var relationshipsDone: Set<Int> = []

    let sourceGraph: StoreObjectGraph
    /// Entity mapping positions by name, and each mapping's identity suffix: fixed for a migration,
    /// so they are worked out once rather than per object.
    private let indexByName: [String: Int]
    private let identitySuffixes: [String]
    var policies: [EntityMigrationPolicy] = []
    private var evaluators: [Evaluator] = []
    var writer: StoreWriter?
    var db: Database?
    private var statements: [String: Statement] = [:]
    private var currentMapping = 0
    var created: [Int] = []
    private let startDate = Date()

    /// Creates a manager. Policies named by the mapping model must be registered in `policies`.
    public init(source: Store, mapping: MappingModel, destinationSchema: Schema, policies: PolicyRegistry = .shared) throws {
        sourceStore = source
        self.mapping = mapping
        self.destinationSchema = destinationSchema
        sourceGraph = StoreObjectGraph(store: source)
        indexByName = Dictionary(mapping.entityMappings.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        identitySuffixes = mapping.entityMappings.enumerated().map { index, entityMapping in
            let first = mapping.entityMappings.firstIndex { $0.source == entityMapping.source && $0.type != .remove }
            return first == index ? "" : ".\(entityMapping.name)"
        }
        for entityMapping in mapping.entityMappings {
            var policy: EntityMigrationPolicy = EntityMigrationPolicy()
            if let name = entityMapping.policy {
                guard let type = policies.policy(named: name) else {
                    throw MigrationError.setup("mapping '\(entityMapping.name)' names policy '\(name)', which is not registered" +
                                               (Suggestions.didYouMean(name, in: policies.names).map { "; \($0)" } ?? "; registered: \(policies.names.joined(separator: ", "))"))
                }
                policy = type.init()
            }
            self.policies.append(policy)
            let context = EvaluationContext(graph: sourceGraph, manager: nil, policyFunctions: policy.functions, now: startDate)
            evaluators.append(Evaluator(context: context))
        }
        created = Array(repeating: 0, count: mapping.entityMappings.count)
    }

    // MARK: Running

    /// Migrates into an empty destination store (a new file or an in-memory store) of the destination schema.
    public func migrate(into destination: Store) throws -> MigrationSummary {
        guard destination.schema.version == destinationSchema.version || VersionHash.modelHash(of: destination.schema) == VersionHash.modelHash(of: destinationSchema) else {
            throw MigrationError.setup("the destination store is laid out for \(destination.schema.version), not \(destinationSchema.version)")
        }
        destinationStore = destination
        for evaluator in evaluators { evaluator.context.manager = self }
        defer { for evaluator in evaluators { evaluator.context.manager = nil } }
        var seconds: [MigrationPhase: Double] = [:]
        try destination.database.writeWithoutTransaction { db in
            self.db = db
            defer { self.db = nil; self.writer = nil; self.statements = [:] }
            try db.execute(sql: "ATTACH DATABASE '' AS mapc_scratch")
            defer { try? db.execute(sql: "DETACH DATABASE mapc_scratch") }
            try db.execute(sql: "CREATE TABLE mapc_scratch.assoc (mapping INTEGER NOT NULL, source_id TEXT NOT NULL, dest_pk INTEGER NOT NULL, dest_id TEXT NOT NULL, dest_entity TEXT NOT NULL)")
            try db.execute(sql: "CREATE INDEX mapc_scratch.assoc_source ON assoc (mapping, source_id)")
            try db.execute(sql: "CREATE INDEX mapc_scratch.assoc_dest ON assoc (dest_id)")
            try db.execute(sql: "CREATE INDEX mapc_scratch.assoc_mapping ON assoc (mapping)")
            if allowsSQL, let path = sourceStore.path {
                try db.execute(sql: "ATTACH DATABASE ? AS \(Self.sourceSchemaName)", arguments: [path])
                sourceAttached = true
            }
            defer {
                if sourceAttached { try? db.execute(sql: "DETACH DATABASE \(Self.sourceSchemaName)") }
                sourceAttached = false
            }
            writer = StoreWriter(store: destination, db: db)

            var clock = Date()
            try db.inTransaction(.deferred) {
                try self.createPhase()
                return .commit
            }
            seconds[.create] = Date().timeIntervalSince(clock)
            clock = Date()
            try db.inTransaction(.deferred) {
                try self.relatePhase()
                return .commit
            }
            seconds[.relate] = Date().timeIntervalSince(clock)
            clock = Date()
            try self.validatePhase(db)
            seconds[.validate] = Date().timeIntervalSince(clock)
        }
        var counts: [(String, Int)] = []
        for entity in destinationSchema.entities {
            counts.append((entity.name, try destination.count(of: entity.name, exactly: true)))
        }
        return MigrationSummary(sourceVersion: mapping.source, destinationVersion: mapping.destination,
                                created: zip(mapping.entityMappings, created).map { ($0.name, $1) }, phaseSeconds: seconds, destinationCounts: counts,
                                compiled: compiledWork)
    }

    func report(_ phase: MigrationPhase, _ mappingName: String?, _ completed: Int, _ total: Int?, finished: Bool = false) {
        progress?(MigrationProgress(phase: phase, mapping: mappingName, completed: completed, total: total, isFinished: finished))
    }

    func statement(_ sql: String) throws -> Statement {
        if let cached = statements[sql] { return cached }
        guard let db else { throw MigrationError.setup("the migration manager is not running") }
        let made = try db.makeStatement(sql: sql)
        statements[sql] = made
        return made
    }

    // MARK: Phase 1

    private func createPhase() throws {
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            currentMapping = index
            try hook(entityMapping) { try policies[index].begin(entityMapping, manager: self) }
            if sourceAttached, let compiled = compiledCreation(index) {
                let total = try sourceCount(for: entityMapping)
                report(.create, entityMapping.name, 0, total)
                try statement(compiled.sql).execute(arguments: compiled.arguments)
                created[index] += db?.changesCount ?? 0
                compiledWork.append(entityMapping.name)
                if compiled.includesRelationships {
                    relationshipsDone.insert(index)
                    compiledWork.append("\(entityMapping.name).relationships")
                }
                report(.create, entityMapping.name, total ?? created[index], total, finished: true)
            } else if entityMapping.type != .remove, entityMapping.destination != nil || entityMapping.type == .custom {
                var done = 0
                let total = try sourceCount(for: entityMapping)
                report(.create, entityMapping.name, 0, total)
                try forEachSourceObject(of: entityMapping) { source in
                    done += 1
                    if done % 10_000 == 0 { report(.create, entityMapping.name, done, total) }
                    if let filter = entityMapping.filter {
                        let keep = try evaluate(filter, for: source, mapping: entityMapping, property: "filter") { try evaluators[index].evaluatePredicate($0) }
                        if !keep { return }
                    }
                    try hook(entityMapping) { try policies[index].createDestinationInstances(for: source, mapping: entityMapping, manager: self) }
                }
                report(.create, entityMapping.name, done, total, finished: true)
            }
            try hook(entityMapping) { try policies[index].endInstanceCreation(entityMapping, manager: self) }
        }
    }

    private func sourceCount(for entityMapping: EntityMapping) throws -> Int? {
        guard entityMapping.sourceExpression == nil, let source = entityMapping.source else { return nil }
        return try sourceStore.count(of: source, exactly: true)
    }

    /// Source objects of a mapping: its source expression's, or every object of its source entity.
    private func forEachSourceObject(of entityMapping: EntityMapping, _ body: (SourceObject) throws -> Void) throws {
        let index = currentMapping
        // Xcode's form, FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E", "P"), …),
        // streams: the entity and its sub-entities in batches, P as a filter, so memory stays flat.
        if let sourceExpression = entityMapping.sourceExpression, let (entity, predicate) = Self.standardFetch(sourceExpression.expression) {
            guard let root = sourceStore.schema.entity(named: entity) else {
                throw MigrationError.setup("mapping '\(entityMapping.name)' fetches unknown source entity '\(entity)'")
            }
            let parsed: Expr
            switch ExpressionParser.parse(predicate) {
            case .success(let expression): parsed = expression
            case .failure(let error):
                throw MigrationError.expression(mapping: entityMapping.name, property: "sourceExpression", object: ObjectRef(entity: entity, id: ""),
                                                diagnostic: sourceExpression.source.diagnostic(.error, "the fetch request's predicate does not parse: \(error.description)", at: sourceExpression.expression.range))
            }
            for member in sourceStore.schema.hierarchy(under: root) where !member.isAbstract {
                try sourceStore.forEachBatch(ofExactEntity: member.name, batchSize: batchSize) { batch in
                    for data in batch {
                        sourceGraph.remember(data)
                        let object = SourceObject(data: data, graph: sourceGraph)
                        let keep = try evaluate(MappingExpression(source: sourceExpression.source, expression: parsed), for: object, mapping: entityMapping, property: "sourceExpression") {
                            try evaluators[index].evaluatePredicate($0)
                        }
                        if keep { try body(object) }
                    }
                }
            }
            return
        }
        if let sourceExpression = entityMapping.sourceExpression {
            let evaluator = evaluators[index]
            evaluator.context.evaluatedObject = .null
            let result: EvalValue
            do { result = try evaluator.evaluate(sourceExpression.expression) } catch let error as ExpressionError {
                throw MigrationError.expression(mapping: entityMapping.name, property: "sourceExpression", object: ObjectRef(entity: "", id: ""), diagnostic: error.diagnostic(in: sourceExpression.source))
            }
            for item in result.elements ?? [result] {
                guard case .object(let ref) = item, let data = try sourceStore.object(id: ref.id) else { continue }
                sourceGraph.remember(data)
                try body(SourceObject(data: data, graph: sourceGraph))
            }
            return
        }
        guard let entity = entityMapping.source else { return }
        try sourceStore.forEachBatch(ofExactEntity: entity, batchSize: batchSize) { batch in
            for data in batch {
                sourceGraph.remember(data)
                try body(SourceObject(data: data, graph: sourceGraph))
            }
        }
    }

    /// The entity and predicate of `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "E", "P"), …)`.
    static func standardFetch(_ expression: Expr) -> (entity: String, predicate: String)? {
        guard case .fetch(let request, _, _) = expression.kind,
              case .method(let receiver, let selector, _, let arguments) = request.kind, receiver.kind == .variable("manager"),
              selector == MethodSelector.fetchRequestForSourceEntity.rawValue, arguments.count == 2,
              case .literal(.string(let entity)) = arguments[0].kind, case .literal(.string(let predicate)) = arguments[1].kind else { return nil }
        return (entity, predicate)
    }

    /// Runs a policy hook, turning its failures into `MigrationError.policy`.
    private func hook(_ entityMapping: EntityMapping, _ body: () throws -> Void) throws {
        do { try body() } catch let error as MigrationError { throw error } catch let error as ExpressionError {
            throw MigrationError.policy(mapping: entityMapping.name, message: error.description)
        } catch {
            throw MigrationError.policy(mapping: entityMapping.name, message: "\(error)")
        }
    }

    /// Evaluates an expression for a source object, locating failures in the mapping file.
    private func evaluate<T>(_ expression: MappingExpression, for source: SourceObject, destination: DestinationObject? = nil, mapping entityMapping: EntityMapping,
                             property: String, _ run: (Expr) throws -> T) throws -> T {
        let evaluator = evaluators[mappingIndex(entityMapping)]
        evaluator.context.evaluatedObject = .object(source.ref)
        evaluator.context.variables["source"] = .object(source.ref)
        evaluator.context.variables["destination"] = destination.map { .object($0.ref) } ?? .null
        evaluator.context.variables["entityMapping"] = .handle(.opaque(entityMapping.name))
        do {
            return try run(expression.expression)
        } catch let error as ExpressionError {
            throw MigrationError.expression(mapping: entityMapping.name, property: property, object: source.ref, diagnostic: error.diagnostic(in: expression.source))
        }
    }

    private func mappingIndex(_ entityMapping: EntityMapping) -> Int {
        indexByName[entityMapping.name] ?? currentMapping
    }

    /// The position of the entity mapping named in a `$manager` call, or an error suggesting the closest name.
    private func index(ofMappingNamed name: String) throws -> Int {
        guard let index = indexByName[name] else {
            throw MapcError.notFound("no entity mapping named '\(name)'" + (Suggestions.didYouMean(name, in: mapping.entityMappings.map(\.name)).map { "; \($0)" } ?? ""))
        }
        return index
    }

    // MARK: Building destination objects (for policies)

    /// A destination object for a source object: the mapping's destination entity (or `entity`),
    /// with every attribute expression evaluated and defaults for the rest. The identity is the
    /// source's for the first mapping reading that source entity, `sourceID.mappingName` otherwise.
    public func makeDestination(for source: SourceObject, mapping entityMapping: EntityMapping, entity: String? = nil) throws -> DestinationObject {
        let index = mappingIndex(entityMapping)
        guard let entityName = entity ?? entityMapping.destination else {
            throw MigrationError.setup("mapping '\(entityMapping.name)' has no destination entity in \(destinationSchema.version)")
        }
        let plan = try attributePlan(index, entityName)
        var destination = DestinationObject(entity: entityName, id: identity(for: source, mapping: entityMapping))
        destination.attributeTypes = Dictionary(plan.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        let evaluator = evaluators[index]
        for step in plan {
            if let expression = step.expression {
                let result = try evaluate(expression, for: source, destination: destination, mapping: entityMapping, property: step.name) { try evaluator.evaluate($0) }
                switch ValueCoercion.coerce(result, to: step.type) {
                case .success(let value): destination.attributes[step.name] = value
                case .failure(let problem):
                    throw MigrationError.value(mapping: entityMapping.name, entity: entityName, object: destination.id, property: step.name,
                                               message: "\(problem.message) (from source object \(source.ref))")
                }
            } else if step.copies, let value = source.data.attributes[step.name] {
                destination.attributes[step.name] = value
            } else {
                destination.attributes[step.name] = step.defaultValue
            }
        }
        return destination
    }

    /// How one destination attribute gets its value in a mapping: an expression, a copy, or the default.
    private struct AttributeStep {
        var name: String
        var type: AttributeType
        var expression: MappingExpression?
        var copies: Bool
        var defaultValue: Value
    }

    /// Per mapping and destination entity, worked out once rather than per object.
    private var attributePlans: [String: [AttributeStep]] = [:]

    private func attributePlan(_ index: Int, _ entityName: String) throws -> [AttributeStep] {
        let key = "\(index)/\(entityName)"
        if let plan = attributePlans[key] { return plan }
        guard let destinationEntity = destinationSchema.entity(named: entityName) else {
            throw MigrationError.setup("mapping '\(mapping.entityMappings[index].name)' has no destination entity '\(entityName)' in \(destinationSchema.version)")
        }
        let entityMapping = mapping.entityMappings[index]
        let plan = destinationSchema.allAttributes(of: destinationEntity).filter { !$0.isTransient }.map { attribute in
            AttributeStep(name: attribute.name, type: attribute.type, expression: entityMapping.attributeMapping(named: attribute.name)?.expression,
                          copies: entityMapping.type == .copy, defaultValue: attribute.defaultValue ?? .null)
        }
        attributePlans[key] = plan
        return plan
    }

    private func identity(for source: SourceObject, mapping entityMapping: EntityMapping) -> String {
        source.data.id + identitySuffix(mappingIndex(entityMapping))
    }

    /// The suffix the identity rule adds to a source id for a mapping: none for the first mapping
    /// reading its source entity, `.MappingName` for later ones, so ids stay unique and predictable.
    func identitySuffix(_ index: Int) -> String {
        identitySuffixes[index]
    }

    /// Whether a mapping's objects follow the identity rule, so lookups need no association rows:
    /// true for mappings without a custom policy (a policy may create objects any way it likes).
    func followsIdentityRule(_ index: Int) -> Bool {
        mapping.entityMappings[index].policy == nil
    }

    /// The destination object a rule-following mapping created from a source id, if it did.
    private func ruleDestination(_ index: Int, sourceID: String) throws -> (ref: ObjectRef, key: Int64)? {
        guard let destination = mapping.entityMappings[index].destination, let storage = destinationStore?.layout.entities[destination] else { return nil }
        let id = sourceID + identitySuffix(index)
        let sql = "SELECT \(storage.primaryKey.quotedDatabaseIdentifier), \(storage.entityColumn.quotedDatabaseIdentifier) FROM \(storage.table.quotedDatabaseIdentifier) WHERE \(storage.idColumn.quotedDatabaseIdentifier) = ?"
        guard let row = try Row.fetchOne(try statement(sql), arguments: [id]) else { return nil }
        let entity: String = try row.stored(1, "an entity name")
        guard storage.discriminators.contains(entity) else { return nil }
        return (ObjectRef(entity: entity, id: id), try row.stored(0, "a row key"))
    }

    /// Writes a destination object and records that `mapping` created it from `source`.
    @discardableResult
    public func insert(_ destination: DestinationObject, associatedWith source: SourceObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        guard let writer else { throw MigrationError.setup("objects can only be inserted while the migration runs") }
        var inserted = destination
        inserted.attributes = try storableAttributes(of: destination, mapping: entityMapping)
        do {
            inserted.primaryKey = try writer.insert(entity: destination.entity, id: destination.id, attributes: inserted.attributes)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: "id",
                                       message: "another destination object already has id '\(destination.id)'; a policy creating several objects per source object must give each its own id")
        }
        let index = mappingIndex(entityMapping)
        if followsIdentityRule(index) && destination.id == identity(for: source, mapping: entityMapping) {
            created[index] += 1
        } else {
            try associate(source: source.ref, destination: inserted, mapping: entityMapping)
        }
        return inserted
    }

    /// The object's attribute values coerced to their attributes' types, or an error naming the
    /// object, the attribute and the value that does not fit (a policy may set anything).
    private func storableAttributes(of destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> [String: Value] {
        func refuse(_ property: String, _ message: String) -> MigrationError {
            MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: property, message: message)
        }
        if let (name, reason) = destination.rejected.min(by: { $0.key < $1.key }) { throw refuse(name, reason) }
        guard let entity = destinationSchema.entity(named: destination.entity) else {
            throw MigrationError.setup("mapping '\(entityMapping.name)' creates \(destination.entity) objects, but \(destinationSchema.version) has no such entity")
        }
        let stored = destinationSchema.allAttributes(of: entity).filter { !$0.isTransient }
        let types = Dictionary(stored.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        var result: [String: Value] = [:]
        for attribute in stored where destination.attributes[attribute.name] == nil { result[attribute.name] = attribute.defaultValue ?? .null }
        for (name, value) in destination.attributes {
            guard let type = types[name] else { throw refuse(name, "\(destination.entity) has no stored attribute '\(name)'") }
            switch ValueCoercion.coerce(.scalar(value), to: type) {
            case .success(let coerced): result[name] = coerced
            case .failure(let problem): throw refuse(name, "\(value) cannot be stored: \(problem.message)")
            }
        }
        return result
    }

    /// Records that `mapping` created `destination` from `source` (`NSMigrationManager.associate`).
    public func associate(source: ObjectRef, destination: DestinationObject, mapping entityMapping: EntityMapping) throws {
        guard let primaryKey = destination.primaryKey else { throw MigrationError.setup("associate an object after inserting it") }
        try statement("INSERT INTO mapc_scratch.assoc (mapping, source_id, dest_pk, dest_id, dest_entity) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [mappingIndex(entityMapping), source.id, primaryKey, destination.id, destination.entity])
        created[mappingIndex(entityMapping)] += 1
    }

    // MARK: $manager lookups

    public func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        let index = try index(ofMappingNamed: name)
        var result: [ObjectRef] = []
        if followsIdentityRule(index) {
            for source in sourceInstances {
                if let found = try ruleDestination(index, sourceID: source.id) {
                    result.append(found.ref)
                    rememberKey(found.key, for: found.ref.id)
                }
            }
            return result
        }
        let lookup = try statement("SELECT dest_id, dest_entity, dest_pk FROM mapc_scratch.assoc WHERE mapping = ? AND source_id = ?")
        for source in sourceInstances {
            for row in try Row.fetchAll(lookup, arguments: [index, source.id]) {
                let ref = ObjectRef(entity: try row.stored(1, "an entity name"), id: try row.stored(0, "an object id"))
                result.append(ref)
                rememberKey(try row.stored(2, "a row key"), for: ref.id)
            }
        }
        return result
    }

    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        // Each related source object through the first mapping (in order) that migrated it.
        var result: [ObjectRef] = []
        let lookup = try statement("SELECT dest_id, dest_entity, dest_pk FROM mapc_scratch.assoc WHERE mapping = ? AND source_id = ? LIMIT 1")
        for source in sourceInstances {
            for (index, candidate) in mapping.entityMappings.enumerated() where candidate.source == source.entity {
                if followsIdentityRule(index) {
                    guard let found = try ruleDestination(index, sourceID: source.id) else { continue }
                    result.append(found.ref)
                    rememberKey(found.key, for: found.ref.id)
                    break
                }
                if let row = try Row.fetchOne(lookup, arguments: [index, source.id]) {
                    let ref = ObjectRef(entity: try row.stored(1, "an entity name"), id: try row.stored(0, "an object id"))
                    result.append(ref)
                    rememberKey(try row.stored(2, "a row key"), for: ref.id)
                    break
                }
            }
        }
        return result
    }

    public func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectRef]) throws -> [ObjectRef] {
        let index = try index(ofMappingNamed: name)
        var result: [ObjectRef] = []
        if followsIdentityRule(index) {
            let suffix = identitySuffix(index)
            for destination in destinationInstances where destination.id.hasSuffix(suffix) {
                let id = String(destination.id.dropLast(suffix.count))
                guard try ruleDestination(index, sourceID: id)?.ref.id == destination.id else { continue }
                if let entity = try sourceStore.entityName(ofID: id) { result.append(ObjectRef(entity: entity, id: id)) }
            }
            return result
        }
        let lookup = try statement("SELECT source_id FROM mapc_scratch.assoc WHERE mapping = ? AND dest_id = ?")
        for destination in destinationInstances {
            for id in try String.fetchAll(lookup, arguments: [index, destination.id]) {
                if let entity = try sourceStore.entityName(ofID: id) { result.append(ObjectRef(entity: entity, id: id)) }
            }
        }
        return result
    }

    // MARK: Phase 2

    /// Primary keys of destination objects recently returned by lookups, so setting a relationship
    /// to them needs no second query. Bounded: cleared when full.
    private var recentKeys: [String: Int64] = [:]

    private func rememberKey(_ key: Int64, for id: String) {
        if recentKeys.count >= 4_096 { recentKeys.removeAll(keepingCapacity: true) }
        recentKeys[id] = key
    }

    private func relatePhase() throws {
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            currentMapping = index
            // The default policy has nothing to do for a mapping without relationship mappings.
            let customPolicy = type(of: policies[index]) != EntityMigrationPolicy.self
            guard !relationshipsDone.contains(index), customPolicy || entityMapping.type == .copy || !entityMapping.relationships.isEmpty else {
                try hook(entityMapping) { try policies[index].endRelationshipCreation(entityMapping, manager: self) }
                continue
            }
            if sourceAttached, let compiled = compiledRelationships(index) {
                report(.relate, entityMapping.name, 0, created[index])
                for (sql, arguments) in compiled { try statement(sql).execute(arguments: arguments) }
                compiledWork.append("\(entityMapping.name).relationships")
                report(.relate, entityMapping.name, created[index], created[index], finished: true)
                try hook(entityMapping) { try policies[index].endRelationshipCreation(entityMapping, manager: self) }
                continue
            }
            var done = 0
            report(.relate, entityMapping.name, 0, created[index])
            let relate = { (destination: DestinationObject, sourceID: String, data: ObjectData?) throws in
                self.currentSource = (destination.id, data)
                self.currentSourceID = sourceID
                if let data { self.sourceGraph.remember(data) }
                try self.hook(entityMapping) { try self.policies[index].createRelationships(for: destination, mapping: entityMapping, manager: self) }
                done += 1
                if done % 10_000 == 0 { self.report(.relate, entityMapping.name, done, self.created[index]) }
            }
            if followsIdentityRule(index), entityMapping.sourceExpression == nil, let sourceEntity = entityMapping.source {
                // The objects this mapping created are found from its source objects by the identity rule.
                try sourceStore.forEachBatch(ofExactEntity: sourceEntity, batchSize: batchSize) { batch in
                    for data in batch {
                        guard let found = try ruleDestination(index, sourceID: data.id) else { continue }
                        var destination = DestinationObject(entity: found.ref.entity, id: found.ref.id)
                        destination.primaryKey = found.key
                        try relate(destination, data.id, data)
                    }
                }
            } else {
                var lastRow: Int64 = 0
                while true {
                    let rows = try Row.fetchAll(try statement("SELECT rowid, source_id, dest_pk, dest_id, dest_entity FROM mapc_scratch.assoc WHERE mapping = ? AND rowid > ? ORDER BY rowid LIMIT ?"),
                                                arguments: [index, lastRow, batchSize])
                    guard let last = rows.last else { break }
                    lastRow = try last.stored(0, "a row number")
                    // The batch's source objects in a few queries, when they all are of the mapping's source entity.
                    var sources: [String: ObjectData] = [:]
                    if entityMapping.sourceExpression == nil, let entity = entityMapping.source {
                        sources = try sourceStore.objects(ids: rows.map { try $0.stored(1, "a source id") }, ofExactEntity: entity)
                    }
                    for row in rows {
                        var destination = DestinationObject(entity: try row.stored(4, "an entity name"), id: try row.stored(3, "an object id"))
                        destination.primaryKey = try row.stored(2, "a row key")
                        let sourceID: String = try row.stored(1, "a source id")
                        try relate(destination, sourceID, sources[sourceID])
                    }
                }
            }
            currentSource = nil
            currentSourceID = nil
            report(.relate, entityMapping.name, done, created[index], finished: true)
            try hook(entityMapping) { try policies[index].endRelationshipCreation(entityMapping, manager: self) }
        }
    }

    /// The destination object being related in phase 2, with its source object when already read.
    private var currentSource: (destinationID: String, data: ObjectData?)?
    private var currentSourceID: String?

    /// The source object a destination object was created from: the object being related in
    /// phase 2 when it is that one, otherwise found through the association the mapping recorded
    /// or, for objects made by the identity rule, from the destination's identity.
    public func sourceObject(for destination: DestinationObject) throws -> SourceObject? {
        var id: String?
        if let current = currentSource, current.destinationID == destination.id {
            if let data = current.data { return SourceObject(data: data, graph: sourceGraph) }
            id = currentSourceID
        }
        if id == nil {
            id = try String.fetchOne(try statement("SELECT source_id FROM mapc_scratch.assoc WHERE dest_id = ? LIMIT 1"), arguments: [destination.id])
        }
        if id == nil {
            id = try ruleSource(ofDestination: destination.ref)
        }
        guard let id, let data = try sourceStore.object(id: id) else { return nil }
        sourceGraph.remember(data)
        return SourceObject(data: data, graph: sourceGraph)
    }

    /// The source id a rule-following mapping turned into this destination object, if one did.
    private func ruleSource(ofDestination destination: ObjectRef) throws -> String? {
        for (index, entityMapping) in mapping.entityMappings.enumerated() where followsIdentityRule(index) {
            let suffix = identitySuffix(index)
            guard let destinationName = entityMapping.destination, let sourceName = entityMapping.source, destination.id.hasSuffix(suffix),
                  let entity = destinationSchema.entity(named: destinationName), destinationSchema.hierarchy(under: entity).contains(where: { $0.name == destination.entity }) else { continue }
            let sourceID = String(destination.id.dropLast(suffix.count))
            if try sourceStore.entityName(ofID: sourceID) == sourceName { return sourceID }
        }
        return nil
    }

    /// Evaluates the mapping's relationship expressions for one destination object and writes
    /// them. A `copy` mapping carries each same-named source relationship over through the
    /// mappings of the related objects.
    public func applyRelationshipMappings(_ entityMapping: EntityMapping, to destination: DestinationObject) throws {
        guard let source = try sourceObject(for: destination), let destinationEntity = destinationSchema.entity(named: destination.entity) else { return }
        for relationship in destinationSchema.allRelationships(of: destinationEntity) where !relationship.isTransient {
            let targets: [ObjectRef]
            if let propertyMapping = entityMapping.relationshipMapping(named: relationship.name) {
                let result = try evaluate(propertyMapping.expression, for: source, destination: destination, mapping: entityMapping, property: relationship.name) {
                    try evaluators[mappingIndex(entityMapping)].evaluate($0)
                }
                targets = try (result.elements ?? (result.isNull ? [] : [result])).map { item in
                    guard case .object(let ref) = item else {
                        throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: relationship.name,
                                                   message: "a relationship takes objects, but the expression gave \(item.kindName)")
                    }
                    return ref
                }
            } else if entityMapping.type == .copy, let sourceIDs = source.data.relationships[relationship.name] {
                let refs = try sourceIDs.compactMap { id in try sourceStore.entityName(ofID: id).map { ObjectRef(entity: $0, id: id) } }
                targets = try destinationInstances(forSourceRelationshipNamed: relationship.name, sourceInstances: refs)
            } else {
                continue
            }
            try setRelationship(relationship.name, of: destination, to: targets, mapping: entityMapping)
        }
    }

    /// Sets a destination relationship to destination objects.
    public func setRelationship(_ name: String, of destination: DestinationObject, to targets: [ObjectRef], mapping entityMapping: EntityMapping) throws {
        guard let writer, let owner = try destination.primaryKey ?? writer.primaryKey(ofID: destination.id, entity: destination.entity),
              let destinationEntity = destinationSchema.entity(named: destination.entity),
              case .relationship(let relationship)? = destinationSchema.property(named: name, in: destinationEntity) else {
            throw MigrationError.setup("no relationship '\(name)' on \(destination.entity) in \(destinationSchema.version)")
        }
        if !relationship.isToMany && targets.count > 1 {
            throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                       message: "to-one relationship was given \(targets.count) objects (\(targets.prefix(3).map(\.description).joined(separator: ", ")))")
        }
        let allowed = destinationSchema.entity(named: relationship.destination).map { Set(destinationSchema.hierarchy(under: $0).map(\.name)) } ?? []
        var keys: [Int64] = []
        for target in targets {
            guard allowed.contains(target.entity) else {
                throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                           message: "\(target) is not a \(relationship.destination); check which entity mapping the expression names")
            }
            guard let key = try recentKeys[target.id] ?? writer.primaryKey(ofID: target.id, entity: target.entity) else {
                throw MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: name,
                                           message: "\(target) does not exist in the destination store")
            }
            keys.append(key)
        }
        if keys.isEmpty && !relationship.isToMany {
            try writer.setRelationship(name, of: destination.entity, owner: owner, targets: [])
        } else if !keys.isEmpty {
            try writer.setRelationship(name, of: destination.entity, owner: owner, targets: keys)
        }
    }

    // MARK: Phase 3

    private func validatePhase(_ db: Database) throws {
        report(.validate, nil, 0, nil)
        guard let destination = destinationStore else { return }
        let validator = StoreValidator(store: destination, db: db)
        let (violations, total) = try validator.validate { entity, id in
            if let row = try Row.fetchOne(db, sql: "SELECT mapping FROM mapc_scratch.assoc WHERE dest_id = ? LIMIT 1", arguments: [id]),
               let index = Int.fromDatabaseValue(row[0] as DatabaseValue), index >= 0, index < self.mapping.entityMappings.count {
                return self.mapping.entityMappings[index].name
            }
            // Rule-following mappings: a suffix names the mapping; no suffix means the first mapping of its source entity.
            let candidates = self.mapping.entityMappings.enumerated().filter { self.followsIdentityRule($0.offset) && $0.element.destination.map { name in
                self.destinationSchema.entity(named: name).map { self.destinationSchema.hierarchy(under: $0).contains { $0.name == entity } } ?? false } ?? false }
            return (candidates.first { !self.identitySuffix($0.offset).isEmpty && id.hasSuffix(self.identitySuffix($0.offset)) }
                ?? candidates.first { self.identitySuffix($0.offset).isEmpty })?.element.name
        }
        if total > 0 { throw MigrationError.validation(violations: violations, total: total) }
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            currentMapping = index
            try hook(entityMapping) { try policies[index].performCustomValidation(entityMapping, manager: self) }
        }
        for (index, entityMapping) in mapping.entityMappings.enumerated() {
            try hook(entityMapping) { try policies[index].end(entityMapping, manager: self) }
        }
        report(.validate, nil, 0, nil, finished: true)
    }
}
