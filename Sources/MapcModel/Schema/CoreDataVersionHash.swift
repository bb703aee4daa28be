internal import Crypto
import Foundation

/// Core Data's entity version hashes (`NSEntityDescription.versionHash`), computed from a schema:
/// what a Core Data store records in its metadata (`NSStoreModelVersionHashes`) and what identifies
/// its version. The byte layout was established against real stores (see docs/core-data.md) and
/// reproduces every hash they record.
///
/// SHA-256 throughout; strings as UTF-8 without terminator; integers little-endian:
/// - property: `H(name | u16 flags (optional 1, transient 2) | versionHashModifier)`
/// - attribute: `H(property | u32 NSAttributeType | [01 if external storage] | [01 if preserved after deletion])`
/// - relationship: `H(property | destination | [inverse name] | u32 maxCount | u32 minCount | [01 00 if ordered])`
/// - entity: `H(name | u8 abstract | [parent's hash] | hashes of every stored property, own and inherited,
///   by name | versionHashModifier | its own uniqueness constraints, each joined with ".", sorted)`
public enum CoreDataVersionHash {
    /// The hash of every entity, base64-encoded as Core Data stores show them.
    public static func entityHashes(of schema: Schema) -> [String: String] {
        var memo: [String: Data] = [:]
        var result: [String: String] = [:]
        // Core Data's hash covers what the schema does not hold (`Entity.notImported`), so it is
        // not known: said so, it matches no store's, and no store is written with it. (Nearly
        // every schema has none: then nothing is looked up.)
        let incomplete = schema.entities.contains { !$0.notImported.isEmpty }
        for entity in schema.entities {
            if incomplete, let problem = schema.ancestry(of: entity).lazy.compactMap(\.coreDataHashProblem).first {
                // Its version named: two versions' unknown hashes are never taken for equal.
                result[entity.name] = "(not known in \(schema.version): \(problem))"
                continue
            }
            result[entity.name] = hash(of: entity, in: schema, memo: &memo).base64EncodedString()
        }
        return result
    }

    /// Core Data's digest of a model's hashes (`NSStoreModelVersionHashesDigest`): SHA-512 over each
    /// entity name, in order, followed by its hash.
    public static func digest(of hashes: [String: String]) -> String {
        var data = Data()
        for name in hashes.keys.sorted(by: nsCompare) {
            data += Data(name.utf8)
            data += Data(base64Encoded: hashes[name] ?? "") ?? Data()
        }
        return Data(SHA512.hash(data: data)).base64EncodedString()
    }

    /// `-[NSString compare:]` order: UTF-16 code units, literally.
    package static func nsCompare(_ a: String, _ b: String) -> Bool {
        a.utf16.lexicographicallyPrecedes(b.utf16)
    }

    /// NSAttributeType's raw values.
    package static func attributeTypeCode(_ type: AttributeType) -> UInt32 {
        switch type {
        case .int16: return 100
        case .int32: return 200
        case .int64: return 300
        case .decimal: return 400
        case .double: return 500
        case .float: return 600
        case .string: return 700
        case .bool: return 800
        case .date: return 900
        case .binary: return 1000
        case .uuid: return 1100
        case .uri: return 1200
        case .transformable: return 1800
        }
    }

    private static func sha(_ data: Data) -> Data { Data(SHA256.hash(data: data)) }

    private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> Data {
        withUnsafeBytes(of: value.littleEndian) { Data($0) }
    }

    private static func propertyBase(name: String, optional: Bool, transient: Bool, modifier: String?) -> Data {
        let flags: UInt16 = (optional ? 1 : 0) | (transient ? 2 : 0)
        return sha(Data(name.utf8) + littleEndian(flags) + Data((modifier ?? "").utf8))
    }

    package static func hash(of attribute: Attribute) -> Data {
        var data = propertyBase(name: attribute.name, optional: attribute.isOptional, transient: attribute.isTransient, modifier: attribute.versionHashModifier)
        data += littleEndian(attributeTypeCode(attribute.type))
        if attribute.allowsExternalStorage { data.append(1) }
        if attribute.preservesAfterDeletion { data.append(1) }
        return sha(data)
    }

    package static func hash(of relationship: Relationship, in schema: Schema, owner: Entity) -> Data {
        var data = propertyBase(name: relationship.name, optional: relationship.isOptional, transient: relationship.isTransient, modifier: relationship.versionHashModifier)
        data += Data(relationship.destination.utf8)
        if let inverse = relationship.inverse, !isOwnInverse(relationship, in: schema, owner: owner) { data += Data(inverse.utf8) }
        let maxCount = UInt32(clamping: relationship.declaredMaxCount)
        let minCount = UInt32(clamping: relationship.declaredMinCount)
        data += littleEndian(maxCount) + littleEndian(minCount)
        if relationship.isOrdered { data += Data([1, 0]) }
        return sha(data)
    }

    /// A relationship that is its own inverse (`Person.spouse` ↔ `Person.spouse`) leaves the inverse name out.
    private static func isOwnInverse(_ relationship: Relationship, in schema: Schema, owner: Entity) -> Bool {
        guard relationship.inverse == relationship.name, let destination = schema.entity(named: relationship.destination) else { return false }
        let declaring = schema.ancestry(of: owner).last { $0.relationships.contains { $0.name == relationship.name } }
        let inverseDeclaring = schema.ancestry(of: destination).last { $0.relationships.contains { $0.name == relationship.name } }
        return declaring?.name == inverseDeclaring?.name
    }

    static func hash(of entity: Entity, in schema: Schema, memo: inout [String: Data]) -> Data {
        if let known = memo[entity.name] { return known }
        memo[entity.name] = Data()   // a cycle (refused by validation) hashes as empty rather than recursing
        var data = Data(entity.name.utf8)
        data.append(entity.isAbstract ? 1 : 0)
        if let parentName = entity.parent, let parent = schema.entity(named: parentName) {
            data += hash(of: parent, in: schema, memo: &memo)
        }
        var properties: [(name: String, hash: Data)] = []
        for ancestor in schema.ancestry(of: entity) {
            for attribute in ancestor.attributes where !attribute.isTransient && !properties.contains(where: { $0.name == attribute.name }) {
                properties.append((attribute.name, hash(of: attribute)))
            }
            for relationship in ancestor.relationships where !relationship.isTransient && !properties.contains(where: { $0.name == relationship.name }) {
                properties.append((relationship.name, hash(of: relationship, in: schema, owner: entity)))
            }
        }
        for property in properties.sorted(by: { nsCompare($0.name, $1.name) }) { data += property.hash }
        data += Data((entity.versionHashModifier ?? "").utf8)
        for constraint in entity.uniquenessConstraints.map({ $0.joined(separator: ".") }).filter({ !$0.isEmpty }).sorted(by: nsCompare) {
            data += Data(constraint.utf8)
        }
        let result = sha(data)
        memo[entity.name] = result
        return result
    }
}
