import Foundation
import MapcModel

/// What a migration run has done so far, mapping by mapping: the objects each mapping created,
/// what ran as SQL, which mappings are past phase 1 or have their relationships set, which objects
/// recorded no association, and what validation counted. Phases 1 and 2 write it as they go (it is
/// read while they run); phase 3 returns its counts; the summary is made from it when the run ends.
struct MigrationLedger {
    /// Objects created by each mapping, by position.
    var created: [Int]
    /// Source objects handed to each mapping's `createDestinationInstances` (past its filter).
    var handed: [Int]
    /// What ran as SQL: mapping names, and "Name.relationships".
    var compiledWork: [String] = []
    /// Mappings whose relationships were set while their objects were created.
    var relationshipsDone: Set<Int> = []
    /// Mappings that have created all their objects (phase 1 is past them).
    var creationFinished: Set<Int> = []
    /// Mappings whose associations are not one per object of the mapping's own entities: an
    /// object of another entity, one made from a source of another entity, or one a policy
    /// associated itself (`associate`, which may give an object a second source). SQL would relate
    /// their objects differently from `createRelationships` once per association, so they are
    /// related one by one.
    var irregularAssociations: Set<Int> = []
    /// Per destination table, the key ranges of objects created without recording associations,
    /// with their mappings: enough to say which mapping made an object.
    private(set) var unrecordedBlocks: [(table: String, range: ClosedRange<Int64>, mapping: Int)] = []
    /// The objects of each entity that validation counted (`ValidationPhase` returns them): the summary's counts.
    var validatedCounts: [String: Int]?
    /// Mappings with relationship expressions whose policy related objects without ever running
    /// the default `createRelationships` (an override not calling `super`): the expressions set nothing.
    var relationshipExpressionsUnused: Set<Int> = []
    /// Entities whose objects a policy's hooks inserted (with ids of the policy's making).
    var entitiesPoliciesWrote: Set<String> = []

    /// An empty ledger for a model of `mappingCount` entity mappings.
    init(mappingCount: Int) {
        created = Array(repeating: 0, count: mappingCount)
        handed = created
    }

    /// Records that a mapping made the objects under `keys` in `table` without recording their
    /// associations: consecutive keys extend the mapping's last block.
    mutating func noteUnrecorded(_ keys: ClosedRange<Int64>, in table: String, by mapping: Int) {
        if let last = unrecordedBlocks.last, last.table == table, last.mapping == mapping, last.range.upperBound < keys.lowerBound, last.range.upperBound + 1 == keys.lowerBound {
            unrecordedBlocks[unrecordedBlocks.count - 1].range = last.range.lowerBound...keys.upperBound
        } else {
            unrecordedBlocks.append((table, keys, mapping))
        }
    }

    /// The mapping that made the object under `key` in `table` without recording its association.
    func unrecordedMapping(ofKey key: Int64, inTable table: String) -> Int? {
        unrecordedBlocks.first { $0.table == table && $0.range.contains(key) }?.mapping
    }

    /// The run's summary: objects created per mapping, and per destination entity the count
    /// validation made (or `count` gives, for an entity it did not count).
    func summary(of mapping: MappingModel, destination: Schema, phaseSeconds: [MigrationPhase: Double],
                 count: (String) throws -> Int) throws -> MigrationSummary {
        var counts: [(String, Int)] = []
        for entity in destination.entities {
            counts.append((entity.name, try validatedCounts?[entity.name] ?? count(entity.name)))
        }
        var summary = MigrationSummary(sourceVersion: mapping.source, destinationVersion: mapping.destination,
                                       created: ObjectCounts(zip(mapping.entityMappings, created).map { ($0.name, $1) }), phaseSeconds: phaseSeconds,
                                       destinationCounts: ObjectCounts(counts), compiled: compiledWork)
        // A policy handed objects that made none: a port of `insertNewObject` that never inserts
        // drops every object of its mapping, and the run succeeds.
        for (index, entityMapping) in mapping.entityMappings.enumerated() where entityMapping.policy != nil && handed[index] > 0 && created[index] == 0 {
            summary.cautions.append("mapping '\(entityMapping.name)' (policy \(entityMapping.policy ?? "")) was handed \(handed[index]) source object\(handed[index] == 1 ? "" : "s") and created none: "
                                    + "its objects are dropped. If that is not meant, its createDestinationInstances must insert what it makes (manager.insert(_:associatedWith:mapping:)); a remove mapping says a drop is meant")
        }
        // An override of createRelationships without `super` (Core Data's habit: set a value
        // there, forgetting the call) leaves every relationship the mapping declares unset.
        for index in relationshipExpressionsUnused.sorted() {
            let entityMapping = mapping.entityMappings[index]
            let names = entityMapping.relationships.isEmpty ? "the relationships it copies" : entityMapping.relationships.map(\.name).joined(separator: ", ")
            summary.cautions.append("mapping '\(entityMapping.name)' (policy \(entityMapping.policy ?? "")) declares relationship expressions (\(names)) that set nothing: its createRelationships "
                                    + "never called super.createRelationships, which evaluates them (what the policy set itself is kept). Call it from the override, or remove the expressions if the policy sets the relationships")
        }
        return summary
    }
}
