import MapcKit

/// Opens a store with the schema version that matches its hashes.
enum StoreLocator {
    static func open(_ path: String, schemaOptions: SchemaOptions) throws -> Store {
        _ = try Store.metadata(at: path)
        return try Store.open(at: path, catalog: try schemaOptions.catalog(), readOnly: true)
    }
}
