import Foundation
import MapcModel
import MapcMigration

/// A mapping drawn as a flow: the source version's entities on the left, the destination's on the
/// right, an arrow per entity mapping labelled with its name, type, filter and policy; add mappings
/// come from "new", remove mappings go to "dropped". A dashed arrow leads to each entity a
/// mapping's policy declares it creates (`EntityMigrationPolicy.createdEntities`).
package enum MappingDiagram {
    /// The diagram's text; `policies` tells which entities each mapping's policy creates (of
    /// those, the entities `destination` has, when given: a policy serving several steps names
    /// what it creates in each).
    package static func render(_ mapping: MappingModel, as format: DiagramFormat, policies: PolicyRegistry = .shared, destination: Schema? = nil) -> String {
        let sources = orderedUnique(mapping.entityMappings.compactMap(\.source))
        var edges = mapping.entityMappings.map { entityMapping -> (from: String, to: String, label: [String], created: Bool) in
            var label = [entityMapping.name]
            if entityMapping.type != .transform { label.append(entityMapping.type.rawValue) }
            if let filter = entityMapping.filter { label.append("filter: \(filter.source.text)") }
            if let policy = entityMapping.policy { label.append("policy: \(policy)") }
            return (entityMapping.source.map { "s_\($0)" } ?? "new", entityMapping.destination.map { "d_\($0)" } ?? "dropped", label, false)
        }
        var created: [String] = []
        for entityMapping in mapping.entityMappings {
            guard let name = entityMapping.policy, let policy = policies.policy(named: name) else { continue }
            for entity in policy.createdEntities.sorted() where destination.map({ $0.entity(named: entity) != nil }) ?? true {
                created.append(entity)
                edges.append((entityMapping.source.map { "s_\($0)" } ?? "new", "d_\(entity)", [entityMapping.name, "created by \(name)"], true))
            }
        }
        let destinations = orderedUnique(mapping.entityMappings.compactMap(\.destination) + created)
        let hasAdd = edges.contains { $0.from == "new" }, hasRemove = edges.contains { $0.to == "dropped" }
        switch format {
        case .mermaid:
            var lines = ["flowchart LR"]
            lines.append("    subgraph source [\"\(SchemaDiagram.mermaidText(mapping.source))\"]")
            lines += sources.map { "        s_\($0)[\"\($0)\"]" }
            if hasAdd { lines.append("        new((new))") }
            lines.append("    end")
            lines.append("    subgraph destination [\"\(SchemaDiagram.mermaidText(mapping.destination))\"]")
            lines += destinations.map { "        d_\($0)[\"\($0)\"]" }
            if hasRemove { lines.append("        dropped((dropped))") }
            lines.append("    end")
            for edge in edges {
                lines.append("    \(edge.from) \(edge.created ? "-.->" : "-->")|\"\(edge.label.map(SchemaDiagram.mermaidText).joined(separator: "<br/>"))\"| \(edge.to)")
            }
            return lines.joined(separator: "\n") + "\n"
        case .dot:
            var lines = ["digraph \(SchemaDiagram.dotID("\(mapping.source) to \(mapping.destination)")) {", "    rankdir=LR;",
                         "    node [shape=box, fontname=\"Helvetica\"];", "    edge [fontname=\"Helvetica\", fontsize=10];"]
            lines.append("    subgraph cluster_source { label=\(SchemaDiagram.dotID(mapping.source));")
            lines += sources.map { "        s_\($0) [label=\(SchemaDiagram.dotID($0))];" }
            if hasAdd { lines.append("        new [shape=circle, label=\"new\"];") }
            lines.append("    }")
            lines.append("    subgraph cluster_destination { label=\(SchemaDiagram.dotID(mapping.destination));")
            lines += destinations.map { "        d_\($0) [label=\(SchemaDiagram.dotID($0))];" }
            if hasRemove { lines.append("        dropped [shape=circle, label=\"dropped\"];") }
            lines.append("    }")
            for edge in edges {
                lines.append("    \(edge.from) -> \(edge.to) [label=\(SchemaDiagram.dotID(edge.label.joined(separator: "\n")))\(edge.created ? ", style=dashed" : "")];")
            }
            lines.append("}")
            return lines.joined(separator: "\n") + "\n"
        }
    }

    private static func orderedUnique(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }
}
