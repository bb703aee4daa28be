import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Adding objects to a store that already holds some: every rule of a new store holds across the
/// whole store, and new objects may refer to existing ones.
@Suite("Loading into an existing store")
struct LoadIntoStoreTests {
    static let blog = """
    model: Blog
    version: b1
    entities:
      Author:
        uniquenessConstraints: [[email]]
        attributes:
          email: string
        relationships:
          posts: { destination: Post, toMany: true, ordered: true, inverse: author, optional: true }
          partner: { destination: Author, inverse: partner, optional: true }
      Post:
        attributes:
          title: string
        relationships:
          author: { destination: Author, inverse: posts, optional: true }
          tags: { destination: Tag, toMany: true, inverse: posts, optional: true }
      Tag:
        attributes:
          name: string
        relationships:
          posts: { destination: Post, toMany: true, inverse: tags, optional: true }
    """

    private func store(_ layout: TestLayout = .mapc) throws -> Store {
        let store = try Store.inMemory(schema: try loadSchema(Self.blog), format: layout.format)
        try store.insert([
            ObjectData(id: "a1", entity: "Author", attributes: ["email": .string("ann@example.com")]),
            ObjectData(id: "p1", entity: "Post", attributes: ["title": .string("First")], relationships: ["author": ["a1"]]),
            ObjectData(id: "t1", entity: "Tag", attributes: ["name": .string("swift")], relationships: ["posts": ["p1"]]),
        ])
        return store
    }

    /// In Core Data's layout the constraint is a UNIQUE index, which stops the insert itself: the
    /// message is still the data problem, naming both objects and the value, not SQLite's.
    @Test(arguments: TestLayout.allCases)
    func uniquenessHoldsAgainstExistingObjectsAndNamesTheValueAndBothObjects(layout: TestLayout) throws {
        let store = try store(layout)
        let error = #expect(throws: DataValidationError.self) {
            try store.insert([ObjectData(id: "a2", entity: "Author", attributes: ["email": .string("ann@example.com")])])
        }
        let message = error?.description ?? ""
        let existing = layout == .mapc ? "a1" : "Author/p1"
        #expect(message.contains("Author '\(existing)'") && message.contains("Author 'a2'") && message.contains("\"ann@example.com\""), "\(message)")
        #expect(try store.count(of: "Author") == 1, "nothing was written")
    }

    /// With two constraints, an object whose first constrained value is null breaks the second:
    /// the message names that one (a UNIQUE index never fails on a null).
    @Test func theConstraintNamedIsTheOneBrokenNotOneWithANull() throws {
        let schema = try loadSchema("model: U\nversion: u1\nentities:\n  Person:\n    uniquenessConstraints: [[email], [handle]]\n    attributes:\n      email: string?\n      handle: string\n")
        let store = try Store.inMemory(schema: schema, format: .coreData)
        try store.insert([ObjectData(id: "p1", entity: "Person", attributes: ["handle": .string("ann")])])
        let error = #expect(throws: DataValidationError.self) {
            try store.insert([ObjectData(id: "p2", entity: "Person", attributes: ["handle": .string("ann")])])
        }
        let message = error?.description ?? ""
        #expect(message.contains("uniqueness constraint (handle)") && message.contains("\"ann\""), "\(message)")
    }

    @Test func newObjectsReferToExistingOnesByID() throws {
        let store = try store()
        try store.insert([
            ObjectData(id: "p2", entity: "Post", attributes: ["title": .string("Second")], relationships: ["author": ["a1"], "tags": ["t1"]]),
            ObjectData(id: "t2", entity: "Tag", attributes: ["name": .string("linux")], relationships: ["posts": ["p1"]]),
        ])
        let author = try #require(try store.object(id: "a1"))
        #expect(author.relationships["posts"] == ["p1", "p2"], "appended after the posts it had, in order")
        #expect(try store.object(id: "t1")?.relationships["posts"] == ["p1", "p2"])
        #expect(try store.object(id: "p1")?.relationships["tags"] == ["t1", "t2"])
    }

    /// Ids are compared as the store's index compares them, byte for byte: "café" written with
    /// one scalar and with a combining accent are two objects, whether loaded together or apart,
    /// and a reference reaches the one it writes (Swift's `==` took them for one: every reference
    /// went to whichever was found first, silently). Core Data's layout keeps no ids, so objects
    /// refer to each other only within one load there.
    @Test(arguments: [(TestLayout.mapc, true), (.mapc, false), (.coreData, true)])
    func idsWrittenTwoWaysAreTwoObjects(_ layout: TestLayout, together: Bool) throws {
        let store = try store(layout)
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let tags = [ObjectData(id: decomposed, entity: "Tag", attributes: ["name": .string("decomposed")]),
                    ObjectData(id: composed, entity: "Tag", attributes: ["name": .string("composed")])]
        let posts = [ObjectData(id: "p-decomposed", entity: "Post", attributes: ["title": .string("decomposed")], relationships: ["tags": [decomposed]]),
                     ObjectData(id: "p-composed", entity: "Post", attributes: ["title": .string("composed")], relationships: ["tags": [composed]])]
        if together {
            try store.insert(tags + posts)
        } else {
            try store.insert([tags[0]])
            try store.insert([tags[1]])
            try store.insert(posts)
        }
        let storedTags = try store.objects(of: "Tag")
        for post in try store.objects(of: "Post") where post.attributes["title"] != .string("First") {
            let title = post.attributes["title"]
            let linked = try #require(post.relationships["tags"]?.first)
            let tag = storedTags.first { $0.id.isExactly(linked) }
            #expect(tag?.attributes["name"] == title, "the \(String(describing: title)) post is linked to the \(String(describing: tag?.attributes["name"])) tag")
        }
    }

    /// Positions in an ordered relationship need not be 0, 1, 2…: Core Data's stores may number
    /// them from 1 or leave gaps. A new member goes after the highest position the owner holds, not
    /// at the count of its members (which put it first, or tied it with the last one).
    @Test(arguments: TestLayout.allCases, [[1024, 2048], [1, 2], [7, 3]])
    func aNewMemberOfAnOrderedListGoesAfterTheHighestPositionStored(layout: TestLayout, positions: [Int]) throws {
        let store = try store(layout)
        let author = try #require(try store.objects(of: "Author").first?.id)
        try store.insert([ObjectData(id: "p2", entity: "Post", attributes: ["title": .string("Second")], relationships: ["author": [author]])])
        guard case .inverseForeignKey(let table, _, let order?, _)? = store.layout.entities["Author"]?.relationships["posts"] else {
            Issue.record("posts is kept by the posts' rows, with their positions"); return
        }
        let titles = ["First", "Second"]
        try store.database.write { db in
            for (title, position) in zip(titles, positions) {
                try db.execute(sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(order.quotedDatabaseIdentifier) = ? WHERE \((store.layout.entities["Post"]?.attributeColumns["title"] ?? "title").quotedDatabaseIdentifier) = ?", arguments: [position, title])
            }
        }
        let before = try #require(try store.objects(of: "Author").first?.relationships["posts"])
        try store.insert([ObjectData(id: "p3", entity: "Post", attributes: ["title": .string("Third")], relationships: ["author": [author]])])
        let after = try #require(try store.objects(of: "Author").first?.relationships["posts"])
        #expect(after.count == 3 && Array(after.prefix(2)) == before, "\(before) then \(after)")
        let third = try #require(try store.objects(of: "Post").first { $0.attributes["title"] == .string("Third") })
        #expect(after.last == third.id, "the new post is last: \(after)")
    }

    /// Positions near the largest SQLite counts: new members that would go past it are refused
    /// with what to do (adding to the highest trapped the process).
    @Test(arguments: TestLayout.allCases)
    func positionsThatWouldRunPastTheLargestAreRefused(layout: TestLayout) throws {
        let store = try store(layout)
        let author = try #require(try store.objects(of: "Author").first?.id)
        guard case .inverseForeignKey(let table, _, let order?, _)? = store.layout.entities["Author"]?.relationships["posts"] else {
            Issue.record("posts is kept by the posts' rows, with their positions"); return
        }
        try store.database.write { db in try db.execute(sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(order.quotedDatabaseIdentifier) = \(Int.max - 1)") }
        let error = #expect(throws: MapcError.self) {
            try store.insert((2...3).map { ObjectData(id: "p\($0)", entity: "Post", attributes: ["title": .string("P\($0)")], relationships: ["author": [author]]) })
        }
        #expect(error?.description.contains("renumber the positions first") == true, "\(String(describing: error))")
        #expect(try store.count(of: "Post") == 1, "nothing was written")
    }

    @Test func existingToOneRelationshipsAreNeverChanged() throws {
        let store = try store()
        let stolen = #expect(throws: DataValidationError.self) {
            try store.insert([ObjectData(id: "a3", entity: "Author", attributes: ["email": .string("bo@example.com")], relationships: ["posts": ["p1"]])])
        }
        #expect(stolen?.description.contains("Post 'p1' in the store already has author 'a1'") == true, "\(String(describing: stolen))")
        let twice = #expect(throws: DataValidationError.self) {
            try store.insert([
                ObjectData(id: "a4", entity: "Author", attributes: ["email": .string("c@example.com")], relationships: ["partner": ["a1"]]),
                ObjectData(id: "a5", entity: "Author", attributes: ["email": .string("d@example.com")], relationships: ["partner": ["a1"]]),
            ])
        }
        #expect(twice?.description.contains("'a4' and 'a5' both claim it") == true, "\(String(describing: twice))")
        try store.insert([ObjectData(id: "a4", entity: "Author", attributes: ["email": .string("c@example.com")], relationships: ["partner": ["a1"]])])
        #expect(try store.object(id: "a1")?.relationships["partner"] == ["a4"], "a one-to-one partner is set on both sides")
    }

    /// `load` checks the whole store after adding to it; a problem the store already had (a
    /// reference to no object, which Core Data's batch deletes leave) is said to be the store's,
    /// with what to do, not blamed on the data.
    @Test(arguments: TestLayout.allCases)
    func aProblemTheStoreAlreadyHadIsSaidToBeTheStores(layout: TestLayout) throws {
        let store = try store(layout)
        guard case .foreignKey(let column, _, _)? = store.layout.entities["Post"]?.relationships["author"], let table = store.layout.entities["Post"]?.table else {
            Issue.record("a post's author is a foreign key"); return
        }
        try store.database.write { db in try db.execute(sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = 999") }
        let error = #expect(throws: DataValidationError.self) {
            try store.insert([ObjectData(id: "t9", entity: "Tag", attributes: ["name": .string("new")])])
        }
        let message = error?.description ?? ""
        #expect(message.contains("(so in the store before this load)"), "\(message)")
        #expect(message.contains("every problem above was in the store before this load"), "\(message)")
        #expect(try store.count(of: "Tag") == 1, "nothing was written")
    }

    @Test func danglingReferencesSayWhereTheyWereLookedFor() throws {
        let store = try store()
        let error = #expect(throws: DataValidationError.self) {
            try store.insert([ObjectData(id: "p9", entity: "Post", attributes: ["title": .string("x")], relationships: ["author": ["nobody"]])])
        }
        #expect(error?.description.contains("no object has id 'nobody' in the data or in the store") == true)
    }
}
