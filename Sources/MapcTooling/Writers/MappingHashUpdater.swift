import MapcFoundation
import MapcModel
import MapcMigration
/// Writes the current entity hashes into a mapping file (`mapc check --update-hashes`), editing
/// the text so comments and layout are kept: each entity mapping gets `sourceHash:` and
/// `destinationHash:` lines under its `name:`, replacing earlier ones.
package enum MappingHashUpdater {
    /// The file's new text.
    package static func update(_ mapping: MappingModel, source: Schema, destination: Schema) -> String? {
        guard let file = mapping.file else { return nil }
        // Lines by the scalar `\n` (a split on Characters never meets `\r\n`, one Character: a
        // CRLF file was one line, and nothing was updated), written back with the file's own breaks.
        var lines = SourceFile.lines(of: file.text)
        let lineBreak = file.text.unicodeScalars.contains("\r") ? "\r\n" : "\n"
        // Edits by line index, applied bottom-up so indexes stay valid.
        var replacements: [Int: String] = [:]
        var insertions: [Int: [String]] = [:]
        for entityMapping in mapping.entityMappings {
            guard let nameLine = entityMapping.location?.line, nameLine - 1 < lines.count, let column = entityMapping.location?.column else { continue }
            // The key `name:` starts before its value; find its column on the line.
            let line = lines[nameLine - 1]
            let keyColumn = line.range(of: "name:").map { line.distance(from: line.startIndex, to: $0.lowerBound) } ?? max(0, column - 7)
            let indent = String(repeating: " ", count: keyColumn)
            for (key, recorded, entityName, schema) in [("sourceHash", entityMapping.sourceHash, entityMapping.source, source),
                                                        ("destinationHash", entityMapping.destinationHash, entityMapping.destination, destination)] {
                guard let entityName, let entity = schema.entity(named: entityName) else { continue }
                let hash = VersionHash.entityHash(of: entity, in: schema)
                let fingerprints = VersionHash.propertyFingerprints(of: entity, in: schema)
                let text = "\(indent)\(key): \(MappingWriter.recorded(hash, fingerprints))"
                if let location = recorded?.location, location.line - 1 < lines.count, lines[location.line - 1].contains("\(key):") {
                    replacements[location.line - 1] = text
                } else {
                    insertions[nameLine - 1, default: []].append(text)
                }
            }
        }
        for (index, text) in replacements { lines[index] = text }
        for index in insertions.keys.sorted(by: >) {
            lines.insert(contentsOf: insertions[index] ?? [], at: index + 1)
        }
        return lines.joined(separator: lineBreak)
    }
}
