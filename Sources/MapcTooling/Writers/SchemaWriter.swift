import Foundation
import MapcFoundation
import MapcModel

/// Writes a schema as a schema file, in the format `SchemaLoader` reads: loading the text gives the
/// same schema back (same entities, properties, rules, hashes). `mapc import` writes the versions of
/// an Xcode model with it.
package enum SchemaWriter {
    /// The schema's YAML text, with `header` lines as comments on top, after a
    /// `# yaml-language-server: $schema=…` line pointing editors at `jsonSchema` when given.
    package static func yaml(_ schema: Schema, header: [String] = [], jsonSchema: String? = nil) -> String {
        var lines = jsonSchema.map { ["# yaml-language-server: $schema=\($0)"] } ?? []
        lines += header.map { "# " + YAMLText.comment($0) }
        lines.append("model: \(YAMLText.scalar(schema.model))")
        lines.append("version: \(YAMLText.scalar(schema.version))")
        if let identifier = schema.versionIdentifier { lines.append("versionIdentifier: \(YAMLText.scalar(identifier))") }
        lines.append(schema.entities.isEmpty ? "entities: {}" : "entities:")
        for entity in schema.entities { lines += self.entity(entity) }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func entity(_ entity: Entity) -> [String] {
        var lines = ["  \(entity.name):"]
        var keys: [String] = []
        if let parent = entity.parent { keys.append("parent: \(YAMLText.scalar(parent))") }
        if entity.isAbstract { keys.append("abstract: true") }
        if let className = entity.className { keys.append("className: \(YAMLText.scalar(className))") }
        if let renaming = entity.renamingIdentifier { keys.append("renamingIdentifier: \(YAMLText.scalar(renaming))") }
        if let modifier = entity.versionHashModifier { keys.append("versionHashModifier: \(YAMLText.scalar(modifier))") }
        if !entity.uniquenessConstraints.isEmpty {
            keys.append("uniquenessConstraints: [" + entity.uniquenessConstraints.map { "[" + $0.joined(separator: ", ") + "]" }.joined(separator: ", ") + "]")
        }
        if !entity.indexes.isEmpty {
            keys.append("indexes:")
            for index in entity.indexes {
                keys.append("  - { name: \(YAMLText.flowScalar(index.name)), properties: [\(index.properties.map(YAMLText.flowScalar).joined(separator: ", "))] }")
            }
        }
        if let info = userInfo(entity.userInfo) { keys.append("userInfo: \(info)") }
        if !entity.notImported.isEmpty { keys.append("notImported: [\(entity.notImported.map(YAMLText.flowScalar).joined(separator: ", "))]") }
        if keys.isEmpty && entity.attributes.isEmpty && entity.relationships.isEmpty { return ["  \(entity.name): {}"] }
        lines += keys.map { "    " + $0 }
        if !entity.attributes.isEmpty {
            lines.append("    attributes:")
            lines += entity.attributes.map { "      \($0.name): { " + attribute($0).joined(separator: ", ") + " }" }
        }
        if !entity.relationships.isEmpty {
            lines.append("    relationships:")
            lines += entity.relationships.map { "      \($0.name): { " + relationship($0).joined(separator: ", ") + " }" }
        }
        return lines
    }

    private static func attribute(_ attribute: Attribute) -> [String] {
        var keys = ["type: \(attribute.type.rawValue)"]
        if attribute.isOptional { keys.append("optional: true") }
        if let value = attribute.defaultValue, !value.isNull { keys.append("default: \(literal(value, type: attribute.type))") }
        if attribute.isTransient { keys.append("transient: true") }
        if let renaming = attribute.renamingIdentifier { keys.append("renamingIdentifier: \(YAMLText.flowScalar(renaming))") }
        if let modifier = attribute.versionHashModifier { keys.append("versionHashModifier: \(YAMLText.flowScalar(modifier))") }
        if let transformer = attribute.valueTransformer { keys.append("valueTransformer: \(YAMLText.flowScalar(transformer))") }
        if let className = attribute.className { keys.append("className: \(YAMLText.flowScalar(className))") }
        if attribute.allowsExternalStorage { keys.append("externalStorage: true") }
        if attribute.preservesAfterDeletion { keys.append("preserveAfterDeletion: true") }
        if let derivation = attribute.derivation { keys.append("derivation: \(YAMLText.flowScalar(derivation))") }
        let rules = attribute.validation
        if let min = rules.min { keys.append("min: \(literal(min, type: attribute.type))") }
        if let max = rules.max { keys.append("max: \(literal(max, type: attribute.type))") }
        if let length = rules.minLength { keys.append("minLength: \(length)") }
        if let length = rules.maxLength { keys.append("maxLength: \(length)") }
        if let regex = rules.regex { keys.append("regex: \(YAMLText.flowScalar(regex))") }
        if let info = userInfo(attribute.userInfo) { keys.append("userInfo: \(info)") }
        return keys
    }

    private static func relationship(_ relationship: Relationship) -> [String] {
        // Names as text whatever they read as (a relationship named `null`: a plain `inverse: null`
        // says there is none).
        var keys = ["destination: \(YAMLText.flowScalar(relationship.destination))"]
        if relationship.isToMany { keys.append("toMany: true") }
        if relationship.isOrdered { keys.append("ordered: true") }
        if let inverse = relationship.inverse { keys.append("inverse: \(YAMLText.flowScalar(inverse))") } else if relationship.declaresNoInverse { keys.append("inverse: null") }
        if relationship.deleteRule != .nullify { keys.append("deleteRule: \(relationship.deleteRule.rawValue)") }
        if relationship.isOptional { keys.append("optional: true") }
        if let count = relationship.minCount { keys.append("minCount: \(count)") }
        if let count = relationship.maxCount { keys.append("maxCount: \(count)") }
        if relationship.isTransient { keys.append("transient: true") }
        if let renaming = relationship.renamingIdentifier { keys.append("renamingIdentifier: \(YAMLText.flowScalar(renaming))") }
        if let modifier = relationship.versionHashModifier { keys.append("versionHashModifier: \(YAMLText.flowScalar(modifier))") }
        if let info = userInfo(relationship.userInfo) { keys.append("userInfo: \(info)") }
        return keys
    }

    /// A value as the loader reads it back for its attribute's type: a float's as the float it
    /// is (`0.1`, where the double it widens to is `0.10000000149011612`), as `dump` writes one.
    static func literal(_ value: Value, type: AttributeType? = nil) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .double(let number) where type == .float && Double(Float(number)) == number: return YAMLText.flowScalar("\(Float(number))")
        case .double(let number): return YAMLText.flowScalar("\(number)")
        case .decimal(let number): return YAMLText.flowScalar(number.description)
        case .string(let text): return YAMLText.flowScalar(text)
        case .date(let date): return YAMLText.flowScalar(ISO8601.format(date))
        case .binary(let data): return YAMLText.flowScalar(data.base64EncodedString())
        case .uuid(let uuid): return uuid.uuidString.lowercased()
        case .uri(let text): return YAMLText.flowScalar(text)
        // Never a schema's default (YAML text is UTF-8); written as the replacement it would become.
        case .nonUTF8Text(let bytes): return YAMLText.flowScalar(String(decoding: bytes, as: UTF8.self))
        }
    }

    private static func userInfo(_ info: [String: String]) -> String? {
        guard !info.isEmpty else { return nil }
        return "{ " + info.sorted { $0.key < $1.key }.map { "\(YAMLText.flowScalar($0.key)): \(YAMLText.flowScalar($0.value))" }.joined(separator: ", ") + " }"
    }
}
