import Foundation
import MapcFoundation
import MapcModel

/// What a policy's hook did through a destination object's subscript that the run acts on when
/// the hook returns. A `DestinationObject` is a value the hook holds, so its subscript cannot
/// throw nor write; this log, installed for the run's phases on the run's thread, takes:
///
/// - a key read that the entity does not have, which fails the run naming it (Core Data's
///   `value(forKey:)` raises on one; nil would send a ported policy into its fallback and
///   overwrite the values it meant to keep);
/// - values set on an object already in the store (handed to `createRelationships`, returned by
///   `insert`, or made from a reference `destinationInstances` gave), which it writes at once as
///   `MigrationManager.setValue` does (Core Data's context saves what a hook sets on them); a
///   value that cannot be written fails the run when the hook returns.
final class PolicyHookLog {
    let schema: Schema
    /// The first key read that the object's entity does not have, said as the run's failure.
    private(set) var unknownKey: String?
    /// The first value set on an object in the store that could not be written, said as the
    /// run's failure (later ones are not written).
    private(set) var failedWrite: (any Error)?
    /// Writes a value set on an object in the store, as `MigrationManager.setValue` does, at
    /// once: in the hook's order among its other writes.
    var write: ((DestinationObject, String, Value) throws -> Void)?

    init(schema: Schema) { self.schema = schema }

    private static let threadKey = "mapc.PolicyHookLog"

    /// The log of the run on this thread while its phases run, or nil.
    static var current: PolicyHookLog? { Thread.current.threadDictionary[threadKey] as? PolicyHookLog }

    /// Runs `body` with this log as the thread's (a run inside another's keeps each its own).
    func installed<T>(_ body: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let outer = dictionary[Self.threadKey]
        dictionary[Self.threadKey] = self
        defer { dictionary[Self.threadKey] = outer }
        return try body()
    }

    /// A key read through the subscript that gave no value: a mistake where the entity has no
    /// such attribute (an attribute not set, or nil, is not).
    func noteRead(_ key: String, of object: ObjectRef) {
        guard unknownKey == nil, let entity = schema.entity(named: object.entity) else { return }
        let attributes = schema.allAttributes(of: entity).map(\.name)
        guard !attributes.contains(key) else { return }
        if schema.allRelationships(of: entity).contains(where: { $0.name == key }) {
            unknownKey = "it read '\(key)' of \(object) through the destination object's subscript, which holds its attributes: '\(key)' is a relationship. "
                + "Phase 2 sets it from the source's: read that (`manager.sourceObject(for:)`, then `value(forKeyPath:)`) and find its objects with `manager.destinationInstances(forSourceRelationshipNamed:sourceInstances:)`"
        } else {
            unknownKey = "it read '\(key)' of \(object), which \(object.entity) does not have in \(schema.version)"
                + (Suggestions.didYouMean(key, in: attributes).map { "; \($0)" } ?? "; its attributes are \(attributes.prefix(12).map { "'\($0)'" }.joined(separator: ", "))\(attributes.count > 12 ? ", …" : "")")
                + " (Core Data's `value(forKey:)` raises on such a key; the subscript gave nil)"
        }
        if let unknownKey { PolicyCrash.noteMistake(unknownKey) }
    }

    /// A value set through the subscript of an object already in the store: written now.
    func noteWrite(_ value: Value, _ attribute: String, of object: DestinationObject) {
        guard failedWrite == nil, let write else { return }
        do { try write(object, attribute, value) } catch { failedWrite = error }
    }

    /// Takes what the hook left: the unknown key it read, or the write that failed, if any.
    func take() -> (unknownKey: String?, failedWrite: (any Error)?) {
        defer { unknownKey = nil; failedWrite = nil }
        return (unknownKey, failedWrite)
    }
}
