import Foundation
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The objects every expression test runs against, and a context with SELF and $source bound to note n1.
enum ExpressionFixture {
    static let schema: Schema = {
        let path = packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/people.yaml").path
        // The fixture is part of the repository; a failure here is a broken checkout, reported by every test.
        return (try? SchemaLoader.load(path: path).schema) ?? Schema(model: "broken", version: "broken", entities: [])
    }()

    static let longBody = "Milk, eggs and a very long description that certainly runs past eighty characters in total length."

    static let objects: [ObjectData] = {
        let date = ISO8601.parse("2024-05-01T10:00:00Z")!.date
        return [
            ObjectData(id: "n1", entity: "Note", attributes: [
                "title": .string("Groceries"), "body": .string(longBody), "dateCreated": .date(date), "displayIndex": .integer(3),
                "rating": .double(4.5), "price": .decimal(Decimal(string: "12.50")!), "flag": .bool(true),
                "image": .binary(Data([0x89, 0x50, 0x4E, 0x47])), "uid": .uuid(UUID(uuidString: "123e4567-e89b-12d3-a456-426614174000")!),
                "link": .uri("https://example.com"),
            ], relationships: ["tags": ["t1", "t2"], "attachments": ["a1", "a2"], "author": ["p1"]]),
            ObjectData(id: "n2", entity: "Note", attributes: [
                "title": .string("Ideas"), "body": .string("short"), "dateCreated": .date(date.addingTimeInterval(86_400)), "displayIndex": .integer(1),
                "rating": .null, "price": .null, "flag": .null, "image": .null, "uid": .null, "link": .null,
            ], relationships: ["tags": ["t1"], "attachments": [], "author": ["p1"]]),
            ObjectData(id: "t1", entity: "Tag", attributes: ["name": .string("home")], relationships: ["notes": ["n1", "n2"]]),
            ObjectData(id: "t2", entity: "Tag", attributes: ["name": .string("Café")], relationships: ["notes": ["n1"]]),
            ObjectData(id: "a1", entity: "ImageAttachment", attributes: ["size": .integer(100), "kind": .string("image"), "caption": .string("A photo")], relationships: ["note": ["n1"]]),
            ObjectData(id: "a2", entity: "Attachment", attributes: ["size": .integer(250), "kind": .string("pdf")], relationships: ["note": ["n1"]]),
            ObjectData(id: "p1", entity: "Person", attributes: ["firstName": .string("Adam"), "lastName": .string("Smith"), "age": .integer(40)],
                       relationships: ["notes": ["n1", "n2"], "children": ["p2", "p3"], "parent": [], "countries": ["c1", "c2"]]),
            ObjectData(id: "p2", entity: "Person", attributes: ["firstName": .string("Jane"), "lastName": .string("Doe"), "age": .integer(12)],
                       relationships: ["notes": [], "children": [], "parent": ["p1"], "countries": []]),
            ObjectData(id: "p3", entity: "Person", attributes: ["firstName": .string("Bob"), "lastName": .string("Doe"), "age": .integer(17)],
                       relationships: ["notes": [], "children": [], "parent": ["p1"], "countries": []]),
            ObjectData(id: "c1", entity: "Country", attributes: ["name": .string("France")], relationships: ["moods": ["m1", "m2"], "people": ["p1"]]),
            ObjectData(id: "c2", entity: "Country", attributes: ["name": .string("Japan")], relationships: ["moods": ["m2", "m3"], "people": ["p1"]]),
            ObjectData(id: "m1", entity: "Mood", attributes: ["name": .string("calm")], relationships: ["countries": ["c1"]]),
            ObjectData(id: "m2", entity: "Mood", attributes: ["name": .string("happy")], relationships: ["countries": ["c1", "c2"]]),
            ObjectData(id: "m3", entity: "Mood", attributes: ["name": .string("busy")], relationships: ["countries": ["c2"]]),
        ]
    }()

    /// A stand-in for the migration manager: NoteToNote maps n1 to n1', and so on.
    final class StubManager: MigrationManagerFunctions {
        func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
            guard name == "NoteToNote" else { throw MapcError.notFound("no entity mapping named '\(name)'") }
            return sourceInstances.map { ObjectRef(entity: "Note", id: $0.id + "'") }
        }
        func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef] {
            sourceInstances.map { ObjectRef(entity: $0.entity, id: $0.id + "'") }
        }
        func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectRef]) throws -> [ObjectRef] {
            destinationInstances.map { ObjectRef(entity: "Note", id: String($0.id.dropLast())) }
        }
    }

    /// Contexts hold their manager weakly (a migration owns its evaluators): the stand-in lives here.
    nonisolated(unsafe) static let stubManager = StubManager()

    static func context(note id: String = "n1") -> EvaluationContext {
        let graph = InMemoryObjectGraph(objects: objects, schema: schema)
        let note = EvalValue.object(ObjectRef(entity: "Note", id: id))
        return EvaluationContext(
            graph: graph, evaluatedObject: note,
            variables: ["source": note, "INPUT": .scalar(.integer(5)), "LOWER": .scalar(.integer(1)), "UPPER": .scalar(.integer(10)),
                        "FIRST_NAME": .scalar(.string("ADAM")), "person": .object(ObjectRef(entity: "Person", id: "p1"))],
            manager: stubManager,
            policyFunctions: ["captionFor:": { arguments in
                guard case .scalar(.string(let text))? = arguments.first else { return .null }
                return .scalar(.string(String(text.prefix(5))))
            }],
            now: ISO8601.parse("2026-01-01T00:00:00Z")!.date, random: { 0.5 })
    }

    /// Parses and evaluates; the result as compact JSON, or "error: message".
    static func run(_ text: String, note id: String = "n1") -> String {
        switch ExpressionParser.parse(text) {
        case .failure(let error): return "error: \(error.message)"
        case .success(let expression):
            do { return try Evaluator(context: context(note: id)).evaluate(expression).json.serialized() } catch let error as ExpressionError {
                return "error: \(error.message)"
            } catch {
                return "error: \(error)"
            }
        }
    }
}
