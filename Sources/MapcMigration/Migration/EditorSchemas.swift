import Foundation
import MapcFoundation
import MapcModel

/// JSON Schemas for mapc's YAML files, so editors (VS Code's YAML extension and any other client of
/// yaml-language-server) complete keys and flag mistakes while typing. They are built from the
/// loaders' own lists of keys, so they cannot drift from what mapc reads; `mapc` writes them beside
/// the files it writes (`.schema.json`, `.mapping.schema.json`, referenced from each file's first
/// line) and the repository keeps a copy in `editor/`.
package enum EditorSchemas {
    /// The comment that points yaml-language-server at a schema, as the first line of a file.
    package static func modeline(_ file: String) -> String { "# yaml-language-server: $schema=\(file)" }

    /// The file name of the schema-file schema, written beside schema files.
    package static let schemaFileName = ".schema.json"
    /// The file name of the mapping-file schema, written beside mapping files.
    package static let mappingFileName = ".mapping.schema.json"
    /// The file name of the version-order schema.
    package static let versionsFileName = ".versions.schema.json"

    private static func object(_ pairs: [(String, JSONValue)]) -> JSONValue { .object(pairs) }
    private static func type(_ name: String) -> JSONValue { object([("type", .string(name))]) }
    private static let text = type("string")
    private static let flag = type("boolean")
    private static let count = object([("type", .string("integer")), ("minimum", .integer(0))])
    private static let anyScalar = object([("type", .array(["string", "number", "boolean", "null"].map(JSONValue.string)))])
    private static let name = object([("type", .string("string")), ("pattern", .string("^[A-Za-z_][A-Za-z0-9_]*$"))])
    private static let stringMap = object([("type", .string("object")), ("additionalProperties", text)])
    private static func reference(_ definition: String) -> JSONValue { object([("$ref", .string("#/definitions/\(definition)"))]) }
    private static func closed(_ properties: [(String, JSONValue)], keys: [String], required: [String] = [], description: String) -> JSONValue {
        // Every key the loader accepts, and only those.
        let described = Dictionary(properties, uniquingKeysWith: { first, _ in first })
        var pairs: [(String, JSONValue)] = [("type", .string("object")), ("description", .string(description))]
        if !required.isEmpty { pairs.append(("required", .array(required.map(JSONValue.string)))) }
        pairs.append(("properties", .object(keys.map { ($0, described[$0] ?? anyScalar) })))
        pairs.append(("additionalProperties", .bool(false)))
        return .object(pairs)
    }

    /// The attribute type names `type:` accepts (canonical, then Core Data's editor names).
    static var typeNames: [String] {
        AttributeType.allCases.map(\.rawValue) + SchemaLoader.typeAliases.keys.sorted()
    }

    /// The JSON Schema of schema files.
    package static var schemaFile: JSONValue {
        let types = JSONValue.array(typeNames.map(JSONValue.string))
        let shorthand = object([("type", .string("string")),
                                ("pattern", .string("^(" + typeNames.map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "|") + ")\\??$")),
                                ("description", .string("shorthand: `string` is { type: string }, `binary?` is { type: binary, optional: true }"))])
        let attribute = closed([
            ("type", object([("enum", types)])), ("optional", flag), ("default", anyScalar), ("transient", flag), ("renamingIdentifier", text),
            ("versionHashModifier", text), ("valueTransformer", text), ("className", text), ("min", anyScalar), ("max", anyScalar),
            ("minLength", count), ("maxLength", count), ("regex", text), ("userInfo", stringMap), ("externalStorage", flag), ("preserveAfterDeletion", flag), ("derivation", text),
        ], keys: SchemaLoader.attributeKeys, required: ["type"], description: "an attribute (docs/schema-format.md#attributes)")
        let relationship = closed([
            ("destination", name), ("toMany", flag), ("ordered", flag), ("inverse", object([("oneOf", .array([name, type("null")]))])),
            ("deleteRule", object([("enum", .array(DeleteRule.allCases.map { .string($0.rawValue) }))])), ("optional", flag),
            ("minCount", count), ("maxCount", count), ("renamingIdentifier", text), ("versionHashModifier", text), ("transient", flag), ("userInfo", stringMap),
        ], keys: SchemaLoader.relationshipKeys, required: ["destination"], description: "a relationship (docs/schema-format.md#relationships)")
        let names = object([("type", .string("array")), ("items", name)])
        let index = object([("oneOf", .array([
            closed([("name", name), ("properties", object([("oneOf", .array([name, names]))]))], keys: ["name", "properties"], required: ["properties"], description: "a named index"),
            names, name,
        ]))])
        let entity = object([("oneOf", .array([type("null"), closed([
            ("parent", name), ("abstract", flag), ("renamingIdentifier", text), ("versionHashModifier", text),
            ("uniquenessConstraints", object([("type", .string("array")), ("items", object([("oneOf", .array([name, names]))]))])),
            ("indexes", object([("type", .string("array")), ("items", index)])), ("userInfo", stringMap), ("className", text),
            ("notImported", object([("type", .string("array")), ("items", text)])),
            ("attributes", object([("type", .string("object")), ("additionalProperties", object([("oneOf", .array([shorthand, reference("attribute")]))]))])),
            ("relationships", object([("type", .string("object")), ("additionalProperties", reference("relationship"))])),
        ], keys: SchemaLoader.entityKeys, description: "an entity (docs/schema-format.md#entities)")]))])
        return object([
            ("$schema", .string("http://json-schema.org/draft-07/schema#")),
            ("title", .string("mapc schema file")),
            ("description", .string("One version of a data model (docs/schema-format.md).")),
            ("type", .string("object")),
            ("required", .array(["model", "version", "entities"].map(JSONValue.string))),
            ("properties", .object(SchemaLoader.topKeys.map { key in
                (key, key == "entities" ? object([("type", .string("object")), ("additionalProperties", reference("entity"))]) : text)
            })),
            ("additionalProperties", .bool(false)),
            ("definitions", object([("entity", entity), ("attribute", attribute), ("relationship", relationship)])),
        ])
    }

    /// The JSON Schema of mapping files.
    package static var mappingFile: JSONValue {
        let expression = object([("type", .array(["string", "number", "boolean", "null"].map(JSONValue.string))),
                                 ("description", .string("an expression (docs/expressions.md)"))])
        // A hash of digits only (or digits, an `e` and digits), written plain, is a number to YAML
        // (mapc reads its text).
        let hash = object([("type", .array(["string", "number"].map(JSONValue.string)))])
        let hashes = object([("type", .string("object")), ("additionalProperties", hash)])
        let recorded = closed([("hash", hash), ("properties", hashes)], keys: ["hash", "properties"], required: ["hash"],
                              description: "the entity hash the mapping was written against")
        let entityMapping = closed([
            ("name", name), ("source", name), ("destination", name),
            ("type", object([("enum", .array(EntityMappingType.allCases.map { .string($0.rawValue) }))])),
            ("sourceExpression", text), ("filter", expression), ("policy", text), ("userInfo", stringMap),
            ("attributes", object([("type", .string("object")), ("additionalProperties", expression)])),
            ("relationships", object([("type", .string("object")), ("additionalProperties", expression)])),
            ("sourceHash", recorded), ("destinationHash", recorded),
            ("todo", object([("type", .string("array")), ("items", text)])),
            ("drops", object([("type", .string("array")), ("items", text)])),
        ], keys: MappingLoader.entityMappingKeys, required: ["name"], description: "an entity mapping (docs/mapping-format.md#entity-mapping-keys)")
        return object([
            ("$schema", .string("http://json-schema.org/draft-07/schema#")),
            ("title", .string("mapc mapping file")),
            ("description", .string("A mapping model from one version to another (docs/mapping-format.md).")),
            ("type", .string("object")),
            ("required", .array(MappingLoader.topKeys.filter { $0 != "pass" }.map(JSONValue.string))),
            ("properties", .object(MappingLoader.topKeys.map { key in
                switch key {
                case "entityMappings": return (key, object([("type", .string("array")), ("items", reference("entityMapping"))]))
                case "pass": return (key, object([("type", .string("integer")), ("minimum", .integer(1)), ("description", .string("the order of this file among the mapping files of one step (multiple passes)"))]))
                default: return (key, text)
                }
            })),
            ("additionalProperties", .bool(false)),
            ("definitions", object([("entityMapping", entityMapping)])),
        ])
    }

    /// The JSON Schema of `versions.yaml`.
    package static var versionsFile: JSONValue {
        object([
            ("$schema", .string("http://json-schema.org/draft-07/schema#")),
            ("title", .string("mapc version order")),
            ("description", .string("The versions of a model, oldest first (docs/schema-format.md#the-order-of-versions).")),
            ("type", .string("object")),
            ("required", .array([.string("versions")])),
            ("properties", object([("versions", object([("type", .string("array")), ("items", text), ("minItems", .integer(1))]))])),
            ("additionalProperties", .bool(false)),
        ])
    }

    /// The schema files to write beside YAML files of a kind, by name.
    package static func files(for kind: ProjectFileKind) -> [(name: String, text: String)] {
        switch kind {
        case .schema: return [(schemaFileName, schemaFile.serialized(pretty: true) + "\n")]
        case .mapping: return [(mappingFileName, mappingFile.serialized(pretty: true) + "\n")]
        case .versionOrder: return [(versionsFileName, versionsFile.serialized(pretty: true) + "\n")]
        }
    }
}
