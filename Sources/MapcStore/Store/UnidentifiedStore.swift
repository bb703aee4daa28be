import Foundation
import MapcFoundation
import MapcModel

extension SchemaCatalog {
    /// When a store names its model and the catalog holds only other models: the store's model,
    /// and the sentence saying so.
    package func modelMismatch(_ metadata: StoreMetadata) -> (model: String, message: String)? {
        let models = Set(schemas.map(\.model)).sorted()
        guard let model = metadata.model, !models.isEmpty, !models.contains(model) else { return nil }
        let folder = directory.isEmpty ? "the schemas" : "the schemas in \(directory)"
        let named = models.map { "'\($0)'" }.joined(separator: ", ")
        return (model, "the store holds model '\(model)', and \(folder) are of \(models.count == 1 ? "model" : "models") \(named)")
    }

    /// The entities of a version whose hashes differ from those a store records.
    private func differingEntities(of schema: Schema, from metadata: StoreMetadata, format: StoreFormat) -> [String] {
        let expected = format.entityHashes(of: schema)
        return schema.entities.map(\.name).filter { name in metadata.entityHashes[name].map { $0 != expected[name] } ?? false }
    }

    /// The version nearest a store: fewest entities differing by hash; among those, fewest
    /// columns differing (a property added without a new version differs from the version it was
    /// added to by one column, from the one before by more); then the newest.
    private func closestVersion(among candidates: [Schema], to metadata: StoreMetadata, columns: [String: [String]], format: StoreFormat) -> Schema? {
        let byEntities = candidates.map { ($0, metadata.differences(from: $0, format: format).count) }
        guard let fewest = byEntities.map(\.1).min() else { return nil }
        // The columns are compared for the tied versions only, the newest first, at most 64 of them.
        let tied = byEntities.filter { $0.1 == fewest }.map(\.0).reversed().prefix(64)
        guard tied.count > 1 else { return tied.first }
        let measured = tied.map { ($0, Store.columnDistance(columns, schema: $0, format: format, entities: differingEntities(of: $0, from: metadata, format: format))) }
        return measured.min { $0.1 < $1.1 }?.0
    }

    /// Why no version of the catalog matches a store's hashes, in the words a user can act on: the
    /// store is of another model; or it records a version the schemas do not have (a store newer
    /// than them, or an older version never imported); or, the closest version of its own model,
    /// what differs from it: entities by hash and, from the store's tables, the columns. One
    /// diagnosis for every command that identifies a store.
    /// `checkedForDamage`: the caller ran SQLite's quick check of the store already (`status`
    /// runs it on every store), so it is not run again.
    package func unidentifiedStore(at path: String, format: StoreFormat, metadata: StoreMetadata, checkedForDamage: Bool = false) -> MapcError {
        // Damaged bookkeeping reads as hashes of no version: say what it is (only on this path, so
        // a store that is identified pays nothing for the check).
        if !checkedForDamage, let damaged = Store.damage(at: path) { return damaged }
        let folder = directory.isEmpty ? "the schemas" : "the schemas in \(directory)"
        if let mismatch = modelMismatch(metadata) {
            return MapcError.unknownVersion("\(path): \(mismatch.message); use \(mismatch.model)'s schema files (with the mapc command, --schemas DIR)")
        }
        let described = "\(path) (\(format.name) store\(metadata.version.map { ", recorded as \($0)" } ?? ""))"
        // Its own version's file is being written or is broken: that file is what to mend.
        if let recorded = metadata.version, schema(version: recorded) == nil, let broken = versionsWithErrors[recorded] {
            return MapcError.unknownVersion("\(described) is at version '\(recorded)', whose schema file has errors (\(broken)): mend that file (`mapc check` shows its errors)")
        }
        if schemas.isEmpty {
            return MapcError.unknownVersion("\(described) cannot be identified: \(directory.isEmpty ? "there are no schemas" : "\(directory) holds no schema files"); "
                                            + "add the model's schema files (mapc import MODEL.xcdatamodeld)")
        }
        // The closest version of the store's own model, among those sharing an entity with it.
        let storeEntities = Set(metadata.entityHashes.keys)
        // A store that records no entity hash at all has lost its bookkeeping: not another model's.
        if storeEntities.isEmpty {
            return MapcError.store("\(described) records no entities (its table of entity hashes is empty), so it cannot be identified: the store is damaged (or was made by a version of no entities); "
                                   + "restore it from a backup")
        }
        let candidates = schemas.filter { (metadata.model == nil || $0.model == metadata.model) && $0.entities.contains { storeEntities.contains($0.name) } }
        // The store's columns, read once: they break ties, then say what differs.
        let columns = Store.tableColumns(at: path)
        guard let closest = closestVersion(among: candidates, to: metadata, columns: columns, format: format) else {
            return MapcError.unknownVersion("\(described) shares no entity with any version of the schemas (its entities: \(storeEntities.sorted().prefix(8).joined(separator: ", "))): "
                                            + "it is a store of another model; use that model's schema files (with the mapc command, --schemas DIR)")
        }
        let differences = Store.columnDifferences(columns, schema: closest, format: format, entities: differingEntities(of: closest, from: metadata, format: format))
        let details = (metadata.differences(from: closest, format: format).prefix(5) + differences.prefix(3)).joined(separator: "; ")
        // A version the store records and the schemas lack is the likeliest cause: say it first.
        if let recorded = metadata.version, schema(version: recorded) == nil {
            return MapcError.unknownVersion("\(described) matches no version of \(folder): it records version '\(recorded)', which they do not have "
                                            + "(closest is \(closest.version): \(details)). Add that version's schema: `mapc import` of the app's .xcdatamodeld "
                                            + "brings every version, the newest included")
        }
        // Closest to the newest version: most likely written by a newer app than these schemas know.
        let which = schemas.last?.version == closest.version
            ? "a version newer than \(closest.version), the newest here, if the app is ahead of this project"
            : "an older model version never added, or a newer one"
        return MapcError.unknownVersion("\(described) matches no version of the schemas; closest is \(closest.version): \(details). If no version was changed by hand, "
                                        + "add the schema of the version that wrote the store (\(which): `mapc import` of the app's .xcdatamodeld brings every version)")
    }
}
