import Foundation
import MapcModel

/// What a custom policy may ask of the migration that runs it: the equivalent of
/// `NSMigrationManager` as an `NSEntityMigrationPolicy` sees it during `migrateStore`. Every hook of
/// `EntityMigrationPolicy` receives it. It offers the `$manager` lookups of the expression language
/// too (`MigrationManagerFunctions`), which a mapping's own expressions ask of the run directly.
///
/// It is a face of the run (`MigrationRun`), which owns the stores' connections: a policy reads
/// source objects through `SourceObject` and writes destination objects through `insert`, never the
/// stores themselves (a call into one from a hook would re-enter the run's connection). It holds
/// the run weakly: kept past its migration, every call throws.
public final class MigrationManager: MigrationManagerFunctions {
    private weak var run: MigrationRun?
    /// The mapping model being run.
    public let mapping: MappingModel
    /// The schema of the destination version.
    public let destinationSchema: Schema
    /// State the policies of one migration share, as `NSMigrationManager.userInfo` is: empty at
    /// the start of each step of each store (each pass of a step of several), and seen by every mapping's policy (a policy's own
    /// properties are its mapping's alone). Kept out of module globals, which every store of a
    /// batch would share.
    public var userInfo: [String: Any] = [:]

    init(run: MigrationRun) {
        self.run = run
        mapping = run.mapping
        destinationSchema = run.destinationSchema
    }

    /// The run, counting a write the policy asks for itself (`MigrationRun.policyWrites`).
    private func written() throws -> MigrationRun {
        let run = try running()
        run.policyWrites += 1
        return run
    }

    private func running() throws -> MigrationRun {
        guard let run else { throw MigrationError.setup("the migration this manager served has ended; use the manager only in the hooks it is passed to") }
        return run
    }

    // MARK: Lookups (`$manager` and policies)

    /// The destination objects an entity mapping made from the source objects (Core Data's
    /// `destinationInstances(forEntityMappingName:sourceInstances:)`).
    public func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        try running().destinationInstances(forEntityMappingNamed: name, sourceInstances: sourceInstances)
    }

    /// The destination objects made from the source objects by whichever mapping made them, for a
    /// source relationship's targets.
    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
        try running().destinationInstances(forSourceRelationshipNamed: name, sourceInstances: sourceInstances)
    }

    /// The source objects an entity mapping made the destination objects from (Core Data's
    /// `sourceInstances(forEntityMappingName:destinationInstances:)`).
    public func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectRef]) throws -> [ObjectRef] {
        try running().sourceInstances(forEntityMappingNamed: name, destinationInstances: destinationInstances)
    }

    /// The source object a destination object was created from, or nil when none was recorded.
    public func sourceObject(for destination: DestinationObject) throws -> SourceObject? {
        try running().sourceObject(for: destination)
    }

    // MARK: Destination objects

    /// A destination object for a source object: the mapping's destination entity (or `entity`),
    /// with every attribute expression evaluated and defaults for the rest. Its identity is the
    /// source's for the first mapping reading that source entity, `sourceID.MappingName` otherwise,
    /// with `.Entity` after it for an `entity` other than the mapping's (ids are unique in a store)
    /// (kept by formats that store identities; others identify it by its key once inserted).
    public func makeDestination(for source: SourceObject, mapping entityMapping: EntityMapping, entity: String? = nil) throws -> DestinationObject {
        try running().makeDestination(for: source, mapping: entityMapping, entity: entity)
    }

    /// Writes a destination object and records that `mapping` created it from `source`. Returns
    /// the object as stored, with its key and identity.
    @discardableResult
    public func insert(_ destination: DestinationObject, associatedWith source: SourceObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        try written().insert(destination, associatedWith: source, mapping: entityMapping)
    }

    /// Writes a new destination object that no source object is migrated into, as a Core Data
    /// policy inserts a new object into the destination context (a `Continent` made once for
    /// many countries). It counts as created by the mapping; `setRelationship` links it.
    @discardableResult
    public func insert(_ destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> DestinationObject {
        try written().insert(destination, mapping: entityMapping)
    }

    /// Records that `mapping` created `destination` (already inserted) from `source`
    /// (`NSMigrationManager.associate`): lookups then find it, and phase 2 relates it.
    public func associate(source: ObjectRef, destination: DestinationObject, mapping entityMapping: EntityMapping) throws {
        try written().associate(source: source, destination: destination, mapping: entityMapping)
    }

    // MARK: Relationships

    /// Evaluates the mapping's relationship expressions for one destination object and writes
    /// them: what the default `createRelationships` does. A `copy` mapping carries each
    /// same-named source relationship over through the mappings of the related objects.
    public func applyRelationshipMappings(_ entityMapping: EntityMapping, to destination: DestinationObject) throws {
        try running().applyRelationshipMappings(entityMapping, to: destination)
    }

    /// Sets an attribute of a destination object already inserted, from any hook after its
    /// creation (`createRelationships`, `endRelationshipCreation`, `performCustomValidation`):
    /// Core Data's `dInstance.setValue(_:forKey:)` there, which its context saves. The subscript
    /// of an object in the store (the one a hook is handed, one `insert` returned) writes through
    /// this too. The value is converted to the attribute's type as a mapping's are, or refused.
    public func setValue(_ value: Value, forKey key: String, of destination: DestinationObject, mapping entityMapping: EntityMapping) throws {
        try written().setValue(value, forKey: key, of: destination, mapping: entityMapping)
    }

    /// Sets a destination relationship of a destination object to destination objects, in order,
    /// replacing what it held, as Core Data's `setValue(_:forKey:)` does: a to-many's other
    /// objects are taken away (their inverse cleared), and none clears it.
    public func setRelationship(_ name: String, of destination: DestinationObject, to targets: [ObjectRef], mapping entityMapping: EntityMapping) throws {
        try written().setRelationship(name, of: destination, to: targets, mapping: entityMapping, replacing: true)
    }
}
