import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Bad data and the problem it must produce, located by entity, object and key.
struct BadDataCase: CustomTestStringConvertible, Sendable {
    let name: String
    let objects: String
    let entity: String
    let objectID: String?
    let key: String?
    let message: String
    var testDescription: String { name }
}

private let note = #""id": "n1", "title": "T", "body": "B", "dateCreated": "2024-05-01T10:00:00Z""#

let badData: [BadDataCase] = [
    .init(name: "unknown entity", objects: #""Note": [{\#(note)}], "Notes": [{"id": "x"}]"#, entity: "Notes", objectID: nil, key: nil, message: "unknown entity 'Notes' in version v3; did you mean 'Note'?"),
    .init(name: "unknown key", objects: #""Note": [{\#(note), "titel": "x"}]"#, entity: "Note", objectID: "n1", key: "titel", message: "unknown key 'titel' for Note; did you mean 'title'?"),
    .init(name: "wrong type", objects: #""Note": [{\#(note), "displayIndex": "three"}]"#, entity: "Note", objectID: "n1", key: "displayIndex", message: "expected a number for an int64 attribute, found the string \"three\""),
    .init(name: "number for text", objects: #""Note": [{"id": "n1", "title": 5, "body": "B", "dateCreated": "2024-05-01T10:00:00Z"}]"#, entity: "Note", objectID: "n1", key: "title", message: "expected a string for a string attribute, found a number"),
    .init(name: "integer just below int64", objects: #""Note": [{\#(note), "displayIndex": -9223372036854775809}]"#, entity: "Note", objectID: "n1", key: "displayIndex", message: "is out of range for int64"),
    .init(name: "fractional integer", objects: #""Note": [{\#(note), "displayIndex": 1.5}]"#, entity: "Note", objectID: "n1", key: "displayIndex", message: "1.5 has a fraction, which an int64 attribute cannot hold"),
    .init(name: "bad date", objects: #""Note": [{"id": "n1", "title": "T", "body": "B", "dateCreated": "yesterday"}]"#, entity: "Note", objectID: "n1", key: "dateCreated", message: "'yesterday' is not an ISO 8601 date"),
    .init(name: "bad base64", objects: #""Note": [{\#(note)}], "Attachment": [{"id": "a1", "image": "not base64!", "dateCreated": "2024-05-01T10:00:00Z"}]"#, entity: "Attachment", objectID: "a1", key: "image", message: "is not base64"),
    .init(name: "missing required value", objects: #""Note": [{"id": "n1", "title": "T", "dateCreated": "2024-05-01T10:00:00Z"}]"#, entity: "Note", objectID: "n1", key: "body", message: "required attribute 'body' has no value"),
    .init(name: "explicit null for required value", objects: #""Note": [{"id": "n1", "title": null, "body": "B", "dateCreated": "2024-05-01T10:00:00Z"}]"#, entity: "Note", objectID: "n1", key: "title", message: "required attribute 'title' has no value"),
    .init(name: "dangling id", objects: #""Note": [{\#(note), "attachments": ["a9"]}]"#, entity: "Note", objectID: "n1", key: "attachments", message: "no object has id 'a9' (dangling reference)"),
    .init(name: "duplicate id", objects: #""Note": [{\#(note)}, {\#(note)}]"#, entity: "Note", objectID: "n1", key: "id", message: "id 'n1' is already used by a Note object"),
    .init(name: "missing id", objects: #""Note": [{"title": "T", "body": "B", "dateCreated": "2024-05-01T10:00:00Z"}]"#, entity: "Note", objectID: nil, key: "id", message: "object 1 of \"Note\" has no \"id\""),
    // An object that cannot be named by its id is named by its place in its list (an audit's find: "which of the objects?").
    .init(name: "id not a string", objects: #""Note": [{\#(note)}, {"id": true, "title": "T", "body": "B", "dateCreated": "2024-05-01T10:00:00Z"}]"#, entity: "Note", objectID: nil, key: "id", message: "object 2 of \"Note\": \"id\" must be a string"),
    .init(name: "object not an object", objects: #""Note": [{\#(note)}, {\#(note.replacingOccurrences(of: "n1", with: "n2"))}, "oops"]"#, entity: "Note", objectID: nil, key: nil, message: "object 3 of \"Note\": each object must be a JSON object, found a string"),
    .init(name: "to-one given an array", objects: #""Note": [{\#(note)}], "Attachment": [{"id": "a1", "image": "AA==", "dateCreated": "2024-05-01T10:00:00Z", "note": ["n1"]}]"#, entity: "Attachment", objectID: "a1", key: "note", message: "to-one relationship 'note' takes an id string or null, found an array"),
    .init(name: "relationship to the wrong entity", objects: #""Note": [{\#(note), "attachments": ["n1"]}]"#, entity: "Note", objectID: "n1", key: "attachments", message: "'n1' is a Note, but 'attachments' leads to Attachment"),
    .init(name: "inverse sides disagree", objects: #""Note": [{\#(note), "attachments": ["a1"]}, {"id": "n2", "title": "T", "body": "B", "dateCreated": "2024-05-01T10:00:00Z"}], "Attachment": [{"id": "a1", "image": "AA==", "dateCreated": "2024-05-01T10:00:00Z", "note": "n2"}]"#, entity: "Note", objectID: "n1", key: "attachments", message: "lists 'a1', but Attachment 'a1'.note does not list 'n1'"),
    .init(name: "to-one claimed twice through the inverse", objects: #""Note": [{\#(note), "attachments": ["a1"]}, {"id": "n2", "title": "T", "body": "B", "dateCreated": "2024-05-01T10:00:00Z", "attachments": ["a1"]}], "Attachment": [{"id": "a1", "image": "AA==", "dateCreated": "2024-05-01T10:00:00Z"}]"#, entity: "Attachment", objectID: "a1", key: "note", message: "is named as inverse by 2 objects"),
    .init(name: "objects not an array", objects: #""Note": {"id": "n1"}"#, entity: "Note", objectID: nil, key: nil, message: "objects of 'Note' must be an array of objects"),
]

@Suite("Data validation")
struct DataValidationTests {
    @Test("bad data is reported by entity, object and key", arguments: badData)
    func badDataIsReported(_ testCase: BadDataCase) throws {
        let schema = try uncloudNotes("v3")
        let json = try JSONValue.parse(Data("{\"version\": \"v3\", \"objects\": {\(testCase.objects)}}".utf8), path: "data.json")
        let store = try Store.inMemory(schema: schema)
        let error = #expect(throws: DataValidationError.self) {
            try store.insert(try DataFile.read(json, schema: schema).objects)
        }
        let problems = try #require(error).problems
        let match = problems.first { $0.message.contains(testCase.message) }
        let found = try #require(match, "no problem containing \"\(testCase.message)\"; got:\n\(problems.map(\.description).joined(separator: "\n"))")
        #expect(found.entity == testCase.entity)
        #expect(found.objectID == testCase.objectID)
        #expect(found.key == testCase.key)
        #expect(try store.count(of: "Note") == 0, "nothing is written")
    }

    @Test func nothingIsWrittenWhenTheLastObjectIsBad() throws {
        let schema = try uncloudNotes("v1")
        let store = try Store.inMemory(schema: schema)
        var objects = (0..<500).map { ObjectData(id: "n\($0)", entity: "Note", attributes: ["title": .string("t"), "body": .string("b"), "dateCreated": .date(Date())]) }
        objects.append(ObjectData(id: "bad", entity: "Note", attributes: ["title": .integer(3)]))
        #expect(throws: DataValidationError.self) { try store.insert(objects) }
        #expect(try store.count(of: "Note") == 0)
    }

    @Test func idsAlreadyInTheStoreAreRefusedAndNothingIsAdded() throws {
        let schema = try uncloudNotes("v1")
        let store = try Store.inMemory(schema: schema)
        let note = ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("t"), "body": .string("b"), "dateCreated": .date(Date())])
        try store.insert([note])
        var second = note
        second.id = "n2"
        let error = #expect(throws: DataValidationError.self) { try store.insert([second, note]) }
        #expect(error?.problems.first?.message == "the store already has a Note object with id 'n1'")
        #expect(try store.count(of: "Note") == 1)
    }

    @Test func validationRulesAndUniquenessApply() throws {
        let schema = try loadSchema("""
        model: M
        version: v1
        entities:
          User:
            uniquenessConstraints: [[email]]
            attributes:
              email: { type: string, regex: "[^@]+@[^@]+" }
              age: { type: int16, min: 0, max: 150, optional: true }
              nick: { type: string, maxLength: 3, optional: true }
              code: { type: string, maxLength: 3, regex: "[A-Z]+", optional: true }
        """ + "\n")
        let store = try Store.inMemory(schema: schema)
        let error = #expect(throws: DataValidationError.self) {
            try store.insert([
                ObjectData(id: "u1", entity: "User", attributes: ["email": .string("a@b"), "age": .integer(200)]),
                ObjectData(id: "u2", entity: "User", attributes: ["email": .string("a@b"), "nick": .string("toolong")]),
                ObjectData(id: "u3", entity: "User", attributes: ["email": .string("nope"), "code": .string("abcdef")]),
            ])
        }
        let messages = error?.problems.map(\.description) ?? []
        // Worded as a store's validation words them when objects are added to it: rule, then value.
        #expect(messages.contains("User 'u1', key 'age': above max 150 (value: 200)"))
        #expect(messages.contains("User 'u2', key 'nick': longer than maxLength 3 (value: \"toolong\")"))
        #expect(messages.contains("User 'u3', key 'email': \(#"does not match regex '[^@]+@[^@]+'"#) (value: \"nope\")"))
        #expect(messages.contains { $0.hasPrefix("User 'u2', key 'email': breaks the uniqueness constraint (email) of User") })
        // Every rule a value breaks, in one report.
        #expect(messages.contains("User 'u3', key 'code': longer than maxLength 3 (value: \"abcdef\")"), "\(messages)")
        #expect(messages.contains("User 'u3', key 'code': does not match regex '[A-Z]+' (value: \"abcdef\")"), "\(messages)")
    }

    /// A uniqueness constraint compares values as the store's UNIQUE index does: binary values of
    /// one length, and texts equal as characters but not as bytes, are different values.
    @Test func uniquenessComparesValuesAsTheStoreDoes() throws {
        let schema = try loadSchema("""
        model: M
        version: v1
        entities:
          Blob:
            uniquenessConstraints: [[bytes], [name], [ratio]]
            attributes:
              bytes: binary
              name: string
              ratio: double
        """ + "\n")
        let different = [
            ObjectData(id: "b1", entity: "Blob", attributes: ["bytes": .binary(Data([1, 2, 3])), "name": .string("caf\u{E9}"), "ratio": .double(1)]),
            ObjectData(id: "b2", entity: "Blob", attributes: ["bytes": .binary(Data([1, 2, 4])), "name": .string("cafe\u{301}"), "ratio": .double(2)]),
        ]
        let store = try Store.inMemory(schema: schema)
        try store.insert(different)
        #expect(try store.count(of: "Blob") == 2)
        // The same bytes, and zero of either sign, do clash, in memory as in the store.
        let clashing = [
            ObjectData(id: "c1", entity: "Blob", attributes: ["bytes": .binary(Data([9])), "name": .string("x"), "ratio": .double(0)]),
            ObjectData(id: "c2", entity: "Blob", attributes: ["bytes": .binary(Data([9])), "name": .string("y"), "ratio": .double(-0.0)]),
        ]
        let error = #expect(throws: DataValidationError.self) { try Store.inMemory(schema: schema).insert(clashing) }
        let messages = error?.problems.map(\.description) ?? []
        #expect(messages.contains { $0.hasPrefix("Blob 'c2', key 'bytes': breaks the uniqueness constraint (bytes)") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("Blob 'c2', key 'ratio': breaks the uniqueness constraint (ratio)") }, "\(messages)")
        #expect(!messages.contains { $0.contains("key 'name'") }, "\(messages)")
    }

    @Test func lengthsCountCodePointsAsSQLiteDoes() throws {
        let schema = try loadSchema("model: M\nversion: v1\nentities:\n  Tag:\n    attributes:\n      name: { type: string, maxLength: 3 }\n")
        let decomposed = "e\u{301}e\u{301}"   // two characters, four code points
        let error = #expect(throws: DataValidationError.self) {
            try Store.inMemory(schema: schema).insert([ObjectData(id: "t", entity: "Tag", attributes: ["name": .string(decomposed)])])
        }
        #expect(error?.problems.first?.message.contains("longer than maxLength 3") == true)
        try Store.inMemory(schema: schema).insert([ObjectData(id: "t", entity: "Tag", attributes: ["name": .string("e\u{301}e")])])
    }

    @Test func manyProblemsAreCappedButCounted() throws {
        let schema = try uncloudNotes("v1")
        let objects = (0..<250).map { ObjectData(id: "n\($0)", entity: "Note") }
        let error = #expect(throws: DataValidationError.self) { try Store.inMemory(schema: schema).insert(objects) }
        #expect(error?.problems.count == 100)
        #expect(error?.total == 750)
        #expect(error?.description.contains("... and 650 more problems") == true)
    }
}
