import MapcKit

/// The Moody 5 to 6 policy of objc.io's Core Data book, ported from `NSEntityMigrationPolicy`:
/// Moody 5 records each country's continent as a number (`isoContinent`); Moody 6 has `Continent`
/// objects. Each country is migrated as the mapping says, then linked to the continent of its code,
/// made once per code the first time a country names it.
///
/// What maps to what, from the Swift original: `super.createDestinationInstances(forSource:in:manager:)`
/// is `super.createDestinationInstances(for:mapping:manager:)`; `sInstance.value(forKey:)` is
/// `source["isoContinent"]`; `manager.destinationInstances(forEntityMappingName:sourceInstances:)`
/// is the same call with `ObjectRef`s; `NSEntityDescription.insertNewObject(forEntityName:into:)`
/// is `manager.insert(_:mapping:)`; `setValue(_:forKey:)` on a relationship is
/// `manager.setRelationship(_:of:to:mapping:)`. The original finds an existing continent among
/// the context's registered objects; a policy instance lives for one mapping of one migration, so
/// it remembers the continents it made instead.
public final class Country5ToCountry6Policy: EntityMigrationPolicy {
    /// The continents made in this migration, by ISO 3166 code.
    private var continents: [Int64: DestinationObject] = [:]

    public override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
        guard case .integer(let code) = source["isoContinent"] else { return }
        guard let country = try manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source.ref]).first else {
            throw MigrationError.policy(mapping: mapping.name, message: "country \(source.ref) was not migrated")
        }
        let continent: DestinationObject
        if let made = continents[code] {
            continent = made
        } else {
            continent = try manager.insert(DestinationObject(entity: "Continent", id: "continent-\(code)", attributes: ["numericISO3166Code": .integer(code)]),
                                           mapping: mapping)
            continents[code] = continent
        }
        try manager.setRelationship("continent", of: DestinationObject(country), to: [continent.ref], mapping: mapping)
    }
}

/// Registers the Moody policies under the names the imported Moody mapping models use.
public func registerMoodyPolicies(in registry: PolicyRegistry = .shared) {
    registry.register(Country5ToCountry6Policy.self, as: "Country5ToCountry6Policy")
}
