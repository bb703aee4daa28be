/// An object graph that reads a store on demand, so expressions run over stored objects
/// (`mapc eval --store`, migration filters) without loading the store into memory. Objects are
/// found by key (references it hands out carry their keys), read once and kept in a bounded cache.
public final class StoreObjectGraph: ObjectGraph {
    /// The store read.
    public let store: Store
    private var cache = BoundedCache<String, ObjectData>(capacity: 4_096)
    private var properties: [String: [String: Property]] = [:]
    /// The object being worked on (a migration's current source object): found without hashing.
    private var current: ObjectData?
    /// The properties of the last entity asked about, found without hashing its name.
    private var currentProperties: (entity: String, byName: [String: Property])?

    /// Creates a graph over a store.
    public init(store: Store) {
        self.store = store
    }

    /// Makes an object known to the graph without a read (for objects being iterated already).
    public func remember(_ object: ObjectData) {
        current = object
    }

    /// The reference of an object read from the store.
    public func ref(_ object: ObjectData) -> ObjectRef {
        ObjectRef(entity: object.entity, id: object.id, key: object.key)
    }

    private func property(_ key: String, of entityName: String) -> Property? {
        if let known = currentProperties, known.entity == entityName, let found = known.byName[key] { return found }
        if let known = properties[entityName]?[key] {
            currentProperties = (entityName, properties[entityName] ?? [:])
            return known
        }
        guard let entity = store.schema.entity(named: entityName), let found = store.schema.property(named: key, in: entity) else { return nil }
        properties[entityName, default: [:]][key] = found
        return found
    }

    /// The stored object a reference names.
    public func load(_ ref: ObjectRef) throws -> ObjectData? {
        if let current, let key = ref.key, current.key == key, current.entity == ref.entity { return current }
        if let cached = cache[ref.id] { return cached }
        let object: ObjectData?
        if let key = ref.key, store.schema.entity(named: ref.entity) != nil {
            object = try store.object(entity: ref.entity, key: key)
        } else {
            object = try store.object(id: ref.id)
        }
        if let object { cache[object.id] = object }
        return object
    }

    /// The value of a key path step on a stored object, read from its row.
    public func value(of object: ObjectRef, key: String) throws -> EvalValue? {
        guard let data = try load(object), let property = property(key, of: data.entity) else { return nil }
        switch property {
        case .attribute(let attribute):
            return .scalar(attribute.isTransient ? .null : (data.attributes[key] ?? .null))
        case .relationship(let relationship):
            let ids = data.relationships[key] ?? []
            let keys = data.relatedKeys[key] ?? []
            var refs: [EvalValue] = []
            refs.reserveCapacity(ids.count)
            for (index, id) in ids.enumerated() {
                if index < keys.count {
                    refs.append(.object(ObjectRef(entity: keys[index].entity, id: id, key: keys[index].key)))
                } else {
                    let located = try store.locate(id: id)
                    refs.append(.object(ObjectRef(entity: located?.entity ?? relationship.destination, id: id, key: located?.key)))
                }
            }
            return relationship.isToMany ? .collection(refs, ordered: relationship.isOrdered) : (refs.first ?? .null)
        }
    }

    /// Every stored object of an entity and its sub-entities.
    public func objects(of entity: String) throws -> [ObjectRef] {
        guard let root = store.schema.entity(named: entity) else { return [] }
        var refs: [ObjectRef] = []
        for member in store.schema.hierarchy(under: root) where !member.isAbstract {
            try store.forEachBatch(ofExactEntity: member.name) { batch in
                for object in batch { refs.append(ref(object)) }
            }
        }
        return refs
    }
}
