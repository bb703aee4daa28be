import Foundation
import Testing
import Yams
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The JSON Schemas editors use: the repository's copies are what mapc writes, every YAML file of
/// the repository and every complete example in the docs validates, and typical mistakes do not.
/// (A small validator of the JSON Schema keywords the schemas use; editors use full ones.)
@Suite("Editor schemas")
struct EditorSchemaTests {
    /// Errors of `value` against `schema`, resolving `$ref`s in `root`.
    static func errors(_ value: Any?, _ schema: JSONValue, root: JSONValue, at path: String = "") -> [String] {
        guard case .object(let pairs) = schema else { return [] }
        let keys = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        if case .string(let reference)? = keys["$ref"] {
            var target = root
            for part in reference.dropFirst(2).split(separator: "/") {
                guard case .object(let entries) = target, let next = entries.first(where: { $0.0 == String(part) })?.1 else { return ["\(path): no \(reference)"] }
                target = next
            }
            return errors(value, target, root: root, at: path)
        }
        var found: [String] = []
        if let type = keys["type"] {
            let allowed: [String]
            switch type { case .string(let one): allowed = [one]; case .array(let many): allowed = many.compactMap { if case .string(let s) = $0 { return s } else { return nil } }; default: allowed = [] }
            func matches(_ name: String) -> Bool {
                switch name {
                case "null": return value == nil || value is NSNull
                case "boolean": return value is Bool
                case "integer": return value is Int
                case "number": return value is Int || value is Double
                case "string": return value is String
                case "array": return value is [Any]
                case "object": return value is [String: Any]
                default: return false
                }
            }
            if !allowed.contains(where: matches) { return ["\(path): \(String(describing: value)) is not \(allowed.joined(separator: " or "))"] }
        }
        if case .array(let options)? = keys["enum"], let text = value as? String, !options.contains(.string(text)) { found.append("\(path): '\(text)' is not one of the allowed values") }
        if case .string(let pattern)? = keys["pattern"], let text = value as? String, text.range(of: pattern, options: .regularExpression) == nil { found.append("\(path): '\(text)' does not match \(pattern)") }
        if case .integer(let minimum)? = keys["minimum"], let number = value as? Int, number < minimum { found.append("\(path): \(number) < \(minimum)") }
        if case .array(let options)? = keys["oneOf"] {
            let passing = options.filter { errors(value, $0, root: root, at: path).isEmpty }.count
            if passing != 1 { found.append("\(path): matches \(passing) of the alternatives") }
        }
        if let object = value as? [String: Any] {
            if case .array(let required)? = keys["required"] {
                for case .string(let name) in required where object[name] == nil { found.append("\(path): missing '\(name)'") }
            }
            let properties: [(String, JSONValue)]
            if case .object(let entries)? = keys["properties"] { properties = entries } else { properties = [] }
            for (name, item) in object {
                if let property = properties.first(where: { $0.0 == name })?.1 {
                    found += errors(item, property, root: root, at: "\(path)/\(name)")
                } else if case .bool(false)? = keys["additionalProperties"] {
                    found.append("\(path): unknown key '\(name)'")
                } else if let additional = keys["additionalProperties"], case .object = additional {
                    found += errors(item, additional, root: root, at: "\(path)/\(name)")
                }
            }
        }
        if let array = value as? [Any] {
            if case .integer(let minimum)? = keys["minItems"], array.count < minimum { found.append("\(path): fewer than \(minimum) items") }
            if let items = keys["items"] { for (index, item) in array.enumerated() { found += errors(item, items, root: root, at: "\(path)/\(index)") } }
        }
        return found
    }

    static func validate(_ yaml: String, as kind: ProjectFileKind) throws -> [String] {
        let schema: JSONValue
        switch kind {
        case .schema: schema = EditorSchemas.schemaFile
        case .mapping: schema = EditorSchemas.mappingFile
        case .versionOrder: schema = EditorSchemas.versionsFile
        }
        return errors(try Yams.load(yaml: yaml), schema, root: schema)
    }

    @Test func theRepositorysCopiesAreWhatMapcWrites() throws {
        for kind in [ProjectFileKind.schema, .mapping, .versionOrder] {
            for file in EditorSchemas.files(for: kind) {
                let copy = try String(contentsOf: packageRoot.appendingPathComponent("editor").appendingPathComponent(file.name), encoding: .utf8)
                #expect(copy == file.text, "editor/\(file.name) is stale: run `mapc editor-schemas --output editor`")
            }
        }
    }

    @Test func everyYAMLFileOfTheRepositoryValidatesAndPointsAtItsSchema() throws {
        var files: [URL] = []
        for folder in ["schemas", "mappings", "Tests/MapcKitTests/Fixtures"] {
            let root = packageRoot.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: root.path) where name.hasSuffix(".yaml") { files.append(root.appendingPathComponent(name)) }
        }
        #expect(files.count >= 8)
        for file in files {
            let source = try SourceFile.read(path: file.path)
            let kind = ProjectFileKind.classify(source, fallback: .schema)
            let problems = try Self.validate(source.text, as: kind)
            #expect(problems.isEmpty, "\(file.path): \(problems)")
            if file.path.contains("/schemas/") || file.path.contains("/mappings/") {
                #expect(source.text.hasPrefix("# yaml-language-server: $schema=../editor/"), "\(file.lastPathComponent) points editors at its schema")
            }
        }
    }

    @Test func theDocsCompleteExamplesValidate() throws {
        var checked = 0
        for doc in ["docs/schema-format.md", "docs/mapping-format.md", "README.md", "docs/tutorial.md"] {
            let text = try String(contentsOf: packageRoot.appendingPathComponent(doc), encoding: .utf8)
            var block: [Substring]?
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line == "```yaml" { block = []; continue }
                if line == "```", let lines = block {
                    block = nil
                    let yaml = lines.joined(separator: "\n")
                    let kind = ProjectFileKind.classify(SourceFile(path: doc, text: yaml), fallback: .schema)
                    // Excerpts (a single entity mapping, a key) are not whole files.
                    guard (kind == .schema && yaml.contains("entities:")) || (kind == .mapping && yaml.contains("entityMappings:")) || (kind == .versionOrder) else { continue }
                    let problems = try Self.validate(yaml, as: kind)
                    #expect(problems.isEmpty, "\(doc): \(problems)\n\(yaml)")
                    checked += 1
                } else if block != nil {
                    block?.append(line)
                }
            }
        }
        #expect(checked >= 3)
    }

    /// A recorded hash of digits only (or `12e45678`, a float to YAML 1.2 tools) reads as a number to YAML tools: mapc writes it quoted now,
    /// but files written before (or by hand) hold it plain, and mapc reads them: the schema must
    /// not flag them.
    @Test func aRecordedHashOfDigitsOnlyValidatesWrittenEitherWay() throws {
        for hash in ["24919349", "'24919349'", "0a1b2c3d", "12e45678"] {
            let yaml = "source: v1\ndestination: v2\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n"
                + "    sourceHash: { hash: \(hash), properties: { title: \(hash) } }\n"
            let problems = try Self.validate(yaml, as: .mapping)
            #expect(problems.isEmpty, "\(hash): \(problems)")
        }
    }

    @Test(arguments: [
        ("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      title: { type: strng }\n", ProjectFileKind.schema),
        ("model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      title: { type: string, optionl: true }\n", .schema),
        ("model: M\nversion: v1\nentities:\n  Note:\n    relationships:\n      tags: { toMany: true }\n", .schema),
        ("model: M\nversion: v1\nentities:\n  Note:\n    relationships:\n      tags: { destination: Tag, deleteRule: destroy }\n", .schema),
        ("model: M\nversion: v1\nentities:\n  Note:\n    attributs: {}\n", .schema),
        ("model: M\nentities: {}\n", .schema),
        ("source: v1\ndestination: v2\nentityMapping: []\n", .mapping),
        ("source: v1\ndestination: v2\nentityMappings:\n  - { source: Note, destination: Note }\n", .mapping),
        ("source: v1\ndestination: v2\nentityMappings:\n  - { name: A, type: morph }\n", .mapping),
        ("versions: v1\n", .versionOrder),
    ])
    func typicalMistakesDoNotValidate(yaml: String, kind: ProjectFileKind) throws {
        let problems = try Self.validate(yaml, as: kind)
        #expect(!problems.isEmpty, "\(yaml)")
    }
}
