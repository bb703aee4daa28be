import Foundation
import Testing

/// `mapc graph`, and the pictures in the README and the tutorial, which must be what it draws.
@Suite("mapc graph")
struct GraphCommandTests {
    @Test func aSchemaIsDrawnWithItsAttributesRelationshipsAndInheritance() throws {
        let run = try CLI.run(["graph", "v4", "--schemas", CLI.packageRoot.appendingPathComponent("schemas").path], in: CLI.packageRoot)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("classDiagram\n"))
        #expect(run.stdout.contains("        binary? image\n") && run.stdout.contains("        int64 displayIndex = 0\n"))
        #expect(run.stdout.contains("    Attachment <|-- ImageAttachment\n"))
        #expect(run.stdout.contains(#"    Attachment "0..*" --> "0..1" Note : note / attachments"#), "an inverse pair is one edge with both ends")
        let dot = try CLI.run(["graph", "v4", "--format", "dot"], in: CLI.packageRoot)
        #expect(dot.stdout.hasPrefix("digraph \"UnCloudNotes v4\" {") && dot.stdout.contains(#""ImageAttachment" -> "Attachment" [arrowhead=empty];"#))
    }

    @Test func aMappingIsDrawnWithItsFiltersAndPolicies() throws {
        let run = try CLI.run(["graph", "mappings/mapping_v3_to_v4.yaml"], in: CLI.packageRoot)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#"s_Attachment -->|"AttachmentToImageAttachment<br/>custom<br/>policy: UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4"| d_ImageAttachment"#))
        let filtered = try CLI.run(["graph", "mappings/mapping_v2_to_v3.yaml"], in: CLI.packageRoot)
        #expect(filtered.stdout.contains(#"s_Note -->|"NoteToAttachment<br/>filter: image != nil"| d_Attachment"#))
        // Mermaid's syntax characters in a filter are written as entities.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-graph-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - { name: Some, source: Note, destination: Note, type: copy, filter: 'displayIndex > 2 AND title != \"x\"' }\n  - { name: Drop, source: Note, type: remove }\n", to: "m.yaml")
        let escaped = try CLI.run(["graph", "m.yaml"], in: folder)
        #expect(escaped.stdout.contains("filter: displayIndex #gt; 2 AND title != #quot;x#quot;"), "\(escaped.stdout)")
        #expect(escaped.stdout.contains("s_Note -->|\"Drop<br/>remove\"| dropped"))
    }

    @Test func thePicturesInTheDocsAreWhatGraphDraws() throws {
        let v4 = try CLI.run(["graph", "v4"], in: CLI.packageRoot).stdout
        let mapping = try CLI.run(["graph", "mappings/mapping_v2_to_v3.yaml"], in: CLI.packageRoot).stdout
        for doc in ["README.md", "docs/tutorial.md"] {
            let text = try CLI.packageRoot.read(doc)
            #expect(text.contains("```mermaid\n" + v4 + "```"), "\(doc) shows `mapc graph v4`")
            #expect(text.contains("```mermaid\n" + mapping + "```"), "\(doc) shows `mapc graph mappings/mapping_v2_to_v3.yaml`")
        }
    }
}

/// An entity named like a DOT keyword (`Node`, `Edge`, `Graph`, in any case) was written bare as
/// a node's id: `Node [label=…]` set every node's defaults, and the entity was not drawn; an edge
/// to one was a syntax error. Node ids are quoted.
@Suite("DOT keywords as entity names")
struct DotKeywordEntityTests {
    @Test func entitiesNamedLikeDotKeywordsAreDrawn() throws {
        let folder = try CLI.project(versions: [("v1", "  Node:\n    attributes:\n      a: string?\n    relationships:\n      graph: {destination: Graph, inverse: nodes, optional: true}\n  Graph:\n    relationships:\n      nodes: {destination: Node, inverse: graph, toMany: true, optional: true}\n  Edge:\n    parent: Node\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["graph", "v1", "--format", "dot"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\n    \"Node\" [label=") && run.stdout.contains("\"Graph\" -> \"Node\"") && run.stdout.contains("\"Edge\" -> \"Node\" [arrowhead=empty]"), "\(run.stdout)")
        #expect(!run.stdout.contains("\n    Node ") && !run.stdout.contains("\n    Graph "), "\(run.stdout)")
    }
}
