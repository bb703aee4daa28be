import Foundation
import MapcFoundation
import MapcModel
import MapcStore

/// Migration tests the way Core Data teams write them: fixture data for an old version, migrated
/// to the newest and checked. Everything happens in memory, so tests share no paths.
///
/// ```swift
/// let store = try FixtureMigration.migrate(fixture: "Fixtures/v1.json", to: "v4", schemas: "schemas", mappings: "mappings")
/// #expect(try store.objects(of: "Note").count == 3)
/// #expect(try DataFile.dump(store) == expected)
/// ```
public enum FixtureMigration {
    /// Loads the fixture (the path of a data file; its `version` says which schema) into an
    /// in-memory store and migrates it to `version` (the newest when nil) with the planner's
    /// steps: mapping files where present, inferred mappings otherwise, their files checked first
    /// as `Migrator` checks them (`DiagnosticsError`). As `Migrator` does, it refuses an inferred
    /// step that drops values the fixture holds unless `acceptsDataLoss` (`MigrationError.dataLoss`), and a
    /// `mappings` folder that does not exist (`MapcError.notFound`). Returns the migrated store.
    public static func migrate(fixture path: String, to version: String? = nil, schemas: String, mappings: String,
                               policies: PolicyRegistry = .shared, acceptsDataLoss: Bool = false) throws -> Store {
        let json = try JSONValue.parse(try Files.read(path, what: "the fixture's data file"), path: path)
        return try migrate(fixture: json, to: version, catalog: try SchemaCatalog(directory: schemas), mappings: try MappingCatalog(folder: mappings),
                           policies: policies, acceptsDataLoss: acceptsDataLoss)
    }

    /// The same, with the fixture's JSON and the catalogs already loaded.
    public static func migrate(fixture json: JSONValue, to version: String? = nil, catalog: SchemaCatalog, mappings: MappingCatalog,
                               policies: PolicyRegistry = .shared, acceptsDataLoss: Bool = false) throws -> Store {
        guard let fixtureVersion = try DataFile.declaredVersion(of: json, in: "the fixture") else {
            throw MapcError.input("the fixture has no \"version\"; say which schema version its data is for")
        }
        let source = try catalog.require(version: fixtureVersion)
        guard let target = try version.map({ try catalog.require(version: $0) }) ?? catalog.orderedSchemas().last else {
            throw MapcError.notFound("the schemas folder has no versions")
        }
        var store = try Store.inMemory(schema: source)
        try store.insert(try DataFile.read(json, schema: source, for: store.format).objects)
        let steps = try MigrationPlanner.plan(from: source, to: target, catalog: catalog, mappings: mappings, storeHolds: { try store.holdsObjects(of: $0) },
                                                  storeHoldsNil: { try store.holdsNil(of: $0, in: $1) })
        // Checked as `Migrator` checks them: the same errors (an unknown policy is a diagnostic),
        // the same refusal of a step that would drop values.
        try MappingChecker.check(steps, policies: policies)
        try StoreMigration.refuseDataLoss(in: steps, accepted: acceptsDataLoss, asking: store)
        for step in steps {
            let next = try Store.inMemory(schema: step.destination)
            _ = try StoreMigration.migrate(step, from: store, into: next, policies: policies)
            store = next
        }
        return store
    }
}
