import Foundation
import MapcFoundation
/// One object as the library and the data format see it: an identity, an entity, attribute
/// values and relationships expressed as the identities of related objects.
public struct ObjectData: Sendable, Equatable {
    /// The identity string, unique in a store (the data format's `id`).
    public var id: String
    /// The object's own entity (a sub-entity's objects carry the sub-entity's name).
    public var entity: String
    /// Attribute values by name. A missing key means "not given": the default applies.
    public var attributes: [String: Value]
    /// Related objects' identities by relationship name, in order for ordered relationships;
    /// a to-one relationship holds zero or one identity. A missing key means "not given": the
    /// relationship is then derived from its inverse.
    public var relationships: [String: [String]]
    /// The object's key in the store it was read from (its row's primary key); nil for objects
    /// made in memory or read from data files. Not part of equality: the same data is equal
    /// wherever it was read.
    public var key: Int64?
    /// For objects read from a store: the entity and key of each related object, in the order of
    /// `relationships` (so following a relationship needs no lookup by identity).
    package var relatedKeys: [String: [StoredKey]] = [:]
    /// Set on an object read from a store with only some of its properties (`Store.forEachBatch`
    /// or `objects(keys:)` with `properties`; a migration reads those its expressions use): a
    /// missing attribute or relationship is then one not read, not one not given, and
    /// `StoreObjectGraph` reads it from the row when asked. Not part of equality.
    public package(set) var isPartial = false

    /// Creates an object.
    public init(id: String, entity: String, attributes: [String: Value] = [:], relationships: [String: [String]] = [:], key: Int64? = nil) {
        self.id = id
        self.entity = entity
        self.attributes = attributes
        self.relationships = relationships
        self.key = key
    }

    /// About how many bytes the object holds: its values' texts and data, a few words per related
    /// object (what bounds a batch of objects read or held at once).
    package var byteCount: Int {
        var bytes = 0
        for value in attributes.values { bytes += value.byteCount }
        for ids in relationships.values { bytes += 32 * ids.count }
        return bytes
    }

    public static func == (lhs: ObjectData, rhs: ObjectData) -> Bool {
        lhs.id == rhs.id && lhs.entity == rhs.entity && lhs.attributes == rhs.attributes && lhs.relationships == rhs.relationships
    }
}

/// Where an object is in a store: its entity and its key (its row's primary key).
package struct StoredKey: Sendable, Hashable {
    /// The object's own entity.
    package var entity: String
    /// The object's key.
    package var key: Int64

    /// Creates a stored key.
    package init(entity: String, key: Int64) {
        self.entity = entity
        self.key = key
    }
}

/// A property of an entity, by their names: the key of what is worked out once per property
/// (how a relationship is linked or set) rather than per object.
package struct PropertyName: Hashable {
    package var entity: String
    package var property: String

    package init(entity: String, property: String) {
        self.entity = entity
        self.property = property
    }
}

/// A problem with one object's data, located by entity, object identity and key.
public struct DataProblem: Sendable, Equatable, CustomStringConvertible {
    /// The entity named in the data.
    public var entity: String
    /// The object's identity; nil when the object has none.
    public var objectID: String?
    /// The attribute or relationship; nil when the problem concerns the whole object.
    public var key: String?
    /// What is wrong and, where clear, how to fix it.
    public var message: String
    /// Where in the data file, when the problem was placed there (`DataValidationError.placed`).
    package var location: FileLocation?
    /// Which of the entity's objects in the data with this id (`objectID`, or an empty one when
    /// that is nil) the problem is of, counting from 0, where several may have it: a second
    /// object with an id is placed at itself, not at the first.
    package var occurrence: Int?

    /// Creates a problem.
    public init(entity: String, objectID: String?, key: String?, message: String) {
        self.entity = entity
        self.objectID = objectID
        self.key = key
        self.message = message
    }

    /// `Note 'n1', key 'title': message`.
    public var description: String {
        var text = location.map { "\($0): " } ?? ""
        text += entity
        if let objectID { text += " '\(objectID)'" }
        if let key { text += ", key '\(key)'" }
        return text + ": " + message
    }
}

/// Data that failed validation; nothing was written.
public struct DataValidationError: Error, Sendable, CustomStringConvertible {
    /// Every problem found (up to a limit), in data order.
    public var problems: [DataProblem]
    /// How many problems there were in all, including those not kept.
    public var total: Int

    package init(problems: [DataProblem], total: Int) {
        self.problems = problems
        self.total = total
    }

    /// The problems, one per line, then how many were left out and that nothing was written.
    public var description: String {
        var lines = problems.map(\.description)
        if total > problems.count { lines.append("... and \(total - problems.count) more problems") }
        lines.append("nothing was written")
        return lines.joined(separator: "\n")
    }
}

/// Collects problems, keeping the first ones in full and counting the rest.
package struct ProblemList {
    static let kept = 100
    package private(set) var problems: [DataProblem] = []
    package private(set) var total = 0

    package init() {}

    package mutating func add(_ entity: String, _ id: String?, _ key: String?, _ message: String, occurrence: Int? = nil) {
        total += 1
        guard problems.count < Self.kept else { return }
        var problem = DataProblem(entity: entity, objectID: id, key: key, message: message)
        problem.occurrence = occurrence
        problems.append(problem)
    }

    package var isEmpty: Bool { total == 0 }

    package func throwIfAny() throws {
        if total > 0 { throw DataValidationError(problems: problems, total: total) }
    }
}

extension DataValidationError: LocalizedError {
    public var errorDescription: String? { description }
}
