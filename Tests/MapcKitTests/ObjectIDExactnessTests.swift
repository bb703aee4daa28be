import Foundation
import Testing
@testable import MapcKit

/// A Core Data store names an object by its entity and key (`Note/p12`), and `object(id:)` found
/// one by other texts too: `Note/p012` and `Note/p+12` (the key was read by `Int64(_:)`), and a
/// parent entity's name for a sub-entity's object. An id finds the object it names exactly.
@Suite("Object ids compared exactly")
struct ObjectIDExactnessTests {
    @Test func onlyTheExactIdFindsACoreDataObject() throws {
        let schema = try loadSchema("""
        model: Z
        version: v1
        entities:
          Animal:
            attributes:
              name: string?
          Dog:
            parent: Animal
            attributes:
              breed: string?
        """)
        let store = try Store.inMemory(schema: schema, format: .coreData)
        try store.insert([ObjectData(id: "a", entity: "Animal", attributes: ["name": .string("cat")]),
                          ObjectData(id: "d", entity: "Dog", attributes: ["name": .string("rex"), "breed": .string("lab")])])
        let animals = try store.objects(of: "Animal").map(\.id).sorted()
        #expect(animals.count == 2, "\(animals)")
        let dog = try #require(try store.objects(ofExactEntity: "Dog").first)
        let key = try #require(dog.id.split(separator: "p").last.flatMap { Int64($0) })
        #expect(try store.object(id: dog.id)?.attributes["breed"] == .string("lab"))
        for other in ["Dog/p0\(key)", "Dog/p+\(key)", "Dog/p \(key)", "Animal/p\(key)"] {
            #expect(try store.object(id: other) == nil, "\(other) found \(String(describing: try? store.object(id: other)))")
        }
    }
}
