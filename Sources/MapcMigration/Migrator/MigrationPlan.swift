import Foundation
import MapcModel

/// The steps from a store's version to a target version.
public struct MigrationPlan: Sendable {
    /// The store.
    public var store: URL
    /// The version the store is at (identified by its hashes).
    public var current: Schema
    /// The version to reach.
    public var target: Schema
    /// The steps, in order; empty when the store is there already.
    public var steps: [MigrationStep]
    /// What migrating would leave out that the store holds besides its objects (Core Data's
    /// persistent history, tables the model does not have), in sentences; empty when nothing.
    public var notes: [String] = []
    /// Why a run would refuse to write a step's version in the store's own format (a Core Data
    /// store of a version with what mapc does not import), when it would: a run writing mapc's
    /// format (`MigrationOptions.destinationFormat`) does not.
    package var refusalInStoreFormat: String?

    /// Whether the store needs migrating.
    public var isNeeded: Bool { !steps.isEmpty }

    /// What inferred steps would drop: removed entities and properties, by step, that the store
    /// may hold a value of (a run asks the store again, under its lock).
    public var droppedValues: [(step: MigrationStep, dropped: [String])] {
        steps.filter { $0.isInferred && !$0.droppedValues.isEmpty }.map { ($0, $0.droppedValues) }
    }
}
