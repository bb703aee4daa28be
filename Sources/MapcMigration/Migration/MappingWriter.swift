import Foundation
import MapcFoundation
import MapcModel

/// Writes a mapping model as a mapping file: what `mapc infer` prints, the starting point a user
/// edits (like Xcode's "New Mapping Model"), with comments on what changed and hashes filled in.
package enum MappingWriter {
    /// The YAML text of a mapping, with `notes` as comments under each entity mapping.
    /// `header` replaces the opening comment lines (which say the mapping was inferred);
    /// `jsonSchema` is the JSON Schema editors are pointed at (written beside the file).
    package static func yaml(_ mapping: MappingModel, source: Schema, destination: Schema, changes: [SchemaChange] = [], notes: [String: [String]] = [:],
                            order: VersionOrder? = nil, header: [String]? = nil, jsonSchema: String? = EditorSchemas.mappingFileName) -> String {
        var lines = jsonSchema.map { [EditorSchemas.modeline($0)] } ?? []
        lines += (header ?? ["Mapping from \(source.displayName) to \(destination.version), inferred by mapc.",
                                "Edit it like any mapping file; `mapc check` verifies it and `mapc run` uses it instead of inferring."]).map { "# " + YAMLText.comment($0) }
        if let order {
            // The step's own span of the order: the file, and the digest a run records of it, stay
            // the same as the history grows.
            var span = order.versions
            if let first = span.firstIndex(of: source.version), let last = span.firstIndex(of: destination.version) { span = Array(span[min(first, last)...max(first, last)]) }
            lines.append("# " + YAMLText.comment("Versions, oldest first (\(order.originDescription)): \(span.joined(separator: " → "))"))
        }
        if !changes.isEmpty {
            lines.append("# Changes:")
            lines += changes.map { "#   " + YAMLText.comment("\($0)") }
        }
        lines += ["source: \(YAMLText.scalar(mapping.source))", "destination: \(YAMLText.scalar(mapping.destination))"]
        if let pass = mapping.pass { lines.append("pass: \(pass)") }
        lines.append("entityMappings:")
        if mapping.entityMappings.isEmpty { lines[lines.count - 1] += " []" }
        let sourceHashes = VersionHash.entityHashes(of: source), destinationHashes = VersionHash.entityHashes(of: destination)
        for entityMapping in mapping.entityMappings {
            lines.append("  - name: \(YAMLText.scalar(entityMapping.name))")
            for note in notes[entityMapping.name] ?? [] { lines.append("    # " + YAMLText.comment(note)) }
            if let name = entityMapping.source, let entity = source.entity(named: name), let hash = sourceHashes[name] {
                lines.append("    sourceHash: \(recorded(hash, VersionHash.propertyFingerprints(of: entity, in: source)))")
            }
            if let name = entityMapping.destination, let entity = destination.entity(named: name), let hash = destinationHashes[name] {
                lines.append("    destinationHash: \(recorded(hash, VersionHash.propertyFingerprints(of: entity, in: destination)))")
            }
            if let name = entityMapping.source { lines.append("    source: \(YAMLText.scalar(name))") }
            if let name = entityMapping.destination { lines.append("    destination: \(YAMLText.scalar(name))") }
            if entityMapping.type == .remove || entityMapping.type == .add || entityMapping.type == .copy { lines.append("    type: \(entityMapping.type.rawValue)") }
            if let policy = entityMapping.policy { lines.append("    policy: \(YAMLText.scalar(policy))") }
            if !entityMapping.userInfo.isEmpty {
                let entries = entityMapping.userInfo.keys.sorted().map { "\(YAMLText.flowScalar($0)): \(YAMLText.flowScalar(entityMapping.userInfo[$0] ?? ""))" }
                lines.append("    userInfo: { \(entries.joined(separator: ", ")) }")
            }
            if !entityMapping.todo.isEmpty {
                lines.append("    # Left to do: inference cannot decide these; `mapc check` reports them until they are done and deleted.")
                lines.append("    todo:")
                lines += entityMapping.todo.map { "      - \(YAMLText.scalar($0.text))" }
            }
            if !entityMapping.drops.isEmpty {
                lines.append("    # Source properties whose values are dropped on purpose; `mapc check` warns about any other it reads nowhere.")
                lines.append("    drops: [\(entityMapping.drops.map(YAMLText.flowScalar).joined(separator: ", "))]")
            }
            if let sourceExpression = entityMapping.sourceExpression { lines.append("    sourceExpression: \(YAMLText.scalar(sourceExpression.source.text))") }
            if let filter = entityMapping.filter { lines.append("    filter: \(YAMLText.scalar(filter.source.text))") }
            for (key, properties) in [("attributes", entityMapping.attributes), ("relationships", entityMapping.relationships)] where !properties.isEmpty {
                lines.append("    \(key):")
                for property in properties { lines.append("      \(YAMLText.scalar(property.name)): \(YAMLText.scalar(property.expression.source.text))") }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A recorded hash as a mapping file carries it: `{ hash: …, properties: { name: … } }`, every
    /// hash quoted when YAML would read it as a number (one of digits only is).
    package static func recorded(_ hash: String, _ properties: [String: String]) -> String {
        let list = properties.keys.sorted().map { "\(YAMLText.flowScalar($0)): \(YAMLText.flowScalar(properties[$0] ?? ""))" }.joined(separator: ", ")
        return "{ hash: \(YAMLText.flowScalar(hash)), properties: { \(list) } }"
    }
}
