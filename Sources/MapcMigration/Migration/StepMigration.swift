import Foundation
internal import GRDB
import MapcStore
import MapcFoundation

/// One migration step between two open stores, as a value: a mapping model run from a source store
/// into an empty destination store of the destination version, in whatever formats the two use,
/// the way `NSMigrationManager.migrateStore(from:…to:…)` does. `run()` makes a `MigrationRun`
/// that lives for that run only and drives its three phases; nothing is kept afterwards.
public struct StepMigration {
    /// The store migrated from (read only).
    public var source: Store
    /// The empty store migrated into.
    public var destination: Store
    /// The mapping model run.
    public var mapping: MappingModel
    /// The policies the mapping may name.
    public var policies: PolicyRegistry
    /// Source objects read per batch, at least 1 (`run()` refuses less with `MapcError.input`).
    public var batchSize = 2_000
    /// Whether mappings SQLite can run with the same results are compiled to SQL (when the source
    /// store is a file). Off, every object goes through the interpreter; tests compare the two.
    public var allowsSQL = true
    /// Reports progress; called on the migrating thread.
    public var progress: ((MigrationProgress) -> Void)?
    /// Asked between batches; when it returns true the run stops with `MigrationError.cancelled`.
    public var isCancelled: () -> Bool = { false }
    /// Whether objects keep their source keys where they can, as Core Data's lightweight (inferred)
    /// migration keeps `Z_PK`; off, keys are numbered from 1 per table in creation order, as Core
    /// Data's migration manager numbers the objects of a mapping model's step.
    package var keepsKeys = false
    /// The source entities the step's earlier passes read (multiple passes): their objects' bare
    /// identities are taken, so this pass's mappings of them add their suffix.
    package var entitiesReadByEarlierPasses: Set<String> = []
    /// Whether a pass of the step ran before this one (validation then holds every table's ids
    /// to the store's uniqueness: what the earlier passes made is not recorded in this one).
    package var followsAnotherPass = false
    /// Where Core Data's external values of the source are (`CoreDataExternalData`): beside the
    /// source store's file unless said (a progressive run reads every step's from the store it
    /// started from, since its intermediate files keep the first store's references).
    package var externalFiles: CoreDataExternalData?
    /// Called when the built store is complete, before it is validated: `StoreMigration` waits
    /// there for its checks of the source and starts the write-back of its own temporary file.
    var beforeValidation: (() throws -> Void)?
    /// Whether phase 1 reads each next batch of source objects while it works on the previous one
    /// (`BatchReadAhead`). `StoreMigration` sets it when no process can commit to the source while
    /// the step reads it: the store's write lock is held, or the source is a step's own file.
    var readsAhead = false

    /// Describes a step. The destination must be an empty store of the mapping's destination version.
    public init(source: Store, destination: Store, mapping: MappingModel, policies: PolicyRegistry = .shared) {
        self.source = source
        self.destination = destination
        self.mapping = mapping
        self.policies = policies
    }

    /// Runs the three phases; throws `MigrationError` naming what failed, leaving the destination
    /// to be discarded.
    public func run() throws -> MigrationSummary {
        if let problem = MigrationOptions.batchSizeProblem(batchSize, name: "StepMigration.batchSize") { throw MapcError.input(problem) }
        return try MigrationRun.run(self)
    }
}
