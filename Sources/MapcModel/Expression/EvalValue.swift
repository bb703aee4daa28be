import Foundation
import MapcFoundation

/// A reference to an object in an `ObjectGraph`: its entity and identity, and its key in the
/// store it lives in when the graph knows it (so lookups need not turn identities into keys).
/// References are equal when their entities and identities are (identities compared exactly, as a
/// store's index compares them: `String.isExactly`).
public struct ObjectRef: Sendable, Hashable, CustomStringConvertible {
    /// The object's own entity.
    public var entity: String
    /// The object's identity string.
    public var id: String
    /// The object's key in its store, when known.
    public var key: Int64?
    /// Whether the object was read from a migration's source store: its key is the source's, and
    /// a destination relationship cannot take it (not part of equality).
    package var isSourceObject = false

    /// Creates a reference.
    public init(entity: String, id: String, key: Int64? = nil) {
        self.entity = entity
        self.id = id
        self.key = key
    }

    public static func == (lhs: ObjectRef, rhs: ObjectRef) -> Bool { lhs.entity == rhs.entity && lhs.id.isExactly(rhs.id) }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        hasher.combine(id)
    }

    public var description: String { "\(entity) '\(id)'" }
}

/// Values that only the migration machinery produces: `$manager`, `$entityPolicy`, contexts and
/// fetch requests.
public enum Handle: Sendable, Hashable {
    /// `$manager`, the migration manager.
    case manager
    /// `$entityPolicy`, the mapping's custom policy.
    case entityPolicy
    /// `$manager.sourceContext`, the source store as a fetch reads it.
    case sourceContext
    /// `$manager.destinationContext`.
    case destinationContext
    /// A fetch request of an entity's objects with a predicate (Xcode's standard fetch).
    case fetchRequest(entity: String, predicate: String)
    /// `$entityMapping`, the entity mapping being run (Core Data's NSEntityMapping): its keys
    /// `name`, `sourceEntityName`, `destinationEntityName` and `userInfo` can be read.
    case entityMapping(name: String, sourceEntityName: String?, destinationEntityName: String?, userInfo: [String: String])
    /// `$propertyMapping`, the property mapping being evaluated: its key `name`, the
    /// destination property's.
    case propertyMapping(name: String)
    /// An entity mapping's `userInfo` (`$entityMapping.userInfo`): a key it lacks reads as nil.
    case userInfo([String: String])
}

/// A value during evaluation: a schema value, an object, a collection, or a handle.
public indirect enum EvalValue: Sendable, Hashable {
    /// A schema value (nil included).
    case scalar(Value)
    /// An object of a store or of data.
    case object(ObjectRef)
    /// `ordered` distinguishes arrays (ordered relationships, aggregates) from sets.
    case collection([EvalValue], ordered: Bool)
    /// A value only the migration machinery produces (`Handle`).
    case handle(Handle)

    /// Nil.
    public static let null = EvalValue.scalar(.null)

    /// Whether the value is nil.
    public var isNull: Bool {
        if case .scalar(.null) = self { return true }
        return false
    }

    /// Whether this is a double (the values whose text depends on the attribute they came from).
    var isDouble: Bool {
        if case .scalar(.double) = self { return true }
        return false
    }

    /// Whether the value is a double's or a decimal's NaN (a store may hold either).
    package var isNaN: Bool {
        switch self {
        case .scalar(.double(let number)): return number.isNaN
        case .scalar(.decimal(let number)): return number.isNaN
        default: return false
        }
    }

    /// The elements, when the value is a collection.
    public var elements: [EvalValue]? {
        if case .collection(let items, _) = self { return items }
        return nil
    }

    /// A short name of the kind of value, for messages.
    package var kindName: String {
        switch self {
        case .scalar(let value):
            switch value {
            case .null: return "nil"
            case .bool: return "a boolean"
            // NaN, which a store may hold, is no number to order or compute with: said as such.
            case .decimal(let number) where number.isNaN: return "a decimal NaN (not a number)"
            case .double(let number) where number.isNaN: return "a double NaN (not a number)"
            case .integer, .double, .decimal: return "a number"
            case .string: return "a string"
            case .date: return "a date"
            case .binary: return "binary data"
            case .uuid: return "a UUID"
            case .uri: return "a URI"
            case .nonUTF8Text(let bytes): return "text whose bytes are not UTF-8 (\(Value.hexPrefix(bytes)))"
            }
        case .object(let ref): return ref.entity.isEmpty ? "an object" : English.withArticle(ref.entity)
        case .collection: return "a collection"
        case .handle(let handle):
            switch handle {
            case .manager: return "the migration manager"
            case .entityPolicy: return "the entity policy"
            case .sourceContext, .destinationContext: return "a context"
            case .fetchRequest: return "a fetch request"
            case .entityMapping: return "the entity mapping"
            case .propertyMapping: return "the property mapping"
            case .userInfo: return "a user info dictionary"
            }
        }
    }
}
