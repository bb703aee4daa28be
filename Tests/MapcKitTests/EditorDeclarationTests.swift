import Foundation
import Testing
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcMigration
@testable import MapcTooling

/// Definitions and hovers the editor probe found missing: a property mapping's key (the
/// destination's property), the versions a mapping names, its policy, and in a schema the entity
/// a relationship or parent names and the relationship an inverse names.
@Suite("Editor declarations")
struct EditorDeclarationTests {
    /// A project of the shipped schemas and v2 -> v3 mapping, and where things are in it.
    struct Project {
        var folder: URL
        var editor: EditorProject
        var mapping: String
        var mappingLines: [String]

        init(policyLocations: [String: FileLocation] = [:]) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-declaration-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("schemas"), to: folder.appendingPathComponent("schemas"))
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("mappings"), to: folder.appendingPathComponent("mappings"))
            mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").path
            mappingLines = SourceFile.lines(of: try String(contentsOfFile: mapping, encoding: .utf8))
            editor = EditorProject(schemasFolder: folder.appendingPathComponent("schemas").path, mappingsFolder: folder.appendingPathComponent("mappings").path)
            editor.policyLocations = policyLocations
        }

        /// Line (from 1) and column (from 1, inside the word) of the nth line containing `text`, at `word`.
        func place(_ text: String, _ word: String, in lines: [String], nth: Int = 0) throws -> (line: Int, column: Int) {
            let index = try #require(lines.indices.filter { lines[$0].contains(text) }.dropFirst(nth).first, "no line with \(text)")
            let start = try #require(lines[index].range(of: text)).lowerBound
            let range = try #require(lines[index].range(of: word, range: start..<lines[index].endIndex))
            return (index + 1, lines[index][..<range.lowerBound].count + 2)
        }

        /// The line (from 1) of a schema file holding `text`.
        func schemaLine(_ version: String, _ text: String) throws -> Int {
            let lines = SourceFile.lines(of: try String(contentsOf: folder.appendingPathComponent("schemas/\(version).yaml"), encoding: .utf8))
            return try #require(lines.firstIndex { $0.contains(text) }) + 1
        }
    }

    @Test func aPropertyMappingsKeyLeadsToTheDestinationsProperty() throws {
        let project = try Project()
        defer { try? FileManager.default.removeItem(at: project.folder) }
        // `image:` under NoteToAttachment's attributes is Attachment.image of v3, not Note.image of v2.
        let at = try project.place("image: $source.image", "image", in: project.mappingLines)
        let found = try #require(project.editor.declaration(in: project.mapping, line: at.line, column: at.column))
        #expect(found.description == "Attachment.image: binary, required in v3", "\(found.description)")
        let imageLine = try project.schemaLine("v3", "image:")
        #expect(found.location?.path.hasSuffix("schemas/v3.yaml") == true && found.location?.line == imageLine, "\(String(describing: found.location))")
        #expect(found.length == "image".count)
        // The hover says what the expression gives, then what it sets.
        let hover = project.editor.hover(in: project.mapping, line: at.line, column: at.column)
        #expect(hover == "image = $source.image: binary, can be nil ($source.image is optional)\n\ninto Attachment.image: binary, required in v3" || hover?.hasSuffix("\n\ninto Attachment.image: binary, required in v3") == true, "\(hover ?? "nil")")
        #expect(hover?.hasPrefix("image = $source.image: binary") == true, "\(hover ?? "nil")")
        // A relationship's key too.
        let note = try project.place("note: FUNCTION", "note", in: project.mappingLines)
        #expect(project.editor.declaration(in: project.mapping, line: note.line, column: note.column)?.description == "Attachment.note: to-one Note, optional in v3")
        // The expression's own names stay the source's.
        let read = try project.place("image: $source.image", "$source.image", in: project.mappingLines)
        #expect(project.editor.declaration(in: project.mapping, line: read.line, column: read.column + 9)?.description == "Note.image: binary, optional (can be nil) in v2")
    }

    @Test func theStepsVersionsLeadToTheirSchemas() throws {
        let project = try Project()
        defer { try? FileManager.default.removeItem(at: project.folder) }
        for (key, version) in [("source: v2", "v2"), ("destination: v3", "v3")] {
            let at = try project.place(key, version, in: project.mappingLines)
            let found = try #require(project.editor.declaration(in: project.mapping, line: at.line, column: at.column), "\(key)")
            let versionLine = try project.schemaLine(version, "version:")
            #expect(found.location?.path.hasSuffix("schemas/\(version).yaml") == true && found.location?.line == versionLine, "\(String(describing: found.location))")
            // At the version's value.
            #expect(found.location?.column == "version: ".count + 1 && found.length == version.count)
            #expect(found.description.hasPrefix("version \(version) of UnCloudNotes: "), "\(found.description)")
        }
        // An entity mapping's `source: Note` is still the entity.
        let entity = try project.place("    source: Note", "Note", in: project.mappingLines)
        #expect(project.editor.declaration(in: project.mapping, line: entity.line, column: entity.column)?.description.hasPrefix("entity Note of v2") == true)
    }

    @Test func aPolicyLeadsToItsClass() throws {
        let declared = FileLocation(path: "/project/policies/Shouting.swift", line: 7, column: 20)
        let project = try Project(policyLocations: ["Shouting": declared])
        defer { try? FileManager.default.removeItem(at: project.folder) }
        var lines = project.mappingLines
        // Named with a module, as Core Data's mapping models name policy classes.
        let index = try #require(lines.firstIndex { $0.contains("destination: Attachment") })
        lines.insert("    policy: App.Shouting", at: index + 1)
        try lines.joined(separator: "\n").write(toFile: project.mapping, atomically: true, encoding: .utf8)
        let found = try #require(project.editor.declaration(in: project.mapping, line: index + 2, column: 20))
        #expect(found.location == declared && found.length == "Shouting".count)
        #expect(found.description == "policy App.Shouting (not among the policies read)", "\(found.description)")
        // On the module's part too.
        #expect(project.editor.declaration(in: project.mapping, line: index + 2, column: 14)?.location == declared)
    }

    @Test func aSchemasRelationshipLeadsToItsEntityAndInverse() throws {
        let project = try Project()
        defer { try? FileManager.default.removeItem(at: project.folder) }
        let schema = project.folder.appendingPathComponent("schemas/v3.yaml").path
        let lines = SourceFile.lines(of: try String(contentsOfFile: schema, encoding: .utf8))
        let destination = try project.place("attachments:", "Attachment,", in: lines)
        let entity = try #require(project.editor.declaration(in: schema, line: destination.line, column: destination.column))
        let attachmentLine = try project.schemaLine("v3", "  Attachment:")
        #expect(entity.location?.line == attachmentLine && entity.description.hasPrefix("entity Attachment of v3: image: binary"), "\(entity)")
        let inverse = try project.place("attachments:", "note,", in: lines)
        let relationship = try #require(project.editor.declaration(in: schema, line: inverse.line, column: inverse.column))
        let noteLine = try project.schemaLine("v3", "note:         {")
        #expect(relationship.location?.line == noteLine && relationship.description == "Attachment.note: to-one Note, optional in v3", "\(relationship)")
        // Block style: `inverse:` on a line of its own, below its relationship's name.
        let block = lines.joined(separator: "\n").replacingOccurrences(of: "      attachments:  { destination: Attachment, toMany: true, inverse: note, deleteRule: cascade, optional: true }",
                                                                        with: "      attachments:\n        destination: Attachment\n        toMany: true\n        inverse: note\n        optional: true")
        try block.write(toFile: schema, atomically: true, encoding: .utf8)
        let blockLines = SourceFile.lines(of: block)
        let inverseLine = try #require(blockLines.firstIndex { $0.contains("inverse: note") })
        let below = project.editor.declaration(in: schema, line: inverseLine + 1, column: blockLines[inverseLine].count - 1)
        #expect(below?.description == "Attachment.note: to-one Note, optional in v3", "\(String(describing: below))")
        try lines.joined(separator: "\n").write(toFile: schema, atomically: true, encoding: .utf8)
        // A name that is a key, or a value of another key, is nothing to go to.
        let key = try project.place("attachments:", "attachments", in: lines)
        #expect(project.editor.declaration(in: schema, line: key.line, column: key.column) == nil)
        let rule = try project.place("attachments:", "cascade", in: lines)
        #expect(project.editor.declaration(in: schema, line: rule.line, column: rule.column) == nil)
    }
}
