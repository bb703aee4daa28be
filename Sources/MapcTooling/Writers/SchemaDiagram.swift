import Foundation
import MapcModel

/// The diagram formats `mapc graph` writes.
package enum DiagramFormat: String, Sendable, CaseIterable {
    /// Mermaid, which GitHub and most Markdown viewers render from a ```mermaid block.
    case mermaid
    /// Graphviz DOT (`dot -Tsvg`).
    case dot
}

/// A schema version drawn as a class diagram: entities with their attributes (type, optional,
/// default), relationships with their cardinality at both ends (an inverse pair drawn once), and
/// inheritance.
package enum SchemaDiagram {
    /// The diagram's text.
    package static func render(_ schema: Schema, as format: DiagramFormat) -> String {
        switch format {
        case .mermaid: return mermaid(schema)
        case .dot: return dot(schema)
        }
    }

    /// One attribute as a line: `int64 displayIndex = 0`, `binary? image`.
    static func attributeLine(_ attribute: Attribute) -> String {
        var line = "\(attribute.type.rawValue)\(attribute.isOptional ? "?" : "") \(attribute.name)"
        if let value = attribute.defaultValue, !value.isNull { line += " = \(value)" }
        if attribute.isTransient { line += " (transient)" }
        return line
    }

    /// A relationship's cardinality as drawn at its destination end: `1`, `0..1`, `0..*`, `1..5`.
    static func cardinality(_ relationship: Relationship) -> String {
        guard relationship.isToMany else { return relationship.isOptional ? "0..1" : "1" }
        let low = relationship.minCount ?? (relationship.isOptional ? 0 : 1)
        let high = relationship.maxCount.map(String.init) ?? "*"
        return "\(low)..\(high)\(relationship.isOrdered ? " ordered" : "")"
    }

    /// The relationships to draw: each inverse pair once (from the side whose name sorts first),
    /// with the inverse's cardinality at the other end.
    static func edges(_ schema: Schema) -> [(from: String, to: String, fromEnd: String, toEnd: String, label: String)] {
        var result: [(String, String, String, String, String)] = []
        for entity in schema.entities {
            for relationship in entity.relationships where !relationship.isTransient {
                let inverse = schema.inverse(of: relationship)
                if let inverse, let owner = schema.entity(named: relationship.destination),
                   (owner.name, inverse.name) < (entity.name, relationship.name), owner.relationships.contains(where: { $0.name == inverse.name }) { continue }
                let label = inverse.map { "\(relationship.name) / \($0.name)" } ?? relationship.name
                result.append((entity.name, relationship.destination, inverse.map(cardinality) ?? "", cardinality(relationship), label))
            }
        }
        return result
    }

    private static func mermaid(_ schema: Schema) -> String {
        var lines = ["classDiagram", "    direction LR"]
        for entity in schema.entities {
            lines.append("    class \(entity.name) {")
            if entity.isAbstract { lines.append("        <<abstract>>") }
            for attribute in entity.attributes { lines.append("        " + mermaidText(attributeLine(attribute))) }
            lines.append("    }")
        }
        for entity in schema.entities {
            if let parent = entity.parent { lines.append("    \(parent) <|-- \(entity.name)") }
        }
        for edge in edges(schema) {
            let fromEnd = edge.fromEnd.isEmpty ? "" : " \"\(edge.fromEnd)\""
            lines.append("    \(edge.from)\(fromEnd) --> \"\(edge.toEnd)\" \(edge.to) : \(mermaidText(edge.label))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func dot(_ schema: Schema) -> String {
        var lines = ["digraph \(dotID(schema.model + " " + schema.version)) {", "    rankdir=LR;", "    node [shape=record, fontname=\"Helvetica\"];",
                     "    edge [fontname=\"Helvetica\", fontsize=10];"]
        for entity in schema.entities {
            let title = entity.isAbstract ? "«abstract»\\n" + dotRecordText(entity.name) : dotRecordText(entity.name)
            let fields = entity.attributes.map { dotRecordText(attributeLine($0)) }.joined(separator: "\\l")
            // Node ids quoted: an entity named `Node`, `Edge` or `Graph` is a DOT keyword (in any case) bare.
            lines.append("    \(dotID(entity.name)) [label=\"{\(title)|\(fields)\(fields.isEmpty ? "" : "\\l")}\"];")
        }
        for entity in schema.entities {
            if let parent = entity.parent { lines.append("    \(dotID(entity.name)) -> \(dotID(parent)) [arrowhead=empty];") }
        }
        for edge in edges(schema) {
            lines.append("    \(dotID(edge.from)) -> \(dotID(edge.to)) [label=\(dotID(edge.label)), headlabel=\(dotID(edge.toEnd)), taillabel=\(dotID(edge.fromEnd)), arrowhead=vee\(edge.fromEnd.isEmpty ? "" : ", dir=both, arrowtail=vee")];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text inside a Mermaid diagram: characters Mermaid reads as syntax written as entities.
    package static func mermaidText(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\"": result += "#quot;"
            case "<": result += "#lt;"
            case ">": result += "#gt;"
            case "{": result += "#123;"
            case "}": result += "#125;"
            case "\n": result += " "
            default: result.append(character)
            }
        }
        return result
    }

    /// A DOT quoted string.
    package static func dotID(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    /// Text inside a DOT record label, where `{}|<>` are structure.
    static func dotRecordText(_ text: String) -> String {
        var result = ""
        for character in text {
            if "{}|<>\"\\".contains(character) { result += "\\" }
            result.append(character == "\n" ? " " : character)
        }
        return result
    }
}
