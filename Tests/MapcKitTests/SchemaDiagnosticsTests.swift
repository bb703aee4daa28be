import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// One invalid schema: the text, the message the first error must contain, and where it must point.
struct InvalidSchemaCase: CustomTestStringConvertible, Sendable {
    let name: String
    let yaml: String
    let message: String
    let line: Int
    let column: Int
    /// A warning rather than an error: Core Data accepts the model (Xcode warns).
    var isWarning = false
    var testDescription: String { name }
}

private let header = "model: M\nversion: v1\nentities:\n"

private func entity(_ body: String) -> String { header + body }

let invalidSchemas: [InvalidSchemaCase] = [
    .init(name: "YAML syntax error", yaml: header + "  Note:\n    attributes: { title: { type: string }\n", message: "YAML syntax error", line: 6, column: 1),
    // libyaml's syntax errors come with what usually causes them.
    .init(name: "unclosed flow mapping", yaml: header + "  Note:\n    attributes: { title: { type: string }\n", message: "close the '{ … }' opened where shown", line: 6, column: 1),
    .init(name: "misindented key", yaml: header + "  Note:\n    attributes:\n      title: string\n     body: string\n", message: "indent this line like the keys around it", line: 7, column: 6),
    .init(name: "unquoted colon", yaml: header + "  Note:\n    attributes:\n      title: string: long\n", message: "a value holding ': ' must be quoted", line: 6, column: 20),
    // A value that already holds double quotes is quoted with single ones.
    .init(name: "unquoted colon beside double quotes", yaml: header + "  Note:\n    attributes:\n      title: TERNARY(a, \"sky: unknown\", b)\n", message: "single quotes", line: 6, column: 29),
    .init(name: "tab", yaml: header + "  Note:\n\tattributes:\n      title: string\n", message: "YAML indents with spaces, never tabs", line: 5, column: 1),
    .init(name: "unclosed quote", yaml: header + "  Note:\n    attributes:\n      title: 'string\n", message: "close the quote opened where shown", line: 7, column: 1),
    .init(name: "unknown top-level key", yaml: "model: M\nversion: v1\nentites: {}\nentities: {}\n", message: "unknown key 'entites' in the schema file; did you mean 'entities'?", line: 3, column: 1),
    .init(name: "missing model", yaml: "version: v1\nentities: {}\n", message: "missing 'model:'", line: 1, column: 1),
    .init(name: "missing version", yaml: "model: M\nentities: {}\n", message: "missing 'version:'", line: 1, column: 1),
    .init(name: "invalid version name", yaml: "model: M\nversion: v 1/2\nentities: {}\n", message: "version 'v 1/2' is not a valid version name", line: 2, column: 10),
    .init(name: "entities is a list", yaml: "model: M\nversion: v1\nentities:\n  - Note\n", message: "entities must be a mapping", line: 4, column: 3),
    .init(name: "unknown entity key", yaml: entity("  Note:\n    atributes: {}\n"), message: "unknown key 'atributes' in entity 'Note'; did you mean 'attributes'?", line: 5, column: 5),
    .init(name: "unknown attribute key", yaml: entity("  Note:\n    attributes:\n      title: { type: string, optinal: true }\n"), message: "unknown key 'optinal' in attribute 'Note.title'; did you mean 'optional'?", line: 6, column: 30),
    .init(name: "unknown type", yaml: entity("  Note:\n    attributes:\n      title: { type: strng }\n"), message: "unknown type 'strng'; did you mean 'string'?", line: 6, column: 22),
    .init(name: "unknown type in shorthand", yaml: entity("  Note:\n    attributes:\n      count: integr?\n"), message: "unknown type 'integr'", line: 6, column: 14),
    .init(name: "attribute without type", yaml: entity("  Note:\n    attributes:\n      title: { optional: true }\n"), message: "attribute 'Note.title' has no type", line: 6, column: 7),
    .init(name: "integer default of wrong type", yaml: entity("  Note:\n    attributes:\n      count: { type: int64, default: abc }\n"), message: "default of attribute 'Note.count': 'abc' is not a whole number", line: 6, column: 38),
    .init(name: "date default of wrong type", yaml: entity("  Note:\n    attributes:\n      when: { type: date, default: yesterday }\n"), message: "is not an ISO 8601 date", line: 6, column: 36),
    .init(name: "default out of int16 range", yaml: entity("  Note:\n    attributes:\n      small: { type: int16, default: 70000 }\n"), message: "70000 is out of range for int16", line: 6, column: 38),
    .init(name: "not a boolean", yaml: entity("  Note:\n    attributes:\n      title: { type: string, optional: maybe }\n"), message: "optional must be true or false, found 'maybe'", line: 6, column: 40),
    .init(name: "min above max", yaml: entity("  Note:\n    attributes:\n      count: { type: int32, min: 10, max: 2 }\n"), message: "min 10 is above max 2 for 'Note.count'", line: 6, column: 34),
    .init(name: "minLength above maxLength", yaml: entity("  Note:\n    attributes:\n      title: { type: string, minLength: 9, maxLength: 3 }\n"), message: "minLength 9 is above maxLength 3", line: 6, column: 41),
    .init(name: "min on a string", yaml: entity("  Note:\n    attributes:\n      title: { type: string, min: 1 }\n"), message: "'min' applies to numbers and dates; attribute 'Note.title' is string", line: 6, column: 30),
    .init(name: "minLength on a number", yaml: entity("  Note:\n    attributes:\n      count: { type: int64, minLength: 1 }\n"), message: "'minLength' applies to strings", line: 6, column: 29),
    .init(name: "invalid regex", yaml: entity("  Note:\n    attributes:\n      title: { type: string, regex: \"[a-\" }\n"), message: "regex refused: '[a-' is not a valid regular expression", line: 6, column: 37),
    .init(name: "regex that can take exponential time", yaml: entity("  Note:\n    attributes:\n      title: { type: string, regex: \"(a+)+b\" }\n"), message: "regex refused: a repeated group that itself repeats", line: 6, column: 37),
    .init(name: "regex hiding a group in \\Q…\\E", yaml: entity("  Note:\n    attributes:\n      title: { type: string, regex: '(a+\\Q)\\E?)+b' }\n"), message: "regex refused: a repeated group that itself repeats", line: 6, column: 37),
    .init(name: "default breaks validation", yaml: entity("  Note:\n    attributes:\n      count: { type: int64, default: 1, min: 5 }\n"), message: "default 1 of 'Note.count' breaks its own validation: below min 5", line: 6, column: 38, isWarning: true),
    .init(name: "valueTransformer on binary", yaml: entity("  Note:\n    attributes:\n      image: { type: binary, valueTransformer: ImageTransformer }\n"), message: "valueTransformer applies to transformable attributes only", line: 6, column: 30),
    .init(name: "unknown destination", yaml: entity("  Note:\n    relationships:\n      tags: { destination: Tagg, toMany: true, optional: true }\n  Tag: {}\n"), message: "unknown destination entity 'Tagg' of 'Note.tags'; did you mean 'Tag'?", line: 6, column: 28),
    .init(name: "relationship without destination", yaml: entity("  Note:\n    relationships:\n      tags: { toMany: true }\n"), message: "relationship 'Note.tags' has no destination", line: 6, column: 7),
    .init(name: "unknown inverse", yaml: entity("  Note:\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: notes }\n  Tag:\n    relationships:\n      note: { destination: Note, inverse: tags }\n"), message: "inverse 'notes' of 'Note.tags' is not a relationship of 'Tag'; did you mean 'note'?", line: 6, column: 56),
    .init(name: "inverse pair not pointing back", yaml: entity("  Note:\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: note }\n      other: { destination: Tag }\n  Tag:\n    relationships:\n      note: { destination: Note, inverse: other }\n"), message: "inverse pair does not point at each other: 'Note.tags' names 'Tag.note' as inverse, but 'Tag.note' names 'other' as its inverse", line: 6, column: 56, isWarning: true),
    .init(name: "inverse is an attribute", yaml: entity("  Note:\n    relationships:\n      tag: { destination: Tag, inverse: label }\n  Tag:\n    attributes:\n      label: string\n"), message: "inverse 'label' of 'Note.tag' is an attribute of 'Tag', not a relationship", line: 6, column: 41),
    .init(name: "inverse leads elsewhere", yaml: entity("  Note:\n    relationships:\n      tag: { destination: Tag, inverse: owner }\n  Tag:\n    relationships:\n      owner: { destination: Tag, inverse: tag }\n"), message: "inverse pair does not match: 'Note.tag' names 'Tag.owner' as inverse, but that relationship leads to 'Tag', not 'Note'", line: 6, column: 41),
    .init(name: "unknown parent", yaml: entity("  Image:\n    parent: Attachmnt\n  Attachment: {}\n"), message: "unknown parent entity 'Attachmnt' of 'Image'; did you mean 'Attachment'?", line: 5, column: 13),
    .init(name: "inheritance cycle", yaml: entity("  A:\n    parent: B\n  B:\n    parent: A\n"), message: "inheritance cycle: A -> B -> A", line: 5, column: 13),
    .init(name: "self parent", yaml: entity("  A:\n    parent: A\n"), message: "inheritance cycle: A -> A", line: 5, column: 13),
    .init(name: "shadowed property", yaml: entity("  Attachment:\n    attributes:\n      dateCreated: date\n  Image:\n    parent: Attachment\n    attributes:\n      dateCreated: date\n"), message: "'Image.dateCreated' shadows the property inherited from 'Attachment'", line: 10, column: 7),
    .init(name: "attribute and relationship share a name", yaml: entity("  Note:\n    attributes:\n      tag: string\n    relationships:\n      tag: { destination: Note, inverse: tag }\n"), message: "duplicate property name 'tag' in 'Note'", line: 8, column: 7),
    .init(name: "duplicate entity", yaml: entity("  Note: {}\n  Tag: {}\n  Note: {}\n"), message: "duplicate key 'Note'", line: 6, column: 3),
    .init(name: "duplicate attribute", yaml: entity("  Note:\n    attributes:\n      title: string\n      body: string\n      title: string\n"), message: "duplicate key 'title'", line: 8, column: 7),
    .init(name: "abstract entity required but never concrete", yaml: entity("  Note:\n    relationships:\n      kind: { destination: Kind, inverse: notes }\n  Kind:\n    abstract: true\n    relationships:\n      notes: { destination: Note, toMany: true, inverse: kind, optional: true }\n"), message: "abstract entity 'Kind' has no concrete sub-entity, so the required relationship 'Note.kind' can never be filled", line: 7, column: 3, isWarning: true),
    .init(name: "ordered to-one", yaml: entity("  Note:\n    relationships:\n      next: { destination: Note, ordered: true, optional: true, inverse: next }\n"), message: "'Note.next' is ordered but not to-many", line: 6, column: 34),
    .init(name: "counts on to-one", yaml: entity("  Note:\n    relationships:\n      next: { destination: Note, minCount: 2, optional: true, inverse: next }\n"), message: "a to-one relationship holds at most one object: minCount 2 does not fit 'Note.next'", line: 6, column: 34),
    .init(name: "symmetric to-many", yaml: entity("  Person:\n    relationships:\n      friends: { destination: Person, toMany: true, inverse: friends, optional: true }\n"),
          message: "'Person.friends' is its own inverse (a symmetric to-many, such as friends): Xcode warns about it; mapc keeps each link both ways", line: 6, column: 62, isWarning: true),
    .init(name: "minCount above maxCount", yaml: entity("  Note:\n    relationships:\n      tags: { destination: Note, toMany: true, minCount: 5, maxCount: 2, inverse: tags }\n"), message: "minCount 5 is above maxCount 2", line: 6, column: 58),
    .init(name: "unknown delete rule", yaml: entity("  Note:\n    relationships:\n      next: { destination: Note, deleteRule: cascad, inverse: next }\n"), message: "unknown deleteRule 'cascad'; did you mean 'cascade'?", line: 6, column: 46),
    .init(name: "invalid property name", yaml: entity("  Note:\n    attributes:\n      my-title: string\n"), message: "attribute name 'my-title' is not a valid name", line: 6, column: 7),
    .init(name: "uniqueness constraint on unknown property", yaml: entity("  Note:\n    uniquenessConstraints: [[titel]]\n    attributes:\n      title: string\n"), message: "uniqueness constraint 1 of 'Note' names unknown property 'titel'; did you mean 'title'?", line: 5, column: 30),
    .init(name: "index on to-many", yaml: entity("  Note:\n    indexes: [tags]\n    relationships:\n      tags: { destination: Note, toMany: true, inverse: tags, optional: true }\n"), message: "index 'Note_tags' of 'Note' names to-many relationship 'tags'", line: 5, column: 15),
    .init(name: "empty file", yaml: "", message: "the file is empty", line: 1, column: 1),
    .init(name: "top level is a list", yaml: "- model\n", message: "a schema file must be a mapping", line: 1, column: 1),
]

@Suite("Schema diagnostics")
struct SchemaDiagnosticsTests {
    @Test("invalid schema is reported with message and position", arguments: invalidSchemas)
    func invalidSchema(_ testCase: InvalidSchemaCase) throws {
        let (_, diagnostics) = parseSchema(testCase.yaml)
        let errors = diagnostics.filter { $0.severity == (testCase.isWarning ? .warning : .error) }
        let match = errors.first { $0.description.contains(testCase.message) }
        let found = try #require(match, "no error containing \"\(testCase.message)\"; got:\n\(diagnostics.map(\.description).joined(separator: "\n"))")
        #expect(found.location?.path == "test.yaml")
        #expect(found.location?.line == testCase.line, "line of: \(found)")
        #expect(found.location?.column == testCase.column, "column of: \(found)")
    }

    /// A long line is shown as a window around the column, so a hostile file's 70,000-character
    /// line does not print twice in full; short lines are shown whole.
    @Test func longLinesAreShownAroundTheColumn() {
        let line = String(repeating: "a", count: 5_000) + "BAD" + String(repeating: "b", count: 5_000)
        let source = SourceFile(path: "x.yaml", text: line + "\n")
        let rendered = DiagnosticRenderer(sources: [source]).render(.error("here", at: FileLocation(path: "x.yaml", line: 1, column: 5_001), length: 3))
        let lines = rendered.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[1].hasPrefix("…") && lines[1].hasSuffix("…") && lines[1].unicodeScalars.count == DiagnosticRenderer.maximumWidth + 2)
        let caret = lines[2]
        #expect(caret.hasSuffix("^~~"), "\(caret)")
        let column = lines[1].unicodeScalars.count - lines[1].drop { $0 != "B" }.unicodeScalars.count
        #expect(caret.unicodeScalars.count - 3 == column, "the caret stands under BAD")
        let short = DiagnosticRenderer(sources: [SourceFile(path: "y.yaml", text: "key: value\n")]).render(.error("x", at: FileLocation(path: "y.yaml", line: 1, column: 6), length: 5))
        #expect(short.hasSuffix("key: value\n     ^~~~~\n"), "\(short)")
    }

    @Test func everyProblemIsReportedAtOnce() {
        let yaml = header + "  Note:\n    attributes:\n      title: { type: strng }\n      body: { type: string, optinal: true }\n    relationships:\n      tags: { destination: Tagg }\n"
        let errors = parseSchema(yaml).diagnostics.filter { $0.severity == .error }
        #expect(errors.count == 3)
        #expect(errors.map { $0.location?.line ?? 0 } == [6, 7, 9])
    }

    /// A key without its colon was placed on the line after it (where libyaml stopped), or at the
    /// end of the file on an empty line (the language-server probe): it is placed at the key.
    @Test func aKeyWithoutItsColonIsPlacedAtTheKey() {
        let yaml = header + "  Note:\n    attributes:\n      title: string\n    relations\n"
        let error = parseSchema(yaml).diagnostics.first { $0.severity == .error }
        #expect(error?.message.contains("could not find expected ':'") == true, "\(String(describing: error))")
        #expect(error?.location?.line == 7 && error?.location?.column == 5 && error?.length == 9, "\(String(describing: error))")
    }

    /// An unknown parent left every entity's uniqueness constraints and shadowed properties
    /// unchecked: a mistyped constraint was said only once the parent was fixed (the
    /// finance-app probe). An entity whose own chain is whole is checked.
    @Test func anUnknownParentHidesNoOtherEntitysProblems() {
        let yaml = header + "  Account:\n    uniquenessConstraints: [[nme]]\n    attributes:\n      name: string\n  Transaction:\n    parent: Acount\n"
            + "  Base:\n    attributes:\n      day: date\n  Leaf:\n    parent: Base\n    attributes:\n      day: date\n"
        let messages = parseSchema(yaml).diagnostics.filter { $0.severity == .error }.map(\.message)
        #expect(messages.contains { $0.contains("unknown parent entity 'Acount'") }, "\(messages)")
        #expect(messages.contains { $0.contains("uniqueness constraint 1 of 'Account' names unknown property 'nme'") }, "\(messages)")
        #expect(messages.contains { $0.contains("'Leaf.day' shadows the property inherited from 'Base'") }, "\(messages)")
    }

    @Test func rendererQuotesTheLineWithACaret() {
        let yaml = header + "  Note:\n    attributes:\n      title: { type: strng }\n"
        let source = SourceFile(path: "test.yaml", text: yaml)
        let diagnostics = SchemaLoader.parse(source: source).diagnostics
        let text = DiagnosticRenderer(sources: [source]).render(diagnostics)
        #expect(text == "test.yaml:6:22: error: unknown type 'strng'; did you mean 'string'?\n      title: { type: strng }\n                     ^~~~~\n")
    }

    /// A misspelt inverse is one error: the other side, which names this one as its inverse, was
    /// also warned of as a pair that does not point back (the same mistake said twice).
    @Test func aMisspeltInverseIsSaidOnce() {
        let yaml = header + "  Note:\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: notes }\n  Tag:\n    relationships:\n      note: { destination: Note, inverse: tags }\n"
        let diagnostics = parseSchema(yaml).diagnostics
        #expect(diagnostics.map(\.message) == ["inverse 'notes' of 'Note.tags' is not a relationship of 'Tag'"], "\(diagnostics.map(\.description))")
    }

    /// A YAML 1.1 merge key (`<<: *defaults`) was "an unknown key '<<'" (or "not a valid name"
    /// among relationships): it says that YAML 1.2 merges nothing, and how to write it.
    @Test func aMergeKeyIsSaidToMergeNothing() throws {
        let yaml = header + "  Note:\n    attributes:\n      title: &text { type: string, optional: true }\n      body:\n        <<: *text\n        minLength: 2\n"
        let diagnostics = parseSchema(yaml).diagnostics
        let merge = try #require(diagnostics.first { $0.message.contains("merge key") }, "\(diagnostics.map(\.description))")
        #expect(merge.message.hasPrefix("'<<' (a merge key of YAML 1.1) merges nothing here") && merge.location?.line == 8 && merge.location?.column == 9)
        #expect(!diagnostics.contains { $0.message.contains("unknown key '<<'") })
    }

    /// Xcode's version names are file names ("Model 7 (1)", "Modèle"): they were refused, and with
    /// them the whole import. What no file name on every system holds still is.
    @Test(arguments: ["Model 7 (1)", "Modèle", "Model+4", "Model, final", "Model  8", "v2.1-beta_3"])
    func versionNamesAreWhatFileNamesHold(name: String) {
        let yaml = "model: M\nversion: '\(name)'\nentities:\n  Note: {}\n"
        #expect(!parseSchema(yaml).diagnostics.hasErrors, "\(parseSchema(yaml).diagnostics.map(\.description))")
    }

    @Test(arguments: ["a/b", "x@y", " lead", "trail ", "tab\tname", "bidi\u{202E}name", "..", "what?", String(repeating: "v", count: 65)])
    func versionNamesNoFileNameHoldsAreRefused(name: String) {
        let yaml = "model: M\nversion: \"\(name.replacingOccurrences(of: "\t", with: "\\t").replacingOccurrences(of: "\u{202E}", with: "\\u202E"))\"\nentities:\n  Note: {}\n"
        #expect(parseSchema(yaml).diagnostics.contains { $0.message.contains("is not a valid version name") }, "\(name): \(parseSchema(yaml).diagnostics.map(\.description))")
    }

    /// `_opt` (from a model built in code, whose names are not YAML keys) was told to be renamed
    /// `_opt`; a name of either case (`Title`, an entity's `note`) is Core Data's and is kept.
    @Test func aNameStartingWithAnUnderscoreIsToldAName() {
        let schema = Schema(model: "M", version: "v1", entities: [Entity(name: "Note", attributes: [Attribute(name: "_opt", type: .string), Attribute(name: "Title", type: .string)]),
                                                                  Entity(name: "note2"), Entity(name: "_Tag")])
        var validator = SchemaValidator(schema: schema, document: nil)
        let messages = validator.validate().map(\.description)
        #expect(messages.contains { $0.contains("property name '_opt' must start with a letter; rename it 'opt'") }, "\(messages)")
        #expect(messages.contains { $0.contains("entity name '_Tag' must start with a letter; rename it 'Tag'") }, "\(messages)")
        #expect(!messages.contains { $0.contains("Title") || $0.contains("note2") }, "\(messages)")
    }

    @Test func missingInverseIsAWarning() throws {
        let yaml = header + "  Note:\n    relationships:\n      tags: { destination: Tag, toMany: true, optional: true }\n  Tag: {}\n"
        let (schema, diagnostics) = parseSchema(yaml)
        #expect(schema != nil)
        #expect(!diagnostics.hasErrors)
        let warning = try #require(diagnostics.first { $0.severity == .warning })
        #expect(warning.message.contains("'Note.tags' has no inverse"))
        #expect(warning.location?.line == 6)
    }

    @Test func abstractEntityWithoutSubentityIsAWarningWhenNothingRequiresIt() throws {
        let (_, diagnostics) = parseSchema(header + "  Base:\n    abstract: true\n")
        #expect(!diagnostics.hasErrors)
        #expect(diagnostics.contains { $0.severity == .warning && $0.message.contains("abstract entity 'Base' has no concrete sub-entity") })
    }

    @Test func scalarsAreReadWithTheAttributeTypeInMind() throws {
        let schema = try loadSchema(header + "  Note:\n    attributes:\n      answer: { type: string, default: no }\n      count: { type: int16, default: 010 }\n      flag: { type: bool, default: yes }\n      price: { type: decimal, default: 12.50 }\n")
        let note = try #require(schema.entity(named: "Note"))
        #expect(note.attributes[0].defaultValue == .string("no"))
        #expect(note.attributes[1].defaultValue == .integer(10))
        #expect(note.attributes[2].defaultValue == .bool(true))
        #expect(note.attributes[3].defaultValue == .decimal(Decimal(string: "12.50")!))
    }

    @Test func shorthandAndFullFormsAgree() throws {
        let short = try loadSchema(header + "  Note:\n    attributes:\n      title: string\n      image: binary?\n")
        let full = try loadSchema(header + "  Note:\n    attributes:\n      title: { type: string }\n      image: { type: binary, optional: true }\n")
        #expect(VersionHash.modelHash(of: short) == VersionHash.modelHash(of: full))
        #expect(short.entities[0].attributes[1].isOptional)
    }

    @Test func everyModelEditorFieldIsRead() throws {
        let schema = try loadSchema(header + """
          Attachment:
            abstract: true
            renamingIdentifier: File
            versionHashModifier: "2"
            uniquenessConstraints: [[dateCreated, note]]
            indexes: [{ name: byDate, properties: [dateCreated] }]
            userInfo: { owner: docs }
            attributes:
              dateCreated: { type: date, min: "2000-01-01T00:00:00Z", transient: false, renamingIdentifier: created, versionHashModifier: a, userInfo: { k: v } }
              title: { type: string, minLength: 1, maxLength: 80, regex: "[A-Z].*" }
              blob: { type: transformable, valueTransformer: ImageTransformer, optional: true }
            relationships:
              note: { destination: Note, inverse: attachments, deleteRule: deny, optional: true, renamingIdentifier: owner, versionHashModifier: b }
          Image:
            parent: Attachment
          Note:
            relationships:
              attachments: { destination: Attachment, toMany: true, ordered: true, inverse: note, deleteRule: cascade, minCount: 1, maxCount: 5 }
        """ + "\n")
        let attachment = try #require(schema.entity(named: "Attachment"))
        #expect(attachment.isAbstract)
        #expect(attachment.renamingIdentifier == "File")
        #expect(attachment.versionHashModifier == "2")
        #expect(attachment.uniquenessConstraints == [["dateCreated", "note"]])
        #expect(attachment.indexes == [Index(name: "byDate", properties: ["dateCreated"])])
        #expect(attachment.userInfo == ["owner": "docs"])
        #expect(attachment.attributes[0].renamingIdentifier == "created")
        #expect(attachment.attributes[0].userInfo == ["k": "v"])
        #expect(attachment.attributes[1].validation.maxLength == 80)
        #expect(attachment.attributes[1].validation.regex == "[A-Z].*")
        #expect(attachment.attributes[2].valueTransformer == "ImageTransformer")
        #expect(attachment.relationships[0].deleteRule == .deny)
        let note = try #require(schema.entity(named: "Note"))
        #expect(note.relationships[0].isOrdered && note.relationships[0].minCount == 1 && note.relationships[0].maxCount == 5)
        #expect(schema.entity(named: "Image")?.parent == "Attachment")
    }

    @Test func shippedUnCloudNotesSchemasAreClean() throws {
        for version in ["v1", "v2", "v3", "v4"] {
            let source = try SourceFile.read(path: packageRoot.appendingPathComponent("schemas/\(version).yaml").path)
            let (schema, diagnostics) = SchemaLoader.parse(source: source)
            #expect(diagnostics.isEmpty, "\(version): \(diagnostics)")
            #expect(schema?.version == version)
        }
        let v4 = try uncloudNotes("v4")
        #expect(v4.entity(named: "ImageAttachment")?.parent == "Attachment")
        #expect(v4.allAttributes(of: v4.entity(named: "ImageAttachment")!).map(\.name) == ["dateCreated", "image", "caption", "width", "height"])
    }
}
