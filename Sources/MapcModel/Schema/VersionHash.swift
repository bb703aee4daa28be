internal import Crypto
import Foundation
import MapcFoundation

/// Deterministic version hashes, the equivalent of Core Data's `versionHash` on entities and
/// `entityVersionHashesByName` on models: a store is identified by them, not by a version name.
///
/// The algorithm is documented in `docs/schema-format.md` ("Version hashes"): each hash is the
/// SHA-256, in lowercase hex, of a canonical compact JSON array describing exactly what the hash
/// covers, so the hash changes when and only when something that matters to the stored data does.
public enum VersionHash {
    /// The hash of every entity, by name.
    public static func entityHashes(of schema: Schema) -> [String: String] {
        var hashes: [String: String] = [:]
        for entity in schema.entities { _ = hash(of: entity, in: schema, memo: &hashes) }
        return hashes
    }

    /// The model hash: derived from the sorted entity names and hashes only.
    public static func modelHash(of schema: Schema) -> String {
        modelHash(entityHashes: entityHashes(of: schema))
    }

    /// The model hash from entity hashes already computed (as read from a store's metadata).
    public static func modelHash(entityHashes: [String: String]) -> String {
        let pairs = entityHashes.keys.sorted().map { JSONValue.array([.string($0), .string(entityHashes[$0] ?? "")]) }
        return sha256(JSONValue.array([.string("model"), .array(pairs)]).serialized())
    }

    /// Short (8 hex) hashes of each property's canonical description, plus `@entity` for the
    /// entity's own fields and parent: what a mapping records so a stale one can say what changed.
    package static func propertyFingerprints(of entity: Entity, in schema: Schema) -> [String: String] {
        fingerprintInputs(of: entity, in: schema).mapValues { String(sha256($0.serialized()).prefix(8)) }
    }

    /// What each fingerprint is computed from, by property name (and `@entity`): compared as they
    /// are where only equality matters (inference compares every entity of every step).
    package static func fingerprintInputs(of entity: Entity, in schema: Schema) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (name, description) in propertyDescriptions(of: entity) { result[name] = description }
        let constraints = entity.uniquenessConstraints.map { $0.sorted() }.sorted { $0.lexicographicallyPrecedes($1) }
        result["@entity"] = JSONValue.array([.string(entity.name), .bool(entity.isAbstract), optional(parentHash(of: entity, in: schema)), optional(entity.versionHashModifier),
                                             .array(constraints.map { .array($0.map(JSONValue.string)) })])
        return result
    }

    /// The hash of one entity: its own description and its ancestors' (nothing else in the schema).
    public static func entityHash(of entity: Entity, in schema: Schema) -> String {
        var memo: [String: String] = [:]
        return hash(of: entity, in: schema, memo: &memo)
    }

    /// The parent's hash, computed from the ancestry alone (not every entity of the schema).
    private static func parentHash(of entity: Entity, in schema: Schema) -> String? {
        guard let name = entity.parent, let parent = schema.entity(named: name) else { return nil }
        return entityHash(of: parent, in: schema)
    }

    static func propertyDescriptions(of entity: Entity) -> [(String, JSONValue)] {
        entity.attributes.map { attribute in
            (attribute.name, JSONValue.array([
                .string("attribute"), .string(attribute.name), .bool(attribute.isOptional), .bool(attribute.isTransient),
                optional(attribute.versionHashModifier), .string(attribute.type.rawValue),
            ]))
        } + entity.relationships.map { relationship in
            (relationship.name, JSONValue.array([
                .string("relationship"), .string(relationship.name), .bool(relationship.isOptional), .bool(relationship.isTransient),
                optional(relationship.versionHashModifier), .string(relationship.destination), optional(relationship.inverse),
                .bool(relationship.isToMany), .bool(relationship.isOrdered),
                .integer(Int64(relationship.declaredMinCount)), .integer(Int64(relationship.isToMany ? relationship.declaredMaxCount : 1)),
            ]))
        }
    }

    /// The canonical description an entity's hash is computed from (exposed for documentation and tests).
    package static func canonicalDescription(of entity: Entity, parentHash: String?) -> String {
        let properties = propertyDescriptions(of: entity)
        let constraints = entity.uniquenessConstraints.map { $0.sorted() }.sorted { $0.lexicographicallyPrecedes($1) }
        let description = JSONValue.array([
            .string("entity"), .string(entity.name), .bool(entity.isAbstract), optional(parentHash), optional(entity.versionHashModifier),
            .array(constraints.map { .array($0.map(JSONValue.string)) }),
            .array(properties.sorted { $0.0 < $1.0 }.map(\.1)),
        ])
        return description.serialized()
    }

    private static func hash(of entity: Entity, in schema: Schema, memo: inout [String: String]) -> String {
        if let known = memo[entity.name] { return known }
        // Guard against cycles in unvalidated schemas: a cyclic parent contributes nothing.
        memo[entity.name] = ""
        var parentHash: String?
        if let parentName = entity.parent, let parent = schema.entity(named: parentName) {
            parentHash = hash(of: parent, in: schema, memo: &memo)
        }
        let result = sha256(canonicalDescription(of: entity, parentHash: parentHash))
        memo[entity.name] = result
        return result
    }

    private static func optional(_ text: String?) -> JSONValue {
        text.map(JSONValue.string) ?? .null
    }

    /// SHA-256 of the UTF-8 text, lowercase hex.
    package static func sha256(_ text: String) -> String {
        sha256(Data(text.utf8))
    }

    /// SHA-256 of bytes, lowercase hex.
    package static func sha256(_ data: Data) -> String {
        Hex.lowercase(SHA256.hash(data: data))
    }
}
