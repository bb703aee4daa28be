import Foundation
import MapcFoundation
import MapcModel
import MapcStore

/// A source object as a policy sees it: its stored data, and key paths through the source store.
public struct SourceObject {
    /// The stored values and relationships, as the store keeps them: in a Core Data store, an
    /// attribute that allows external storage keeps Core Data's marker or file name there. Read
    /// values through the subscript or `value(forKeyPath:)`, which give what the app reads.
    public let data: ObjectData
    let graph: StoreObjectGraph

    /// The object's reference.
    public var ref: ObjectRef { graph.ref(data) }

    /// The value at a key path such as `note.body`, following relationships through the source store.
    public func value(forKeyPath path: String) throws -> EvalValue {
        var current = EvalValue.object(ref)
        for key in path.split(separator: ".") {
            switch current {
            case .object(let object):
                guard let next = try graph.value(of: object, key: String(key)) else {
                    let names = graph.propertyNames(of: object) ?? []
                    throw MapcError.notFound("\(object) has no key '\(key)'" + (Suggestions.didYouMean(String(key), in: names).map { "; \($0)" } ?? ""))
                }
                current = next
            case .scalar(.null):
                return .null
            default:
                throw MapcError.notFound("cannot read key '\(key)' of \(current.kindName)")
            }
        }
        return current
    }

    /// An attribute value of the object itself, as the app reads it (an attribute that allows
    /// external storage gives its bytes). A value that cannot be read (its external file is
    /// missing) is nil here, and the migration fails, naming it, when the hook returns.
    public subscript(attribute: String) -> Value {
        do {
            if let value = try graph.attributeValue(attribute, of: data) ?? data.attributes[attribute] { return value }
            // A key the entity does not have is a mistake, as Core Data's `value(forKey:)` raises on
            // it: said once the policy returns (a subscript cannot throw), never read as nil.
            if !graph.has(attribute, in: data.entity) {
                let names = graph.propertyNames(of: ref) ?? []
                throw MapcError.notFound("\(data.entity) has no attribute '\(attribute)'" + (Suggestions.didYouMean(attribute, in: names).map { "; \($0)" } ?? ""))
            }
            return .null
        } catch {
            PolicyHookLog.current?.noteUnreadable(attribute, of: ref, error)
            return .null
        }
    }
}

/// A destination object being built by phase 1: its entity, identity and attribute values.
///
/// Values set through the subscript are coerced to the attribute's type when the object came from
/// `MigrationManager.makeDestination` (which knows the types); a value that does not fit is kept
/// aside and the object is refused when inserted, naming the object, attribute and value. Objects
/// created with `init` are coerced the same way when inserted.
public struct DestinationObject {
    /// The destination entity.
    public var entity: String { didSet { isStorable = false } }
    /// The identity it will have in the destination store.
    public var id: String
    /// Attribute values; unset attributes take their default. For an attribute that allows
    /// external storage in a Core Data store, the subscript reads and sets the bytes the app
    /// reads, which mapc stores in Core Data's form, as it does a default; a value put here
    /// directly is taken as that form when it is in it (as `SourceObject.data` holds it: `01`
    /// and the bytes, or a file's reference) and as bytes otherwise.
    public var attributes: [String: Value] {
        didSet {
            isStorable = false
            // A value put here directly is not known to be bytes any more.
            if !bytes.isEmpty { bytes = bytes.filter { attributes[$0] == oldValue[$0] } }
        }
    }
    /// The attributes whose values are bytes (set through the subscript, or made so by
    /// `makeDestination`), whatever their first byte, rather than a value put in `attributes`.
    var bytes: Set<String> = []
    /// For an object made by `makeDestination` whose entity keeps values in Core Data's external
    /// form: which attributes do, and the source graph that reads the files of values copied as stored.
    struct ExternalReading {
        var marked: Set<String>
        let graph: StoreObjectGraph
    }
    var external: ExternalReading?
    /// Whether `attributes` holds exactly the entity's stored attributes, each coerced to its
    /// type, as `makeDestination` builds them: such an object is written as it is, without the
    /// check (a second coercion of every value) that anything else set goes through. Any change
    /// but a value the subscript could coerce clears it.
    var isStorable = false
    /// The row's primary key once inserted.
    public internal(set) var primaryKey: Int64?
    /// The types of the entity's stored attributes, when known.
    var attributeTypes: [String: AttributeType] = [:]
    /// Values set that the attribute cannot hold, by attribute name, with the reason.
    var rejected: [String: String] = [:]

    /// Creates an object to insert.
    public init(entity: String, id: String, attributes: [String: Value] = [:]) {
        self.entity = entity
        self.id = id
        self.attributes = attributes
    }

    /// The destination object a reference names (one `destinationInstances(…)` returned), to
    /// pass to `setRelationship` and the other calls that take a destination object.
    public init(_ ref: ObjectRef) {
        self.init(entity: ref.entity, id: ref.id)
        primaryKey = ref.key
        isSourceObject = ref.isSourceObject
    }

    /// Set when made from a source object's reference by mistake: its key is the source's, and
    /// `setRelationship` refuses it on either side.
    var isSourceObject = false

    /// Reads or sets an attribute value. Within a policy's hook, reading a key the entity does not
    /// have fails the migration when the hook returns (as Core Data's `value(forKey:)` raises); an
    /// object in the store (`primaryKey` set) reads its stored value where this copy holds none,
    /// and a value set on it is written at once, as `MigrationManager.setValue` writes it.
    public subscript(attribute: String) -> Value {
        get {
            guard let value = attributes[attribute] else {
                // Not in this copy: an object in the store's stored value; a key the entity does
                // not have fails the run once the hook returns (`PolicyHookLog`).
                if let log = PolicyHookLog.current { return log.noteRead(attribute, of: self) ?? .null }
                if primaryKey != nil { PolicyHookLog.onlyInstalled?.noteOffThread("read", attribute, of: self) }
                return .null
            }
            guard !bytes.contains(attribute), let external, external.marked.contains(attribute), case .binary(let stored) = value,
                  !stored.isEmpty, case .success = CoreDataExternalValue.form(of: stored) else { return value }
            // A value in the stored form: its bytes, out of the marker or the file.
            do { return .binary(try CoreDataExternalValue.bytes(of: stored, files: external.graph.externalFiles ?? CoreDataExternalData(store: ""))) } catch {
                PolicyHookLog.current?.noteUnreadable(attribute, of: ref, error)
                return .null
            }
        }
        set {
            // An object already in the store: the value is written at once, as Core Data's
            // context saves what a hook sets on `dInstance`; a refusal fails the run when the
            // hook returns (`PolicyHookLog`).
            if primaryKey != nil {
                if let log = PolicyHookLog.current { log.noteWrite(newValue, attribute, of: self) }
                else { PolicyHookLog.onlyInstalled?.noteOffThread("set", attribute, of: self) }
            }
            rejected[attribute] = nil
            guard let type = attributeTypes[attribute] else {
                attributes[attribute] = newValue
                if case .binary = newValue { bytes.insert(attribute) }
                if !attributeTypes.isEmpty {
                    rejected[attribute] = Self.noStoredAttribute(attribute, of: entity, among: attributeTypes.keys.sorted())
                }
                return
            }
            switch ValueCoercion.coerce(.scalar(newValue), to: type) {
            case .success(let coerced):
                let wasStorable = isStorable
                attributes[attribute] = coerced
                isStorable = wasStorable
                if case .binary = coerced { bytes.insert(attribute) }
            case .failure(let problem):
                attributes[attribute] = newValue
                rejected[attribute] = problem.message
            }
        }
    }

    /// What is said of a value set under a name the entity stores no attribute of (`names`, the
    /// ones it stores), with the closest of them.
    static func noStoredAttribute(_ name: String, of entity: String, in version: String? = nil, among names: [String]) -> String {
        "\(entity) has no stored attribute '\(name)'" + (version.map { " in \($0)" } ?? "") + (Suggestions.didYouMean(name, in: names).map { "; \($0)" } ?? "")
    }

    /// The object's reference.
    public var ref: ObjectRef {
        var ref = ObjectRef(entity: entity, id: id, key: primaryKey)
        ref.isSourceObject = isSourceObject
        return ref
    }
}

/// Why a migration failed. Every case names the mapping, and where it applies the entity, the
/// object and the property; expression failures carry a diagnostic pointing into the mapping file.
public enum MigrationError: Error, Sendable, CustomStringConvertible {
    /// What an error of a policy's own says: its `LocalizedError` description, an `NSError`'s
    /// localized description, or else how Swift prints it.
    static func message(of error: any Error) -> String {
        if let described = (error as? LocalizedError)?.errorDescription { return described }
        if type(of: error) is NSError.Type { return error.localizedDescription }
        return "\(error)"
    }

    /// An expression failed at run time on one object.
    case expression(mapping: String, property: String?, object: ObjectRef, diagnostic: Diagnostic)
    /// An expression's result does not fit the destination property.
    case value(mapping: String, entity: String, object: String, property: String, message: String)
    /// The migrated store breaks the destination schema's rules.
    case validation(violations: [ValidationViolation], total: Int)
    /// A custom policy failed, as the message says (a policy may throw this itself).
    case policy(mapping: String, message: String)
    /// A custom policy's hook threw an error of its own: `error` is what it threw (a `catch` can
    /// match its type), `object` the source object the hook was working on, when it was working
    /// on one (phase 1's `createDestinationInstances`, phase 2's `createRelationships`).
    case policyFailed(mapping: String, object: ObjectRef?, error: any Error)
    /// The migration cannot start: nothing to migrate, no mapping for a step, an entity mapping
    /// a run cannot set up. (A store at another version than claimed, in use, or missing is a
    /// `MapcError`; an unknown policy a `DiagnosticsError`, as `check` reports it.)
    case setup(String)
    /// An inferred step would drop values and dropping was not accepted.
    case dataLoss(step: String, dropped: [String])
    /// The store holds tables no version of the model has, with rows, which a migration would
    /// leave out (`tables` names each with its rows); nothing was changed.
    case foreignTables(tables: [String])
    /// The run was cancelled by its caller; nothing was changed.
    case cancelled
    /// The store is no longer at the version its plan starts from (`planned`): another process
    /// migrated it (to `found`, when known) between the plan and the run's lock. Nothing was
    /// changed; plan again (`Migrator.migrate(storeAt:)` does, once).
    case storeChanged(store: String, planned: String, found: String?)

    public var description: String {
        switch self {
        case let .expression(mapping, property, object, diagnostic):
            let what = property.map { "property '\($0)' of " } ?? ""
            return "\(diagnostic.description) (mapping '\(mapping)', \(what)source object \(object))"
        case let .value(mapping, entity, object, property, message):
            return "mapping '\(mapping)', \(entity) '\(object)', property '\(property)': \(message)"
        case let .validation(violations, total):
            // Each rule's examples together, rules in the order found, with how many more break it.
            var rules: [[String?]: [ValidationViolation]] = [:], order: [[String?]] = []
            for violation in violations {
                let key = violation.ruleKey
                if rules[key] == nil { order.append(key) }
                rules[key, default: []].append(violation)
            }
            let shown = order.reduce(0) { $0 + (rules[$1]?.first?.sameRuleCount ?? 0) }
            // How many rules and in how many places (one rule's examples follow, a place a line).
            var lines = [total == 1 ? "the migrated store breaks a validation rule of the destination schema:"
                : total == shown ? "the migrated store breaks \(English.count(order.count, "validation rule")) of the destination schema, in \(total) places:"
                : "the migrated store breaks validation rules of the destination schema in \(total) places (\(English.count(order.count, "rule")) shown):"]
            for key in order {
                let examples = rules[key] ?? []
                lines += examples.map { "  \($0)" }
                let more = (examples.first?.sameRuleCount ?? examples.count) - examples.count
                if more > 0 { lines.append("  ... and \(more) more breaking the same rule") }
            }
            if total > shown { lines.append("  ... and \(total - shown) more breaking other rules") }
            if total == shown, violations.allSatisfy(\.wasInSource) {
                lines.append("every rule above was broken in the store before this run (Core Data checks no rules in a lightweight migration or a batch update, so a store can hold such values): "
                             + "repair the store first, or give these properties values in the step's mapping (`mapc infer` writes one to edit)")
            }
            return lines.joined(separator: "\n")
        case let .policy(mapping, message):
            return "mapping '\(mapping)': custom policy failed: \(message)"
        case let .policyFailed(mapping, object, error):
            return "mapping '\(mapping)'\(object.map { ", source object \($0)" } ?? ""): custom policy failed: \(Self.message(of: error))"
        case .setup(let message):
            return message
        case .cancelled:
            return "the migration was cancelled; nothing was changed"
        case let .storeChanged(store, planned, found):
            return "\(store) changed after its migration was planned: it was at \(planned) and is now \(found.map { "at \($0)" } ?? "at another version") "
                + "(another process migrated it meanwhile); this run changed nothing. Plan again: `mapc run` does so once by itself"
        case .foreignTables(let tables):
            return "the store holds tables or columns no version of the model has: \(tables.joined(separator: ", ")); a migration writes a new store from the model and would leave them out; "
                + "nothing was changed. Copy what they hold elsewhere first, or accept the loss explicitly (`--accept-data-loss`; in code, `MigrationOptions.acceptsDataLoss`)"
        case let .dataLoss(step, dropped):
            return "the inferred step \(step) would drop the values of \(dropped.joined(separator: ", ")); nothing was changed. "
                + "Write a mapping file for the step that keeps them where they belong, or accept the loss explicitly (`--accept-data-loss` on `mapc run` or `mapc test`; in code, `MigrationOptions.acceptsDataLoss`)"
        }
    }
}

/// Turns an expression's result into a value an attribute can hold, or says why it cannot: the
/// result's single value (a one-element collection gives its element), through `ValueRules.coerce`.
enum ValueCoercion {
    static func coerce(_ result: EvalValue, to type: AttributeType) -> Result<Value, SemanticError> {
        guard case .scalar(let value) = result else {
            if let items = result.elements, items.count == 1 { return coerce(items[0], to: type) }
            return .failure(SemanticError("\(result.kindName) cannot be stored in a \(type.rawValue) attribute"))
        }
        return ValueRules.coerce(value, to: type).mapError { SemanticError($0.message) }
    }
}

extension MigrationError {
    /// Where in a mapping file the failure comes from, as notes an editor can jump to: for each
    /// property a validation failure breaks (once per mapping and property), the expression giving
    /// it its value, or the mapping that gives it none; for a value the destination cannot hold,
    /// the expression that gave it. `mapping` is the failed step's (for a progressive migration,
    /// `plan.steps[progress.step]` of the last progress update, each of its `allPasses`). The
    /// CLI prints these under the error.
    public func notes(in mapping: MappingModel) -> [Diagnostic] {
        func expression(_ name: String, _ property: String) -> MappingExpression? {
            guard let entityMapping = mapping.entityMappings.first(where: { $0.name == name }) else { return nil }
            return (entityMapping.attributeMapping(named: property) ?? entityMapping.relationshipMapping(named: property))?.expression
        }
        switch self {
        case let .value(name, entity, object, property, _):
            guard let expression = expression(name, property) else { return [] }
            return [Diagnostic(.note, "\(entity) '\(object)' gets '\(property)' from \(expression.source.text)", at: expression.source.origin, length: expression.source.text.count)]
        case let .validation(violations, _):
            var seen: Set<[String]> = [], notes: [Diagnostic] = []
            // A uniqueness constraint's violation names its properties together ("name,tag"): each is one.
            for violation in violations {
                guard let name = violation.mapping, let properties = violation.property?.split(separator: ",").map(String.init),
                      let entityMapping = mapping.entityMappings.first(where: { $0.name == name }) else { continue }
                for property in properties where seen.insert([name, property]).inserted {
                    if let expression = expression(name, property) {
                        // A policy's hooks may have set it over the expression's value.
                        let policy = entityMapping.policy.map { ", or from what its custom policy \($0) set in its hooks" } ?? ""
                        notes.append(Diagnostic(.note, "'\(property)' of the objects '\(name)' creates comes from \(expression.source.text)\(policy)", at: expression.source.origin))
                    } else if let location = entityMapping.location, entityMapping.type == .transform, entityMapping.policy == nil {
                        notes.append(Diagnostic(.note, "mapping '\(name)' gives '\(property)' no value; add one under 'attributes:' or 'relationships:'", at: location))
                    }
                }
            }
            return notes
        default:
            return []
        }
    }
}

extension MigrationError: LocalizedError {
    public var errorDescription: String? { description }
}
