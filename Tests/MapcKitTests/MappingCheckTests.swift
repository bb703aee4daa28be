import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

/// A mapping file that must draw a diagnostic: the text, the message part, and where.
struct MappingCheckCase: CustomTestStringConvertible, Sendable {
    let name: String
    let yaml: String
    let message: String
    let line: Int
    let column: Int
    var severity: Severity = .error
    var testDescription: String { name }
}

private let noteToNote = """
  - name: NoteToNote
    source: Note
    destination: Note
    attributes:
      title: $source.title
      body: $source.body
      dateCreated: $source.dateCreated
      displayIndex: $source.displayIndex

"""

/// A v2 -> v3 mapping with `extra` appended after NoteToNote (which starts at line 4).
private func v2to3(_ extra: String, header: String = "source: v2\ndestination: v3\nentityMappings:\n") -> String {
    header + noteToNote + extra
}

private let attachmentMapping = """
  - name: NoteToAttachment
    source: Note
    destination: Attachment
    filter: image != nil
    attributes:
      image: $source.image
      dateCreated: $source.dateCreated
    relationships:
      note: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source)

"""

let mappingCheckCases: [MappingCheckCase] = [
    .init(name: "unknown source version", yaml: "source: v22\ndestination: v3\nentityMappings: []\n", message: "unknown source version 'v22'", line: 1, column: 9),
    .init(name: "unknown destination version", yaml: "source: v2\ndestination: v9\nentityMappings: []\n", message: "unknown destination version 'v9'", line: 2, column: 14),
    .init(name: "missing source", yaml: "destination: v3\nentityMappings: []\n", message: "missing 'source:'", line: 1, column: 1),
    .init(name: "unknown top-level key", yaml: "source: v2\ndestination: v3\nentityMapping: []\nentityMappings: []\n", message: "unknown key 'entityMapping' in the mapping file; did you mean 'entityMappings'?", line: 3, column: 1),
    .init(name: "unknown entity mapping key", yaml: v2to3("  - name: X\n    source: Note\n    destination: Note\n    fliter: image != nil\n"), message: "unknown key 'fliter' in an entity mapping; did you mean 'filter'?", line: 15, column: 5),
    .init(name: "entity mapping without a name", yaml: v2to3("  - source: Note\n    destination: Attachment\n"), message: "an entity mapping needs a 'name:'", line: 12, column: 5),
    .init(name: "duplicate mapping name", yaml: v2to3("  - name: NoteToNote\n    source: Note\n    type: remove\n"), message: "duplicate entity mapping name 'NoteToNote' (first at line 4)", line: 12, column: 11),
    .init(name: "unknown mapping type", yaml: v2to3("  - name: X\n    source: Note\n    destination: Note\n    type: transfrom\n"), message: "unknown entity mapping type 'transfrom'; did you mean 'transform'?", line: 15, column: 11),
    .init(name: "unknown source entity", yaml: v2to3("  - name: X\n    source: Nte\n    destination: Attachment\n"), message: "unknown source entity 'Nte' in v2; did you mean 'Note'?", line: 13, column: 13),
    .init(name: "unknown destination entity", yaml: v2to3("  - name: X\n    source: Note\n    destination: Atachment\n"), message: "unknown destination entity 'Atachment' in v3; did you mean 'Attachment'?", line: 14, column: 18),
    // An entity no longer in either model (a mapping left from an earlier model): what to do, not only the list.
    .init(name: "unknown source entity like no other", yaml: v2to3("  - name: X\n    source: Album\n    destination: Attachment\n"), message: "unknown source entity 'Album' in v2; name one of its entities (Note), or delete mapping 'X' if Album was never in v2", line: 13, column: 13),
    .init(name: "unknown destination entity like no other", yaml: v2to3("  - name: X\n    source: Note\n    destination: Keyword\n"), message: "unknown destination entity 'Keyword' in v3; name one of its entities (Note, Attachment), or, to drop the objects of 'X', make it 'type: remove' without a destination", line: 14, column: 18),
    .init(name: "unknown destination attribute", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "      image: $source.image", with: "      imgae: $source.image")), message: "unknown attribute 'imgae' of destination entity Attachment; did you mean 'image'?", line: 17, column: 7),
    .init(name: "attribute listed as relationship", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "      note: FUNCTION", with: "      image: $source.image\n      note: FUNCTION")), message: "'image' is an attribute of Attachment; move it under 'attributes:'", line: 20, column: 7),
    .init(name: "relationship listed as attribute", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "      image: $source.image", with: "      image: $source.image\n      note: $source")), message: "'note' is a relationship of Attachment; move it under 'relationships:'", line: 18, column: 7),
    .init(name: "unknown destination relationship", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "      note: FUNCTION", with: "      nte: FUNCTION")), message: "unknown relationship 'nte' of destination entity Attachment; did you mean 'note'?", line: 20, column: 7),
    .init(name: "unknown source key in expression", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "image: $source.image", with: "image: $source.imag")), message: "unknown key 'imag' on Note; did you mean 'image'?", line: 17, column: 22),
    .init(name: "expression does not parse", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "image: $source.image", with: "image: $source.image +")), message: "expected a value, found the end of the expression", line: 17, column: 29),
    .init(name: "result type does not fit", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "image: $source.image", with: "image: $source.title")), message: "a string result cannot be stored in attribute 'Attachment.image' (binary)", line: 17, column: 14),
    .init(name: "double into integer", yaml: v2to3("").replacingOccurrences(of: "displayIndex: $source.displayIndex", with: "displayIndex: $source.displayIndex / 2.0"), message: "warning: a double result stored in the integer attribute 'Note.displayIndex' (int64): a value with a fraction, or out of range, fails the migration", line: 11, column: 21, severity: .warning),
    .init(name: "filter is not a predicate", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "filter: image != nil", with: "filter: image")), message: "expected a predicate (true or false), but this is a binary", line: 15, column: 13),
    .init(name: "filter reads an unknown key", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "filter: image != nil", with: "filter: imag != nil")), message: "unknown key 'imag' on Note; did you mean 'image'?", line: 15, column: 13),
    .init(name: "quoted filter keeps its column", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "filter: image != nil", with: "filter: \"imag != nil\"")), message: "unknown key 'imag' on Note", line: 15, column: 14),
    .init(name: "manager names a missing mapping", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "\"NoteToNote\", $source)", with: "\"NoteToNot\", $source)")), message: "no entity mapping named 'NoteToNot'; did you mean 'NoteToNote'?", line: 20, column: 94),
    .init(name: "manager mapping with the wrong destination", yaml: v2to3(attachmentMapping + "  - name: Other\n    source: Note\n    destination: Attachment\n    filter: FALSEPREDICATE\n    attributes:\n      image: $source.image\n      dateCreated: $source.dateCreated\n    relationships:\n      note: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToAttachment\", $source)\n"),
          message: "relationship 'note' leads to Note, but this expression gives Attachment objects (mapping 'NoteToAttachment' creates Attachment objects)", line: 29, column: 13),
    .init(name: "relationship given source objects", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "note: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)", with: "note: $source")),
          message: "relationship 'note' is given Note objects of the source store; it takes the destination objects created from them; write FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)", line: 20, column: 13),
    .init(name: "relationship given source objects on one branch", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "note: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)", with: "note: TERNARY(title == 'x', FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source), SELF)")),
          message: "relationship 'note' is given objects of the source store; it takes the destination objects created from them; write FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", <the source objects>)", line: 20, column: 13),
    .init(name: "relationship given source objects by a fetch", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "note: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)", with: "note: FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"TRUEPREDICATE\"), $manager.destinationContext, NO)")),
          message: "relationship 'note' is given Note objects of the source store", line: 20, column: 13),
    .init(name: "key path on destination objects", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "dateCreated: $source.dateCreated\n    relationships", with: "dateCreated: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source).dateCreated\n    relationships")),
          message: "key paths read the source store's objects only; these are objects of the destination store", line: 18, column: 20),
    .init(name: "relationship given a value", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "note: FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)", with: "note: $source.title")), message: "relationship 'note' takes objects, but this expression gives string", line: 20, column: 13),
    .init(name: "required attribute without expression", yaml: v2to3("").replacingOccurrences(of: "      body: $source.body\n", with: ""), message: "required attribute 'body' of Note has neither an expression nor a default; add 'body: $source.body'", line: 4, column: 11),
    .init(name: "source entity nobody reads", yaml: "source: v2\ndestination: v3\nentityMappings:\n  - name: Nothing\n    source: Note\n    type: remove\n" .replacingOccurrences(of: "  - name: Nothing\n    source: Note\n    type: remove\n", with: "  []\n"), message: "no entity mapping reads Note objects of v2; they would be dropped", line: 3, column: 1, severity: .warning),
    .init(name: "unmapped attribute loses values", yaml: "source: v2\ndestination: v3\nentityMappings:\n" + attachmentMapping.replacingOccurrences(of: "      image: $source.image\n      dateCreated: $source.dateCreated\n", with: "      image: $source.image\n      dateCreated: $source.dateCreated\n") + "  - name: N\n    source: Note\n    destination: Note\n    attributes:\n      title: $source.title\n      body: $source.body\n      dateCreated: $source.dateCreated\n",
          message: "attribute 'displayIndex' exists in Note in both versions but is not mapped; its values will be lost", line: 13, column: 11, severity: .warning),
    .init(name: "source attribute no expression reads", yaml: v2to3(""),
          message: "'image' of Note in v2 is read by no expression of this mapping: its values would be dropped; map it where the values belong, or add 'drops: [image]' to 'NoteToNote' to drop them on purpose",
          line: 4, column: 11, severity: .warning),
    .init(name: "a misspelt dropped property", yaml: v2to3("").replacingOccurrences(of: "    destination: Note\n", with: "    destination: Note\n    drops: [imgae]\n"),
          message: "'drops:' names 'imgae', which Note in v2 does not have; did you mean 'image'?", line: 7, column: 13),
    .init(name: "unknown policy", yaml: v2to3("  - name: X\n    source: Note\n    destination: Attachment\n    policy: AttachmentToImageAttachmentMigrationPolicyV3toV5\n"), message: "unknown policy 'AttachmentToImageAttachmentMigrationPolicyV3toV5'; did you mean 'AttachmentToImageAttachmentMigrationPolicyV3toV4'?", line: 15, column: 13),
    .init(name: "entity policy without a policy", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "image: $source.image", with: "image: FUNCTION($entityPolicy, 'thumbnail:', $source.image)")), message: "the entity policy has no function 'thumbnail:'; this mapping has no policy: name one under 'policy:' whose class registers 'thumbnail:'", line: 17, column: 38),
    .init(name: "remove mapping with a destination", yaml: v2to3("  - name: X\n    source: Note\n    destination: Note\n    type: remove\n"), message: "a remove mapping has no destination", line: 15, column: 11),
    .init(name: "copy across entities", yaml: v2to3("  - name: X\n    source: Note\n    destination: Attachment\n    type: copy\n"), message: "a copy mapping needs the same entity on both sides", line: 15, column: 11),
    .init(name: "to-many path in a filter", yaml: "source: v3\ndestination: v4\nentityMappings:\n  - name: N\n    source: Note\n    destination: Note\n    filter: attachments.image != nil\n", message: "a to-many key path compared with nil", line: 7, column: 13),
    .init(name: "unsafe regex in a filter", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "filter: image != nil", with: "filter: title MATCHES '(a+)+'")), message: "MATCHES pattern refused", line: 15, column: 27),
    .init(name: "AND/OR mix warning", yaml: v2to3(attachmentMapping.replacingOccurrences(of: "filter: image != nil", with: "filter: image != nil AND displayIndex > 1 OR title == 'x'")), message: "AND binds more tightly than OR here", line: 15, column: 13, severity: .warning),
    .init(name: "stale source hash", yaml: v2to3("").replacingOccurrences(of: "  - name: NoteToNote\n", with: "  - name: NoteToNote\n    sourceHash: { hash: 0000, properties: { title: 3cbd9ed0, colour: 12345678 } }\n"), message: "stale source hash: Note in v2 has changed since this mapping was written", line: 5, column: 17),
    .init(name: "second source entity nobody reads", yaml: "source: v3\ndestination: v3\nentityMappings:\n  - name: N\n    source: Note\n    destination: Note\n".replacingOccurrences(of: "destination: v3", with: "destination: v3"), message: "no entity mapping reads Attachment objects", line: 3, column: 1, severity: .warning),
]

@Suite("Mapping check")
struct MappingCheckTests {
    init() { registerUnCloudNotesPolicies() }

    private func diagnostics(_ yaml: String) throws -> [Diagnostic] {
        let (mapping, loadDiagnostics) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml))
        guard let mapping, !loadDiagnostics.hasErrors else { return loadDiagnostics }
        var checker = MappingChecker(mapping: mapping)
        return loadDiagnostics + checker.check(catalog: try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path))
    }

    @Test func thereAreAtLeastThirtyCases() {
        #expect(mappingCheckCases.count >= 30)
    }

    @Test("a mapping mistake is reported with message and position", arguments: mappingCheckCases)
    func reports(_ testCase: MappingCheckCase) throws {
        let found = try diagnostics(testCase.yaml)
        let match = try #require(found.first { $0.description.contains(testCase.message) }, "got:\n\(found.map(\.description).joined(separator: "\n"))")
        #expect(match.severity == testCase.severity)
        #expect(match.location?.line == testCase.line, "\(match)")
        #expect(match.location?.column == testCase.column, "\(match)")
    }

    /// Two mappings setting the two sides of one relationship from source relationships that are
    /// not each other's inverse: the later decides where they differ, and one that finds nothing
    /// clears the other's link, so the result depended on the mappings' order with no word from
    /// `check` (a differential probe). From a relationship and its inverse, nothing is said.
    @Test func bothSidesSetFromUnrelatedSourceRelationshipsAreWarned() throws {
        let schema = """
            model: M
            version: VERSION
            entities:
              A:
                attributes: { n: int64? }
                relationships:
                  kids: { destination: B, toMany: true, inverse: owner, optional: true }
                  fav: { destination: B, toMany: true, inverse: fans, optional: true }
              B:
                attributes: { n: int64? }
                relationships:
                  owner: { destination: A, inverse: kids, optional: true }
                  fans: { destination: A, toMany: true, inverse: fav, optional: true }

            """
        let catalog = SchemaCatalog(schemas: [try loadSchema(schema.replacingOccurrences(of: "VERSION", with: "v1")),
                                              try loadSchema(schema.replacingOccurrences(of: "VERSION", with: "v2"))])
        func found(kidsFrom key: String, favFrom favKey: String = "fav", copyB: Bool = false) throws -> [String] {
            let lookup = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\""
            let yaml = """
                source: v1
                destination: v2
                entityMappings:
                  - name: MA
                    source: A
                    destination: A
                    attributes: { n: $source.n }
                    relationships:
                      kids: '\(lookup), "MB", $source.\(key))'
                      fav: '\(lookup), "MB", $source.\(favKey))'
                  - name: MB
                    source: B
                    destination: B
                    attributes: { n: $source.n }
                    relationships:
                      owner: '\(lookup), "MA", $source.owner)'
                      fans: '\(lookup), "MA", $source.fans)'

                """
            let text = copyB ? yaml.components(separatedBy: "  - name: MB")[0] + "  - { name: MB, source: B, destination: B, type: copy }\n" : yaml
            let (mapping, _) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: text))
            var checker = MappingChecker(mapping: try #require(mapping))
            return checker.check(catalog: catalog).map(\.description)
        }
        let crossed = try found(kidsFrom: "fav")
        #expect(crossed.contains { $0.contains("16:7: warning: 'owner' of B and 'kids' of A are one relationship, set from both sides from source relationships that are not each other's inverse (A.fav in 'MA', B.owner here)") }, "\(crossed)")
        #expect(crossed.filter { $0.contains("are one relationship") }.count == 1, "\(crossed)")
        let paired = try found(kidsFrom: "kids")
        #expect(!paired.contains { $0.contains("are one relationship") }, "\(paired)")
        // A copy mapping's implied `owner` (from the source's `owner`) is a side too (the review's case).
        let copied = try found(kidsFrom: "fav", copyB: true)
        #expect(copied.contains { $0.contains("'owner' of B and 'kids' of A are one relationship") && $0.contains("(A.fav in 'MA', B.owner here)") }, "\(copied)")
        // A many-to-many's sides only add links: crossing them gives both sets, in either order.
        let manyToMany = try found(kidsFrom: "kids", favFrom: "kids")
        #expect(!manyToMany.contains { $0.contains("are one relationship") }, "\(manyToMany)")
    }

    /// A source number carried into a type that rounds some of its values (an int64 past 2^53
    /// into a double) passed `check` without a word, in a mapping file and a copy mapping alike,
    /// where `plan` says what the same inferred conversion can cost (a values probe).
    @Test func aNumberCarriedIntoATypeThatRoundsIsWarned() throws {
        let catalog = SchemaCatalog(schemas: [
            try loadSchema("model: C\nversion: c1\nentities:\n  Item:\n    attributes:\n      a: int64\n      b: int32\n      c: double\n      d: int16\n"),
            try loadSchema("model: C\nversion: c2\nentities:\n  Item:\n    attributes:\n      a: double\n      b: float\n      c: float\n      d: int64\n"),
        ])
        func found(_ yaml: String) throws -> [String] {
            let (mapping, _) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml))
            var checker = MappingChecker(mapping: try #require(mapping))
            return checker.check(catalog: catalog).map(\.description)
        }
        let explicit = try found("source: c1\ndestination: c2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    attributes:\n      a: $source.a\n      b: $source.b\n      c: $source.c\n      d: $source.d\n")
        #expect(explicit.contains { $0.contains("8:7: warning: Item.a is int64 and 'a' is double: integers beyond 2^53 (9007199254740992) lose their last digits") }, "\(explicit)")
        #expect(explicit.contains { $0.contains("9:7: warning: Item.b is int32 and 'b' is float: integers beyond 2^24 (16777216) lose their last digits") }, "\(explicit)")
        // Said once: the value rules warn of a double into a float themselves; an int16 into an int64 loses nothing.
        #expect(explicit.filter { $0.contains(":10:") }.count == 1 && !explicit.contains { $0.contains(":11:") }, "\(explicit)")
        let copy = try found("source: c1\ndestination: c2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    type: copy\n")
        #expect(copy.contains { $0.contains("warning: the copy mapping carries 'a' over from int64 into double: integers beyond 2^53") }, "\(copy)")
        #expect(copy.filter { $0.contains("carries 'c'") }.count == 1 && !copy.contains { $0.contains("carries 'd'") }, "\(copy)")
    }

    /// A copy mapping carries same-named attributes over unchanged: `check` holds them to the
    /// assignability rule and to required attributes, as if each were written `name: $source.name`,
    /// so `run` does not fail on what `check` passed.
    @Test func copyMappingsAreHeldToTheSameRules() throws {
        let catalog = SchemaCatalog(schemas: [
            try loadSchema("model: C\nversion: c1\nentities:\n  Item:\n    attributes:\n      year: int32\n      size: double\n      kept: string?\n"),
            try loadSchema("model: C\nversion: c2\nentities:\n  Item:\n    attributes:\n      year: string\n      size: int64\n      kept: string\n      slug: string\n      note: string?\n"),
        ])
        let yaml = "source: c1\ndestination: c2\nentityMappings:\n  - name: ItemToItem\n    source: Item\n    destination: Item\n    type: copy\n"
        let (mapping, _) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml))
        var checker = MappingChecker(mapping: try #require(mapping))
        let found = checker.check(catalog: catalog).map(\.description)
        #expect(found.contains { $0.contains("4:11: error: the copy mapping carries 'year' over unchanged, but it was int32 and is now string: an integer value cannot be stored in a string attribute; map it under 'attributes:' with a conversion, such as 'year: CAST($source.year, \"NSString\")'") }, "\(found)")
        #expect(found.contains { $0.contains("4:11: warning: the copy mapping carries 'size' over from double into int64: a value with a fraction, or out of range, fails the migration") }, "\(found)")
        #expect(found.contains { $0.contains("4:11: error: required attribute 'slug' of Item gets no value from the copy mapping: Item in c1 has no attribute 'slug', and c2 gives no default") }, "\(found)")
        #expect(found.contains { $0.contains("4:11: warning: the copy mapping carries 'kept' over from an optional attribute into a required one without a default") }, "\(found)")
        #expect(found.count == 4, "\(found)")
        // A transform mapping that leaves the changed attribute out is told the conversion, not `year: $source.year`.
        let transform = yaml.replacingOccurrences(of: "    type: copy\n", with: "    attributes:\n      size: floor:($source.size)\n      kept: $source.kept\n      slug: $source.kept\n")
        var second = MappingChecker(mapping: try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: transform)).0))
        let told = second.check(catalog: catalog).map(\.description)
        #expect(told.contains { $0.contains("required attribute 'year' of Item has neither an expression nor a default; add a conversion, such as 'year: CAST($source.year, \"NSString\")'") }, "\(told)")
    }

    /// A relationship's expression that gives the wrong thing is underlined whole, not at its
    /// first character.
    @Test func relationshipMistakesUnderlineTheWholeExpression() throws {
        for name in ["relationship given a value", "relationship given source objects"] {
            let testCase = try #require(mappingCheckCases.first { $0.name == name }, "\(name)")
            let found = try #require(try diagnostics(testCase.yaml).first { $0.description.contains(testCase.message) })
            let line = try #require(testCase.yaml.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(testCase.line - 1).first)
            let expression = line.dropFirst(testCase.column - 1)
            #expect(found.length == expression.count, "\(name): \(found.length) for '\(expression)'")
        }
    }

    /// A required relationship no mapping sets, from either side, fails every object at run
    /// time: `check` says so, unless a mapping sets it or its inverse, or a custom policy takes part.
    @Test func aRequiredRelationshipNothingSetsIsAnError() throws {
        let catalog = SchemaCatalog(schemas: [
            try loadSchema("model: L\nversion: l1\nentities:\n  Shelf:\n    attributes:\n      name: string\n  Book:\n    attributes:\n      title: string\n"),
            try loadSchema("""
            model: L
            version: l2
            entities:
              Shelf:
                attributes:
                  name: string
                relationships:
                  books: { destination: Book, toMany: true, inverse: shelf, optional: true }
              Book:
                attributes:
                  title: string
                relationships:
                  shelf: { destination: Shelf, inverse: books }
            """),
        ])
        func found(_ bookRelationships: String, shelfRelationships: String = "", policy: String = "") throws -> [String] {
            let yaml = """
            source: l1
            destination: l2
            entityMappings:
              - name: ShelfToShelf
                source: Shelf
                destination: Shelf
                attributes: { name: $source.name }
            \(shelfRelationships)
              - name: BookToBook
                source: Book
                destination: Book
            \(policy)
                attributes: { title: $source.title }
            \(bookRelationships)
            """
            var checker = MappingChecker(mapping: try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml + "\n")).0))
            return checker.check(catalog: catalog).map(\.description)
        }
        let unset = try found("")
        #expect(unset.contains { $0.contains("9:11: error: required relationship 'shelf' of Book is set by no mapping: every object 'BookToBook' creates would fail validation; add 'shelf:' under 'relationships:' of 'BookToBook' or map its inverse 'books' in the mapping that creates the Shelf objects, or make it optional in l2") }, "\(unset)")
        let lookup = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ShelfToShelf\", $source)"
        #expect(try found("    relationships: { shelf: '\(lookup)' }").allSatisfy { !$0.contains("set by no mapping") })
        let inverse = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"BookToBook\", $source)"
        #expect(try found("", shelfRelationships: "    relationships: { books: '\(inverse)' }").allSatisfy { !$0.contains("set by no mapping") })
        #expect(try found("", policy: "    policy: UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4").allSatisfy { !$0.contains("set by no mapping") })
    }

    /// The conversions suggested for a changed type say what they do where it is not obvious.
    @Test func conversionHintsFitTheTypes() {
        #expect(MappingChecker.conversion(of: "year", from: .int32, to: .string) == "'year: CAST($source.year, \"NSString\")'")
        #expect(MappingChecker.conversion(of: "at", from: .int64, to: .date).contains("seconds since 2001-01-01; for Unix time, CAST($source.at - 978307200, \"NSDate\")"))
        #expect(MappingChecker.conversion(of: "done", from: .string, to: .bool) == "a comparison, such as 'done: $source.done ==[c] \"true\"'")
    }

    @Test func shippedMappingsAreClean() throws {
        for name in ["mapping_v2_to_v3.yaml", "mapping_v3_to_v4.yaml"] {
            let text = try String(contentsOf: packageRoot.appendingPathComponent("mappings/\(name)"), encoding: .utf8)
            #expect(try diagnostics(text).isEmpty, "\(name)")
        }
    }

    /// Values no expression reads are dropped: said unless the mapping lists them under `drops:`,
    /// and not for what other expressions carry (a key path through a relationship, the to-one
    /// side of a to-many) or for links to objects no mapping keeps.
    @Test func valuesNoExpressionReadsAreSaidUnlessDroppedOnPurpose() throws {
        let dropped = v2to3("").replacingOccurrences(of: "    destination: Note\n", with: "    destination: Note\n    drops: [image]\n")
        #expect(try diagnostics(dropped).isEmpty)
        // A v3 -> v4 mapping whose attachments are read only through the inverse and a key path.
        let v3to4 = """
        source: v3
        destination: v4
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }
          - name: AttachmentToImage
            source: Attachment
            destination: ImageAttachment
            attributes: { dateCreated: $source.dateCreated, image: $source.image, caption: 'TERNARY($source.note.title != nil, $source.note.title, "")', width: 0, height: 0 }
            relationships: { note: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source.note)' }

        """
        let clean = try diagnostics(v3to4)
        #expect(clean.isEmpty, "\(clean)")
        // Without the attachments' mapping, their links go with them (the entity warning says so).
        let noAttachments = v3to4.components(separatedBy: "  - name: AttachmentToImage")[0]
        let found = try diagnostics(noAttachments).map(\.description)
        #expect(found.count == 1 && found[0].contains("no entity mapping reads Attachment objects"), "\(found)")
        // Nor the title the caption reads through the relationship: it is read.
        let captionOnly = v3to4.replacingOccurrences(of: "title: $source.title, ", with: "")
        #expect(try diagnostics(captionOnly).allSatisfy { !$0.description.contains("'title' of Note in v3 is read by no expression") })
    }

    /// What a review found the check of unread values got wrong: a `$source` key path inside a
    /// fetch's predicate is a read; a step of two passes is judged whole; a copy carries only
    /// what its destination has by name; `drops:` may name a sub-entity's property a source
    /// expression reads, and says so when the list names a property that is read.
    @Test func unreadValuesAreJudgedAsTheMigrationReadsThem() throws {
        // A fetch predicate reading $source.title: title is read.
        let fetched = v2to3("").replacingOccurrences(of: "      title: $source.title\n", with: "      title: 'FUNCTION(FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"title == $source.title\"), $manager.sourceContext, NO), \"valueForKey:\", \"title\").@max'\n")
            .replacingOccurrences(of: "    destination: Note\n", with: "    destination: Note\n    drops: [image]\n")
        let fetchFound = try diagnostics(fetched).filter { $0.message.contains("read by no expression") }
        #expect(fetchFound.isEmpty, "\(fetchFound)")
        // An implied copy from v2 to v3 carries what v3's Note has: image is dropped.
        let copy = "source: v2\ndestination: v3\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n"
        #expect(try diagnostics(copy).contains { $0.message.contains("'image' of Note in v2 is read by no expression") })
        // A property listed as dropped that is read.
        let stale = v2to3(attachmentMapping).replacingOccurrences(of: "    destination: Note\n", with: "    destination: Note\n    drops: [image, title]\n")
        #expect(try diagnostics(stale).contains { $0.message.contains("'drops:' lists 'title', which an expression of this mapping reads") })
        // Two passes: each reads what the other leaves; judged together, nothing is unread.
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        let first = try #require(MappingLoader.parse(source: SourceFile(path: "a.yaml", text: "pass: 1\n" + v2to3(""))).mapping)
        let second = try #require(MappingLoader.parse(source: SourceFile(path: "b.yaml", text: "pass: 2\nsource: v2\ndestination: v3\nentityMappings:\n" + attachmentMapping)).mapping)
        var alone = MappingChecker(mapping: first)
        #expect(!alone.check(catalog: catalog).contains { $0.message.contains("read by no expression") }, "a pass alone is not judged")
        var together = MappingChecker(mapping: first)
        together.companions = [second]
        let found = together.check(source: try catalog.require(version: "v2"), destination: try catalog.require(version: "v3"))
        #expect(!found.contains { $0.message.contains("read by no expression") }, "\(found)")
        var withoutImages = MappingChecker(mapping: first)
        withoutImages.companions = [second.withoutEntityMappings]
        #expect(withoutImages.check(source: try catalog.require(version: "v2"), destination: try catalog.require(version: "v3")).contains { $0.message.contains("'image' of Note") })
        // Xcode's form: a fetch of Attachment reads its sub-entity's objects, whose properties its `drops:` may name.
        let fetchAll = """
        source: v4
        destination: v4
        entityMappings:
          - { name: NoteToNote, source: Note, destination: Note, type: copy }
          - name: AttachmentToAttachment
            source: Attachment
            destination: Attachment
            sourceExpression: 'FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Attachment", "TRUEPREDICATE"), $manager.sourceContext, NO)'
            attributes: { dateCreated: $source.dateCreated }
            relationships: { note: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source.note)' }

        """
        let subEntity = try diagnostics(fetchAll)
        #expect(subEntity.contains { $0.message.contains("of ImageAttachment in v4 are read by no expression") && $0.fix?.contains("to 'AttachmentToAttachment'") == true }, "\(subEntity)")
        let listed = fetchAll.replacingOccurrences(of: "    destination: Attachment\n", with: "    destination: Attachment\n    drops: [image, caption, width, height]\n")
        let quiet = try diagnostics(listed).filter { $0.message.contains("read by no expression") || $0.message.contains("'drops:'") }
        #expect(quiet.isEmpty, "\(quiet)")
    }

    /// A custom policy may read its mapping's objects and those they lead to, and a policy's
    /// function what it is given: nothing is said of those. Objects out of a policy's reach are
    /// still held to the check (a whole file went quiet for one policy, hiding real drops).
    @Test func aPolicyQuietsTheCheckOnlyForWhatItCanReach() throws {
        let schema = { (version: String) in
            "model: P\nversion: \(version)\nentities:\n  Note:\n    attributes: { title: string }\n    relationships:\n      tags: { destination: Tag, toMany: true, optional: true, inverse: note }\n"
                + "  Tag:\n    attributes: { name: string, color: string? }\n    relationships:\n      note: { destination: Note, optional: true, inverse: tags }\n  Log:\n    attributes: { line: string, level: int16? }\n"
        }
        // p2 has neither the tags' color nor the log's level: their values go unless something reads them.
        let p2 = schema("p2").replacingOccurrences(of: ", color: string?", with: "").replacingOccurrences(of: ", level: int16?", with: "")
        let catalog = try SchemaCatalog(files: ["p1.yaml": schema("p1"), "p2.yaml": p2, "versions.yaml": "versions: [p1, p2]\n"])
        func found(_ entityMappings: String) throws -> [String] {
            let (mapping, loaded) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: "source: p1\ndestination: p2\nentityMappings:\n" + entityMappings))
            #expect(!loaded.hasErrors, "\(loaded)")
            var checker = MappingChecker(mapping: try #require(mapping))
            return checker.check(source: try catalog.require(version: "p1"), destination: try catalog.require(version: "p2")).map(\.message).filter { $0.contains("read by no expression") || $0.contains("no entity mapping reads") }
        }
        let log = "  - { name: LogToLog, source: Log, destination: Log, attributes: { line: $source.line } }\n"
        let tags = "  - name: TagToTag\n    source: Tag\n    destination: Tag\n    attributes: { name: $source.name }\n"
        // A policy on Note: Note and the tags it leads to are its to read; the log is not.
        let withPolicy = try found("  - { name: NoteToNote, source: Note, destination: Note, policy: SomePolicy, attributes: { title: $source.title } }\n" + tags + log)
        #expect(withPolicy.count == 1 && withPolicy[0].hasPrefix("'level' of Log"), "\(withPolicy)")
        // Tags handed to a policy's function are read whole, even with no mapping of their own;
        // a policy's mere reach does not say their objects are kept.
        let handed = "  - name: NoteToNote\n    source: Note\n    destination: Note\n    policy: SomePolicy\n    attributes: { title: 'FUNCTION($entityPolicy, \"titleWithTags:\", $source.tags)' }\n"
        #expect(try found(handed + tags + log).allSatisfy { !$0.contains("Tag") })
        #expect(try found(handed + log).allSatisfy { !$0.contains("Tag") }, "handed whole, their values may live on")
        let reachOnly = "  - { name: NoteToNote, source: Note, destination: Note, policy: SomePolicy, attributes: { title: $source.title } }\n"
        #expect(try found(reachOnly + log).contains { $0.hasPrefix("no entity mapping reads Tag objects") })
        let plain = "  - { name: NoteToNote, source: Note, destination: Note, attributes: { title: $source.title } }\n"
        #expect(try found(plain + tags + log).contains { $0.hasPrefix("'color', 'note' of Tag") })
    }

    /// `infer` lists a removed relationship under `drops:`; its links counted as read only because
    /// the inverse is mapped do not make the list stale (a file fresh from `infer` warned).
    @Test func aDroppedRelationshipWhoseInverseIsMappedIsNotStale() throws {
        let one = "model: R\nversion: r1\nentities:\n  Note:\n    attributes: { title: string }\n    relationships:\n      tags: { destination: Tag, toMany: true, optional: true, inverse: note }\n"
            + "  Tag:\n    attributes: { name: string }\n    relationships:\n      note: { destination: Note, optional: true, inverse: tags }\n"
        let two = "model: R\nversion: r2\nentities:\n  Note:\n    attributes: { title: string }\n  Tag:\n    attributes: { name: string }\n    relationships:\n      note: { destination: Note, optional: true }\n"
        let catalog = try SchemaCatalog(files: ["r1.yaml": one, "r2.yaml": two, "versions.yaml": "versions: [r1, r2]\n"])
        let text = """
        source: r1
        destination: r2
        entityMappings:
          - { name: NoteToNote, source: Note, destination: Note, drops: [tags], attributes: { title: $source.title } }
          - name: TagToTag
            source: Tag
            destination: Tag
            attributes: { name: $source.name }
            relationships: { note: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source.note)' }

        """
        var checker = MappingChecker(mapping: try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: text)).mapping))
        let found = checker.check(source: try catalog.require(version: "r1"), destination: try catalog.require(version: "r2"))
        #expect(found.isEmpty, "\(found)")
    }

    @Test func updatingHashesRecordsThemAndSilencesStaleness() throws {
        let yaml = v2to3(attachmentMapping)
        let (mapping, _) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml))
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        let model = try #require(mapping)
        let updated = try #require(MappingHashUpdater.update(model, source: catalog.schema(version: "v2")!, destination: catalog.schema(version: "v3")!))
        #expect(updated.components(separatedBy: "sourceHash: { hash: ").count == 3)
        #expect(updated.contains("    destinationHash: { hash: \(VersionHash.entityHashes(of: catalog.schema(version: "v3")!)["Attachment"]!)"))
        #expect(try diagnostics(updated).isEmpty)
        // Running it again replaces rather than duplicates.
        let (again, _) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: updated))
        let reloaded = try #require(again)
        let twice = try #require(MappingHashUpdater.update(reloaded, source: catalog.schema(version: "v2")!, destination: catalog.schema(version: "v3")!))
        #expect(twice == updated)
    }

    /// The entities a policy declares it creates are checked against the destination version and
    /// drawn by the mapping's graph.
    @Test func aPolicysCreatedEntitiesAreCheckedAndDrawn() throws {
        final class Splitter: EntityMigrationPolicy {
            override class var createdEntities: Set<String> { ["Atachment"] }
        }
        final class Maker: EntityMigrationPolicy {
            override class var createdEntities: Set<String> { ["Attachment"] }
        }
        let registry = PolicyRegistry()
        registry.register(Splitter.self, as: "Splitter")
        registry.register(Maker.self, as: "Maker")
        let text = "source: v2\ndestination: v3\nentityMappings:\n" + noteToNote.replacingOccurrences(of: "    destination: Note\n", with: "    destination: Note\n    policy: Splitter\n")
        var checker = MappingChecker(mapping: try loadMapping(text), policies: registry)
        let found = checker.check(source: try uncloudNotes("v2"), destination: try uncloudNotes("v3"))
        let problem = try #require(found.first { $0.message.contains("declares it creates") })
        #expect(problem.message == "policy 'Splitter' declares it creates Atachment objects, but v3 has no entity Atachment" && problem.fix == "did you mean 'Attachment'?", "\(problem)")
        #expect(problem.location?.line == 7)
        let made = try loadMapping(text.replacingOccurrences(of: "policy: Splitter", with: "policy: Maker"))
        var clean = MappingChecker(mapping: made, policies: registry)
        #expect(!clean.check(source: try uncloudNotes("v2"), destination: try uncloudNotes("v3")).contains { $0.message.contains("declares it creates") })
        let graph = MappingDiagram.render(made, as: .mermaid, policies: registry)
        #expect(graph.contains("d_Attachment[\"Attachment\"]") && graph.contains("s_Note -.->|\"NoteToNote<br/>created by Maker\"| d_Attachment"), "\(graph)")
        #expect(MappingDiagram.render(made, as: .dot, policies: registry).contains("s_Note -> d_Attachment [label=\"NoteToNote\\ncreated by Maker\", style=dashed];"))
    }

    /// A policy serving two steps declares what it creates in each: an entity of another
    /// version was an error for the step whose destination lacks it (a real policy making
    /// Authors in one step and Files in the next could not be declared). Checked against a
    /// catalog, it is said nothing of; a name no version has is a warning, not an error.
    @Test func aPolicyServingSeveralStepsDeclaresWhatItCreatesInEach() throws {
        final class TwoSteps: EntityMigrationPolicy {
            override class var createdEntities: Set<String> { ["Attachment", "ImageAttachment"] }
        }
        final class Misspelt: EntityMigrationPolicy {
            override class var createdEntities: Set<String> { ["Attachment", "ImageAtachment"] }
        }
        let registry = PolicyRegistry()
        registry.register(TwoSteps.self, as: "TwoSteps")
        registry.register(Misspelt.self, as: "Misspelt")
        let catalog = try SchemaCatalog(directory: packageRoot.appendingPathComponent("schemas").path)
        let text = "source: v2\ndestination: v3\nentityMappings:\n" + noteToNote.replacingOccurrences(of: "    destination: Note\n", with: "    destination: Note\n    policy: TwoSteps\n")
        var checker = MappingChecker(mapping: try loadMapping(text), policies: registry)
        #expect(!checker.check(catalog: catalog).contains { $0.message.contains("declares it creates") })
        var misspelt = MappingChecker(mapping: try loadMapping(text.replacingOccurrences(of: "policy: TwoSteps", with: "policy: Misspelt")), policies: registry)
        let found = misspelt.check(catalog: catalog).filter { $0.message.contains("declares it creates") }
        #expect(found.count == 1 && found.first?.severity == .warning && found.first?.message.contains("ImageAtachment") == true, "\(found)")
        // The graph of the step draws what it creates in this step alone.
        let graph = MappingDiagram.render(try loadMapping(text), as: .mermaid, policies: registry, destination: try uncloudNotes("v3"))
        #expect(graph.contains("d_Attachment") && !graph.contains("ImageAttachment"), "\(graph)")
    }

    /// A misspelt name among a policy's `providedAttributes` passed `check` (a policy probe), where
    /// a misspelt `createdEntities` is an error: it is one too, with the attribute it meant; one of
    /// an entity the policy creates (Attachment's `caption`, made beside the Note) is accepted.
    @Test func aPolicysProvidedAttributesAreChecked() throws {
        final class Misspelt: EntityMigrationPolicy {
            override class var providedAttributes: Set<String> { ["titel", "body"] }
        }
        final class Creator: EntityMigrationPolicy {
            override class var createdEntities: Set<String> { ["Attachment"] }
            override class var providedAttributes: Set<String> { ["title", "image"] }
        }
        let registry = PolicyRegistry()
        registry.register(Misspelt.self, as: "Misspelt")
        registry.register(Creator.self, as: "Creator")
        let text = "source: v2\ndestination: v3\nentityMappings:\n" + noteToNote.replacingOccurrences(of: "    destination: Note\n", with: "    destination: Note\n    policy: Misspelt\n")
        var checker = MappingChecker(mapping: try loadMapping(text), policies: registry)
        let found = checker.check(source: try uncloudNotes("v2"), destination: try uncloudNotes("v3"))
        let problem = try #require(found.first { $0.message.contains("declares it provides") }, "\(found)")
        #expect(problem.message == "policy 'Misspelt' declares it provides 'titel', which no entity it makes has in v3" && problem.fix == "did you mean 'title'?", "\(problem)")
        #expect(found.filter { $0.message.contains("declares it provides") }.count == 1)
        var clean = MappingChecker(mapping: try loadMapping(text.replacingOccurrences(of: "policy: Misspelt", with: "policy: Creator")), policies: registry)
        #expect(!clean.check(source: try uncloudNotes("v2"), destination: try uncloudNotes("v3")).contains { $0.message.contains("declares it provides") })
    }

    /// An unknown policy is matched by its class name too (a module prefix of another length is no
    /// typo), and otherwise told where its class goes; registered classes are listed once each.
    @Test func anUnknownPolicyIsMatchedByClassNameOrToldWhereItGoes() {
        final class Caption: EntityMigrationPolicy {}
        let registry = PolicyRegistry()
        registry.register(Caption.self, as: "MyApp.CaptionPolicy")
        registry.register(Caption.self, as: "CaptionPolicy")
        #expect(registry.hint(forUnknownPolicy: "OtherModule.CaptionPolcy") == "did you mean 'CaptionPolicy'?")
        let missing = registry.hint(forUnknownPolicy: "Blog.TagSplitPolicy")
        #expect(missing.contains("write a class TagSplitPolicy") && missing.contains("policies/TagSplitPolicy.swift") && missing.contains("beside the schemas folder"), "\(missing)")
        #expect(missing.hasSuffix("(registered now: CaptionPolicy)"), "\(missing)")
    }

    /// The versions a mapping file's name gives: every `_to_` is tried, as a version's own name
    /// may hold one; names that give no two versions of the catalog give nothing.
    @Test func theVersionsAFilesNameGives() {
        let readings = MappingChecker.versionsNamed(byFile: "mappings/a_to_b_to_b.yaml", among: ["a", "a_to_b", "b"])
        #expect(readings.contains { $0 == ("a_to_b", "b") } && readings.contains { $0 == ("a", "b") }, "\(readings)")
        #expect(MappingChecker.versionsNamed(byFile: "m/mapping_v2_to_v3.yaml", among: ["v1", "v2", "v3"]).map { "\($0.source)>\($0.destination)" } == ["v2>v3"])
        #expect(MappingChecker.versionsNamed(byFile: "m/v23-to-v24.yaml", among: ["v23", "v24", "v2"]).map { "\($0.source)>\($0.destination)" } == ["v23>v24"])
        #expect(MappingChecker.versionsNamed(byFile: "m/split-authors.yaml", among: ["v1", "v2"]).isEmpty)
        #expect(MappingChecker.versionsNamed(byFile: nil, among: ["v1", "v2"]).isEmpty)
    }
}


extension MappingModel {
    /// The same header with no entity mappings (a pass that maps nothing).
    var withoutEntityMappings: MappingModel {
        var copy = self
        copy.entityMappings = []
        return copy
    }
}
