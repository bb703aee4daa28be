import Foundation
import MapcFoundation

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
///
/// `completed` and `total` count the work of one entity mapping in one phase (they start again at
/// 0 for the next mapping, named by `mapping`, at `mappingIndex` of `mappingCount`);
/// `fractionCompleted` estimates the whole migration's progress, from 0 to 1, never going back.
public struct MigrationProgress: Sendable {
    /// The phase.
    public var phase: MigrationPhase
    /// The entity mapping being worked on; nil between mappings and during validation.
    public var mapping: String?
    /// The position of `mapping` in its mapping file, from 0 (nil when there is no mapping).
    public var mappingIndex: Int?
    /// How many entity mappings the step's mapping has.
    public var mappingCount = 0
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

    /// An estimate of how much of the whole migration is done, from 0 to 1: the steps before
    /// this one, and in this one the phases weighted by their usual share of the time (creating
    /// objects 60%, relating them 25%, validating 15%), each phase divided evenly among the
    /// mappings and within a mapping by `completed` of `total`.
    public var fractionCompleted: Double {
        let inMapping: Double = isFinished ? 1 : total.map { $0 > 0 ? min(1, Double(completed) / Double($0)) : 1 } ?? 0
        let inPhase: Double
        switch phase {
        case .create, .relate:
            if let mappingIndex, mappingCount > 0 { inPhase = min(1, (Double(mappingIndex) + inMapping) / Double(mappingCount)) } else { inPhase = 0 }
        case .validate:
            inPhase = inMapping
        }
        let (start, share) = phase == .create ? (0.0, 0.6) : phase == .relate ? (0.6, 0.25) : (0.85, 0.15)
        return min(1, (Double(step) + start + share * inPhase) / Double(max(steps, 1)))
    }
}

/// What a migration did.
public struct MigrationSummary: Sendable {
    /// The source version.
    public var sourceVersion: String
    /// The destination version.
    public var destinationVersion: String
    /// Objects created by each entity mapping, in mapping order.
    public var created: ObjectCounts
    /// Seconds spent in each phase.
    public var phaseSeconds: [MigrationPhase: Double]
    /// Objects of each destination entity, after the migration.
    public var destinationCounts: ObjectCounts
    /// Entity mappings (and their relationships) that ran as compiled SQL rather than object by object.
    public var compiled: [String] = []
    /// What the run did that may not be meant (a policy that created nothing), said as notes.
    package var cautions: [String] = []

    /// This pass's summary followed by the next pass's, as one step's: objects created by every
    /// mapping, seconds of each phase summed, the objects the last counted.
    func followed(by next: MigrationSummary) -> MigrationSummary {
        var joined = self
        joined.created = joined.created + next.created
        joined.phaseSeconds.merge(next.phaseSeconds, uniquingKeysWith: +)
        joined.destinationCounts = next.destinationCounts
        joined.compiled += next.compiled
        joined.cautions += next.cautions
        return joined
    }

    /// The summary as JSON.
    package var json: JSONValue {
        .object([
            ("source", .string(sourceVersion)), ("destination", .string(destinationVersion)),
            ("created", .object(created.map { ($0.name, .integer(Int64($0.count))) })),
            ("seconds", .object(MigrationPhase.allCases.map { ($0.rawValue, .double((phaseSeconds[$0] ?? 0).rounded(toPlaces: 3))) })),
            ("objects", .object(destinationCounts.map { ($0.name, .integer(Int64($0.count))) })),
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
