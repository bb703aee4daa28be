import Foundation

/// The three phases of a migration.
public enum MigrationPhase: String, Sendable, CaseIterable {
    /// Phase 1: create destination objects and their attributes.
    case create
    /// Phase 2: set relationships.
    case relate
    /// Phase 3: validate the whole destination store.
    case validate
}

/// Where a migration is, for progress displays. Each step's first update says it has begun:
/// phase `.create`, no mapping, nothing done (`isStepStart`); a failure after it is the step's.
public struct MigrationProgress: Sendable {
    /// The phase.
    public var phase: MigrationPhase
    /// The entity mapping being worked on; nil between mappings and during validation.
    public var mapping: String?
    /// Objects done in this mapping (in validation: entities whose objects were checked).
    public var completed: Int
    /// Objects to do in this mapping, when known: in phase 1 the source objects it reads (for a
    /// filtered mapping, more than it creates), in phase 2 the objects it relates; in validation
    /// the entities to check.
    public var total: Int?
    /// Whether this mapping's work in this phase (or the validation) is done.
    public var isFinished = false
    /// The step of a progressive migration, from 0.
    public var step = 0
    /// How many steps the migration has.
    public var steps = 1

    /// Whether this is the first update of a step: it has begun, and no mapping has started.
    public var isStepStart: Bool { phase == .create && mapping == nil && completed == 0 && !isFinished }
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

    /// This pass's summary followed by the next pass's, as one step's: objects created by every
    /// mapping, seconds of each phase summed, the objects the last counted.
    func followed(by next: MigrationSummary) -> MigrationSummary {
        var joined = self
        joined.created += next.created
        joined.phaseSeconds.merge(next.phaseSeconds, uniquingKeysWith: +)
        joined.destinationCounts = next.destinationCounts
        joined.compiled += next.compiled
        return joined
    }

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
