import Foundation
import MapcFoundation
import MapcModel

/// A custom migration policy: the equivalent of subclassing `NSEntityMigrationPolicy`.
///
/// Subclass it, override the hooks you need, and register the subclass by name with
/// `PolicyRegistry.shared.register(_:as:)`; an entity mapping names it with `policy:`. The hooks run
/// in Core Data's order: `begin` (phase 1, each mapping in order), `createDestinationInstances` for
/// each source object, `endInstanceCreation`; then `createRelationships` for each destination
/// object and `endRelationshipCreation` (phase 2); then `performCustomValidation` and `end` (phase 3).
/// Each default does the declarative work, so an override can call `super` and then add to it.
open class EntityMigrationPolicy {
    /// Creates the policy; one instance serves one entity mapping for one migration.
    public required init() {}

    /// Destination attributes this policy sets itself, so the checker does not require expressions for them.
    open class var providedAttributes: Set<String> { [] }

    /// Destination entities whose objects this policy creates itself (objects no source object
    /// becomes, as a tag made once for every post naming it): `mapc check` checks the names against
    /// the destination version and `mapc graph` draws them. Informational: what a policy inserts
    /// is held to the schema either way.
    open class var createdEntities: Set<String> { [] }

    /// Whether this policy keeps the default `createRelationships` (it does not override it). Then
    /// mapc may set the relationships of all the mapping's objects at once with SQL, as it does for
    /// mappings without a policy, instead of calling `createRelationships` per object: the same
    /// result, much faster on large stores. Swift cannot tell whether a subclass overrides a
    /// method, so a policy says so; a policy that overrides `createRelationships` must leave this
    /// `false` (the default). mapc checks the word on the mapping's first object: an override that
    /// does not run the default (no `super`), or runs it and writes more itself (a relationship,
    /// a value, an object), is then called for every object. Only the first object is looked at:
    /// an override whose extra work depends on the object must say `false`. Subclasses inherit the answer: a
    /// subclass of a policy that says `true` and overrides `createRelationships` must override this
    /// again with `false`. mapc still relates one by one whatever SQL would relate differently from
    /// the default: objects of another entity than the mapping's destination, objects associated
    /// with sources of another entity, or an object associated with several sources.
    open class var keepsDefaultRelationships: Bool { false }

    /// Functions callable from the mapping's expressions as `FUNCTION($entityPolicy, "name:", args…)`.
    open var functions: [String: PolicyFunction] { [:] }

    /// Start of phase 1 for this mapping.
    open func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Creates the destination objects for one source object. The default evaluates the attribute
    /// expressions, creates one destination object and associates it with the source object.
    open func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        let destination = try manager.makeDestination(for: source, mapping: mapping)
        try manager.insert(destination, associatedWith: source, mapping: mapping)
    }

    /// End of phase 1 for this mapping.
    open func endInstanceCreation(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Sets the relationships of one destination object. The default evaluates the relationship expressions.
    open func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {
        ranDefaultRelationships = true
        try manager.applyRelationshipMappings(mapping, to: destination)
    }

    /// Set when the default `createRelationships` runs: mapc checks on a mapping's first object
    /// that a policy saying `keepsDefaultRelationships` does run it.
    private var ranDefaultRelationships = false

    /// Whether the default `createRelationships` ran during `body`.
    func runsDefaultRelationships(_ body: () throws -> Void) throws -> Bool {
        ranDefaultRelationships = false
        try body()
        return ranDefaultRelationships
    }

    /// End of phase 2 for this mapping.
    open func endRelationshipCreation(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Phase 3, before the declarative validation (as Core Data calls it before its save
    /// validation): complete the objects (what it writes is validated with the rest), or throw
    /// `MigrationError.validation` to reject the result.
    open func performCustomValidation(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// The last hook, once the migration has validated.
    open func end(_ mapping: EntityMapping, manager: MigrationManager) throws {}
}

/// The policies an executable knows, by the name mapping files use.
public final class PolicyRegistry: @unchecked Sendable {
    /// The registry `mapc` and `MigrationManager` use by default.
    public static let shared = PolicyRegistry()

    private let lock = NSLock()
    /// Per name: the class, and how an instance is made for each migration.
    private var policies: [String: (type: EntityMigrationPolicy.Type, make: @Sendable () -> EntityMigrationPolicy)] = [:]

    /// Creates an empty registry.
    public init() {}

    /// Registers a policy class under a name (and, for Core Data style module-qualified names, also
    /// under its last component, so `UnCloudNotes.MyPolicy` and `MyPolicy` both work). Each
    /// migration makes its own instance with `init()`.
    public func register(_ policy: EntityMigrationPolicy.Type, as name: String) {
        add(name, (policy, { policy.init() }))
    }

    /// Registers a policy class under a name with how to make it: each migration calls `make`
    /// for an instance of its own, so a policy can be given what it needs (settings, a service)
    /// rather than reading globals.
    public func register<Policy: EntityMigrationPolicy>(_ policy: Policy.Type, as name: String, make: @escaping @Sendable () -> Policy) {
        add(name, (policy, make))
    }

    private func add(_ name: String, _ entry: (type: EntityMigrationPolicy.Type, make: @Sendable () -> EntityMigrationPolicy)) {
        lock.withLock {
            policies[name] = entry
            if let short = name.split(separator: ".").last, String(short) != name { policies[String(short)] = entry }
        }
    }

    /// The folder of the policy files compiled into this process (`mapc`'s policies folder):
    /// the runtime's own messages name their files `MapcProjectPolicies/<file>`.
    private var compiledFolder: String?

    /// Notes the folder of the policy files compiled into this process.
    package func noteCompiled(from folder: String) {
        lock.withLock { compiledFolder = folder }
    }

    /// Where the runtime's name of a compiled policy file (`MapcProjectPolicies/X.swift`) is:
    /// said beside a crash of a policy of those files; nil for a policy built in.
    package func compiledSource(of policy: EntityMigrationPolicy.Type) -> String? {
        guard String(reflecting: policy).hasPrefix("\(Self.compiledModule)."), let folder = lock.withLock({ compiledFolder }) else { return nil }
        return "the runtime's \(Self.compiledModule)/ is \(folder)/"
    }

    /// The module policy files are compiled into.
    package static let compiledModule = "MapcProjectPolicies"

    /// Policy classes nested in a type, which the policy files declare but are not registered,
    /// by their qualified name (`Outer.Name`), with where they are.
    private var nested: [String: String] = [:]

    /// Notes a policy class declared inside another type, which is not registered: a mapping naming
    /// it finds nothing (rather than a top-level class of its last name) and is told why.
    package func markNested(_ qualifiedName: String, at place: String) {
        lock.withLock { nested[qualifiedName] = place }
    }

    /// Classes of the policy files that are not registered for another reason than nesting (a
    /// subfolder's file, `private`, no policy base class), by their name, with where and why.
    private var unregistered: [String: String] = [:]

    /// Notes a class the policy files declare that is not registered, with where it is and why
    /// (`reason`, a sentence with what to change): a mapping naming it is told that.
    package func markUnregistered(_ name: String, because reason: String) {
        lock.withLock { if unregistered[name] == nil { unregistered[name] = reason } }
    }

    /// Why the project's policy files were not loaded (they do not compile, no compiler), when a
    /// command goes on without them (`import`, the language server): a mapping naming one of
    /// them is told that, not to write a class the files may well declare.
    private var notLoaded: String?

    /// Notes that the project's policy files were not loaded, and why.
    package func markNotLoaded(because reason: String) {
        lock.withLock { notLoaded = reason }
    }

    private func entry(named name: String) -> (type: EntityMigrationPolicy.Type, make: @Sendable () -> EntityMigrationPolicy)? {
        lock.withLock {
            if let exact = policies[name] { return exact }
            if nested[name] != nil { return nil }
            return name.split(separator: ".").last.flatMap { policies[String($0)] }
        }
    }

    /// The policy class registered under a name (module-qualified names also match their last component).
    public func policy(named name: String) -> EntityMigrationPolicy.Type? {
        entry(named: name)?.type
    }

    /// A new instance of the policy registered under a name, made as it was registered.
    package func makePolicy(named name: String) -> EntityMigrationPolicy? {
        entry(named: name)?.make()
    }

    /// Every registered name.
    public var names: [String] { lock.withLock { policies.keys.sorted() } }

    /// How to make a policy that is not registered known: a close name when there is one (by the
    /// whole name or by the class name after the module's), otherwise where its code goes.
    package func hint(forUnknownPolicy name: String) -> String {
        if let place = lock.withLock({ nested[name] }) {
            return "\(name) is declared inside another type (\(place)), and mapc registers the policy classes declared at the top level of a file: move it to the top level and name it by its class name"
        }
        let className = { (name: String) in name.split(separator: ".").last.map(String.init) ?? name }
        if let reason = lock.withLock({ unregistered[name] ?? unregistered[className(name)] }) { return reason }
        if let reason = lock.withLock({ notLoaded }) {
            return "the project's policy files were not loaded, so no policy of theirs is known: mend them and check again (\(reason))"
        }
        let classes = Set(names.map(className)).sorted()
        if let suggestion = Suggestions.didYouMean(name, in: names) ?? Suggestions.didYouMean(className(name), in: classes) { return suggestion }
        return "write a class \(className(name)) inheriting from EntityMigrationPolicy in policies/\(className(name)).swift "
            + "(the mapc command compiles the policies folder beside the schemas folder, or the one --policies names), or register it with PolicyRegistry; see docs/policies.md"
            + (classes.isEmpty ? "" : " (registered now: \(classes.joined(separator: ", ")))")
    }
}
