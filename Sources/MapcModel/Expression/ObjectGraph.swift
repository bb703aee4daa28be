import Foundation
import MapcFoundation

/// The objects an expression reads. The evaluator knows nothing else about storage, so the
/// same AST runs over store objects, JSON objects, or objects a migration is creating.
package protocol ObjectGraph {
    /// The value of `key` on an object: an attribute gives a scalar, a to-one relationship an
    /// object or nil, a to-many one a collection. Returns nil when the object has no such key.
    func value(of object: ObjectRef, key: String) throws -> EvalValue?
    /// Every object of an entity, sub-entities included (for `FETCH`).
    func objects(of entity: String) throws -> [ObjectRef]
    /// Whether key paths may read `object` through this graph: a migration's source graph reads
    /// source objects only (a destination object's key names another row there).
    func canRead(_ object: ObjectRef) -> Bool
    /// The keys an object has, when the graph knows them (for a did-you-mean on a key it lacks).
    func propertyNames(of object: ObjectRef) -> [String]?
    /// How many objects a to-many key of an object holds (what `@count` of `value(of:key:)`
    /// gives), when the graph can say without making them; nil otherwise.
    func count(of object: ObjectRef, key: String) throws -> Int?
    /// The count of seconds the graph's store keeps dates in, when it is a store's: a date made
    /// text has the digits that read back in it, as `dump` shows them.
    var dateEpoch: Timestamp.Epoch? { get }
    /// The count a date `CAST` from text is rounded to: the instant the store would hold for the
    /// text (as `load` stores it, and as Core Data's `NSDate` from the text is a double of its
    /// count), so that a stored date equals the same text's; nil for the exact instant.
    var literalDateEpoch: Timestamp.Epoch? { get }
    /// The type of an object's attribute `key`, when the graph knows it (nil for a relationship,
    /// an unknown key, or a graph without a schema).
    func attributeType(of object: ObjectRef, key: String) -> AttributeType?
}

extension ObjectGraph {
    /// Every object, by default.
    package func canRead(_ object: ObjectRef) -> Bool { true }
    /// Not known, by default.
    package func propertyNames(of object: ObjectRef) -> [String]? { nil }
    /// Not known, by default: `@count` counts the collection.
    package func count(of object: ObjectRef, key: String) throws -> Int? { nil }
    /// None, by default: a date from text is the instant the text names.
    package var dateEpoch: Timestamp.Epoch? { nil }
    /// The graph's own count, by default.
    package var literalDateEpoch: Timestamp.Epoch? { dateEpoch }
    /// Not known, by default.
    package func attributeType(of object: ObjectRef, key: String) -> AttributeType? { nil }
}

/// An object graph over objects held in memory, typed by a schema: what tests, fixtures and
/// `mapc eval --object` use.
package final class InMemoryObjectGraph: ObjectGraph {
    private var objectsByRef: [ObjectRef: ObjectData] = [:]
    private var order: [ObjectRef] = []
    private var entityByID: [ExactText: String] = [:]
    private let schema: Schema?

    /// The keys of an object of the schema's entity, when the graph has a schema.
    package func propertyNames(of object: ObjectRef) -> [String]? {
        schema?.propertyNames(ofEntity: object.entity)
    }

    /// The attribute's type in the schema's entity, when the graph has a schema.
    package func attributeType(of object: ObjectRef, key: String) -> AttributeType? {
        guard let schema, let entity = schema.entity(named: object.entity), case .attribute(let attribute)? = schema.property(named: key, in: entity) else { return nil }
        return attribute.type
    }

    /// Creates a graph over `objects`; with a schema, relationships are typed and ordered as declared.
    package init(objects: [ObjectData], schema: Schema?) {
        self.schema = schema
        for object in objects {
            let ref = ObjectRef(entity: object.entity, id: object.id)
            objectsByRef[ref] = object
            entityByID[ExactText(object.id)] = object.entity
            order.append(ref)
        }
    }

    /// The reference of the object with this id.
    package func ref(id: String) -> ObjectRef? {
        entityByID[ExactText(id)].map { ObjectRef(entity: $0, id: id) }
    }

    /// The value of a key path step on an object held in memory.
    package func value(of object: ObjectRef, key: String) throws -> EvalValue? {
        guard let data = objectsByRef[object] else { return nil }
        if let value = data.attributes[key] { return .scalar(value) }
        if let ids = data.relationships[key] {
            let refs = ids.map { id in EvalValue.object(ref(id: id) ?? ObjectRef(entity: "", id: id)) }
            if let schema, let entity = schema.entity(named: object.entity), case .relationship(let relationship)? = schema.property(named: key, in: entity) {
                return relationship.isToMany ? .collection(refs, ordered: relationship.isOrdered) : (refs.first ?? .null)
            }
            return .collection(refs, ordered: true)
        }
        if let schema, let entity = schema.entity(named: object.entity), let property = schema.property(named: key, in: entity) {
            if case .relationship(let relationship) = property, relationship.isToMany { return .collection([], ordered: relationship.isOrdered) }
            return .null
        }
        return schema == nil ? .null : nil
    }

    /// Every object of an entity and its sub-entities.
    package func objects(of entity: String) throws -> [ObjectRef] {
        let names: Set<String> = schema.flatMap { schema in schema.entity(named: entity).map { Set(schema.hierarchy(under: $0).map(\.name)) } } ?? [entity]
        return order.filter { names.contains($0.entity) }
    }
}

/// An object graph over free-form JSON (no schema): nested objects become objects, arrays
/// collections, and strings, numbers and booleans scalars. Used by `mapc eval --object`.
/// A missing key reads as nil.
package final class JSONObjectGraph: ObjectGraph {
    private var nodes: [ExactText: [String: EvalValue]] = [:]
    private var counter = 0
    /// The root object, bound to `$source` and `SELF` by `mapc eval`.
    package private(set) var root: EvalValue = .null

    /// Creates a graph whose root is the given JSON value. Throws for a number too large for a
    /// double, which is a mistake, not an infinity (as in data files).
    package init(json: JSONValue) throws {
        root = try convert(json)
    }

    private func convert(_ json: JSONValue) throws -> EvalValue {
        switch json {
        case .null: return .null
        case .bool(let flag): return .scalar(.bool(flag))
        case .integer(let n): return .scalar(.integer(n))
        case .double(let d): return .scalar(.double(d))
        case .number(let text):
            // A whole number beyond 64 bits is a decimal, as the same digits written in an
            // expression are; a number with a fraction is a double (an object given as JSON has no
            // schema to say it is a decimal), and one too large for a double is refused.
            let nearest = JSONValue.nearestDouble(text)
            guard nearest.isFinite else { throw MapcError.input("the JSON number \(text.prefix(40)) is too large for a double") }
            if !text.contains(where: { ".eE".contains($0) }) {
                guard let exact = ValueParser.parseDecimal(text) else {
                    throw MapcError.input("the JSON number \(text.prefix(40))… has more digits than a decimal's \(ValueLimits.maxDecimalDigits), which mapc cannot hold exactly")
                }
                return .scalar(.decimal(exact))
            }
            return .scalar(.double(nearest))
        case .float(let f): return .scalar(.double(Double(f)))
        case .string(let text): return .scalar(.string(text))
        case .array(let items): return .collection(try items.map(convert), ordered: true)
        case .object(let pairs):
            counter += 1
            var id = "#\(counter)"
            if case .string(let given)? = json["id"], nodes[ExactText(given)] == nil { id = given }
            nodes[ExactText(id)] = [:]
            var members: [String: EvalValue] = [:]
            for (key, member) in pairs { members[key] = try convert(member) }
            nodes[ExactText(id)] = members
            return .object(ObjectRef(entity: "", id: id))
        }
    }

    /// No object has values: nil for every key.
    package func value(of object: ObjectRef, key: String) throws -> EvalValue? {
        guard let members = nodes[ExactText(object.id)] else { return nil }
        return members[key] ?? .null
    }

    /// No objects.
    package func objects(of entity: String) throws -> [ObjectRef] { [] }
}
