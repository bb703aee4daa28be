import Foundation
import MapcFoundation
import MapcModel

/// What a policy's hook does through an object's subscript that needs the run: a
/// `DestinationObject` is a value the hook holds, and neither its subscript nor a
/// `SourceObject`'s can throw. This log, installed for the run's phases on the run's thread, takes:
///
/// - a value a subscript could not read (a key a source entity lacks, an external value whose file
///   is missing), which fails the run when the hook returns, the subscript having given nil;
/// - a key read that the entity does not have, which fails the run when the hook returns (Core
///   Data's `value(forKey:)` raises on one; nil would send a ported policy into its fallback and
///   overwrite the values it meant to keep);
/// - a read of an attribute an object in the store does not hold in its copy (one made with
///   `DestinationObject(ref)` holds none): the stored value, as `dInstance.value(forKey:)` gives
///   it, where nil made `x["n"] = x["n"] + 1` write a value computed from nothing;
/// - values set on an object in the store (handed to `createRelationships`, returned by `insert`,
///   or made from a reference a lookup gave), written at once as `MigrationManager.setValue`
///   writes them (Core Data's context saves what a hook sets on them; a transient attribute is
///   the object's own and is not stored); a value that cannot be written fails the run when the
///   hook returns;
/// - such a read or write from another thread than the hook's, which the store's connection
///   cannot serve: it fails the run, where it was lost without a word.
final class PolicyHookLog: @unchecked Sendable {
    let schema: Schema
    /// Writes a value set on an object in the store, as `MigrationManager.setValue` does, at
    /// once: in the hook's order among its other writes.
    var write: ((DestinationObject, String, Value) throws -> Void)?
    /// Reads an attribute of an object in the store as stored (nil: none stored under that name).
    var read: ((DestinationObject, String) throws -> Value?)?
    /// The first failure of the hook running, said when it returns (later ones are not acted on).
    private var failure: (any Error)?
    /// Guards `failure`, which a hook's other threads may set.
    private let lock = NSLock()

    init(schema: Schema) { self.schema = schema }

    // MARK: The thread's log

    private static let threadKey = "mapc.PolicyHookLog"
    private static let registryLock = NSLock()
    /// The logs installed, on any thread: a subscript on a thread of a policy's own finds the
    /// run's when there is one.
    nonisolated(unsafe) private static var installedLogs: [ObjectIdentifier: PolicyHookLog] = [:]

    /// The log of the run on this thread while its phases run, or nil.
    static var current: PolicyHookLog? { Thread.current.threadDictionary[threadKey] as? PolicyHookLog }

    /// The one log installed in the process, when a subscript is used off its thread (several:
    /// which run a thread serves cannot be told).
    static var onlyInstalled: PolicyHookLog? {
        registryLock.withLock { installedLogs.count == 1 ? installedLogs.values.first : nil }
    }

    /// Runs `body` with this log as the thread's (a run inside another's keeps each its own).
    func installed<T>(_ body: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let outer = dictionary[Self.threadKey]
        dictionary[Self.threadKey] = self
        Self.registryLock.withLock { Self.installedLogs[ObjectIdentifier(self)] = self }
        defer {
            dictionary[Self.threadKey] = outer
            Self.registryLock.withLock { Self.installedLogs[ObjectIdentifier(self)] = nil }
        }
        return try body()
    }

    // MARK: What the subscripts tell it

    /// A key read through the subscript that the object's copy does not hold: the stored value
    /// of an object in the store; a mistake where the entity has no such attribute (an attribute
    /// nil, or not set yet, is none).
    func noteRead(_ key: String, of object: DestinationObject) -> Value? {
        guard failed == nil, let entity = schema.entity(named: object.entity) else { return nil }
        let attributes = schema.allAttributes(of: entity)
        if let attribute = attributes.first(where: { $0.name == key }) {
            guard object.primaryKey != nil, !object.isSourceObject, !attribute.isTransient, let read else { return nil }
            do { return try read(object, key) } catch { fail(error); return nil }
        }
        let message: String
        if schema.allRelationships(of: entity).contains(where: { $0.name == key }) {
            message = "it read '\(key)' of \(object.ref) through the destination object's subscript, which holds its attributes: '\(key)' is a relationship. "
                + "Phase 2 sets it from the source's: read that (`manager.sourceObject(for:)`, then `value(forKeyPath:)`) and find its objects with `manager.destinationInstances(forSourceRelationshipNamed:sourceInstances:)`"
        } else {
            let names = attributes.map(\.name)
            message = "it read '\(key)' of \(object.ref), which \(object.entity) does not have in \(schema.version)"
                + (Suggestions.didYouMean(key, in: names).map { "; \($0)" } ?? "; its attributes are \(names.prefix(12).map { "'\($0)'" }.joined(separator: ", "))\(names.count > 12 ? ", …" : "")")
                + " (Core Data's `value(forKey:)` raises on such a key; the subscript gave nil)"
        }
        fail(MigrationError.policy(mapping: "", message: message))
        PolicyCrash.noteMistake(message)
        return nil
    }

    /// A value set through the subscript of an object already in the store: written now.
    func noteWrite(_ value: Value, _ attribute: String, of object: DestinationObject) {
        guard failed == nil, let write else { return }
        do { try write(object, attribute, value) } catch { fail(error) }
    }

    /// A value a subscript could not read (a key a source entity lacks, an external value whose
    /// file is missing): the subscript gives nil, and the run fails naming it when the hook returns.
    func noteUnreadable(_ attribute: String, of object: ObjectRef, _ error: any Error) {
        guard failed == nil else { return }
        let message = "it read '\(attribute)' of \(object), which cannot be read: \(error)"
        fail(MigrationError.policy(mapping: "", message: message))
        PolicyCrash.noteMistake("it read '\(attribute)' of \(object), which cannot be read (\(error)), and was given nil")
    }

    /// A read or write of an object in the store from a thread other than the hook's.
    func noteOffThread(_ doing: String, _ attribute: String, of object: DestinationObject) {
        fail(MigrationError.policy(mapping: "", message: "it \(doing) '\(attribute)' of \(object.ref) on a thread of its own: a migration reads and writes its objects on the thread "
                                   + "that calls the hook, and nothing was read or written there; do it in the hook itself (a hook's work on other threads must come back to it)"))
    }

    /// Takes the failure the hook left, if any.
    func take() -> (any Error)? {
        lock.withLock {
            defer { failure = nil }
            return failure
        }
    }

    private var failed: (any Error)? { lock.withLock { failure } }

    private func fail(_ error: any Error) {
        lock.withLock { if failure == nil { failure = error } }
    }
}
