/// An object graph that reads a store on demand, so expressions run over stored objects
/// (`mapc eval --store`, migration filters) without loading the store into memory.
public final class StoreObjectGraph: ObjectGraph {
    /// The store read.
    public let store: Store
    private var cache: [String: ObjectData] = [:]
    private let cacheLimit = 4_096
    private var properties: [String: [String: Property]] = [:]

    /// Creates a graph over a store.
    public init(store: Store) {
        self.store = store
    }

    /// Makes an object known to the graph without a read (for objects being iterated already).
    public func remember(_ object: ObjectData) {
        // Objects are visited in batches; dropping the whole cache when it fills keeps memory bounded
        // at constant cost per object (an eviction list would cost more than the misses it saves).
        if cache.count >= cacheLimit && cache[object.id] == nil { cache.removeAll(keepingCapacity: true) }
        cache[object.id] = object
    }

    private func property(_ key: String, of entityName: String) -> Property? {
        if let known = properties[entityName]?[key] { return known }
        guard let entity = store.schema.entity(named: entityName), let found = store.schema.property(named: key, in: entity) else { return nil }
        properties[entityName, default: [:]][key] = found
        return found
    }

    private func load(_ id: String) throws -> ObjectData? {
        if let cached = cache[id] { return cached }
        guard let object = try store.object(id: id) else { return nil }
        remember(object)
        return object
    }

    public func value(of object: ObjectRef, key: String) throws -> EvalValue? {
        guard let data = try load(object.id), let property = property(key, of: data.entity) else { return nil }
        switch property {
        case .attribute(let attribute):
            return .scalar(attribute.isTransient ? .null : (data.attributes[key] ?? .null))
        case .relationship(let relationship):
            var refs: [EvalValue] = []
            for id in data.relationships[key] ?? [] {
                let entityName = try cache[id]?.entity ?? store.entityName(ofID: id) ?? relationship.destination
                refs.append(.object(ObjectRef(entity: entityName, id: id)))
            }
            return relationship.isToMany ? .collection(refs, ordered: relationship.isOrdered) : (refs.first ?? .null)
        }
    }

    public func objects(of entity: String) throws -> [ObjectRef] {
        var refs: [ObjectRef] = []
        for name in try store.layout.storage(of: entity).discriminators {
            try store.forEachObject(ofExactEntity: name) { refs.append(ObjectRef(entity: $0.entity, id: $0.id)) }
        }
        return refs
    }
}
