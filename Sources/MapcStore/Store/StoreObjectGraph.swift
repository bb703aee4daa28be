import MapcFoundation
import MapcModel
/// An object graph that reads a store on demand, so expressions run over stored objects
/// (`mapc eval --store`, migration filters) without loading the store into memory. Objects are
/// found by key (references it hands out carry their keys), read once and kept in a bounded cache.
package final class StoreObjectGraph: ObjectGraph {
    /// The store read.
    package let store: Store
    private var cache = BoundedCache<ExactText, ObjectData>(capacity: 4_096)
    private var properties: [String: [String: Property]] = [:]
    /// The object being worked on (a migration's current source object): found without hashing.
    private var current: ObjectData?
    /// The properties of the last entity asked about, found without hashing its name.
    private var currentProperties: (entity: String, byName: [String: Property])?
    /// The batch of objects being iterated. The first time an object one of them refers to is
    /// missed, every object of that entity the batch refers to by a to-one relationship is read at
    /// once: a key path like `$source.note.body` costs a query per 500 objects, not one per object.
    private var batch: [ObjectData] = []
    private var prefetchedEntities: Set<String> = []
    private var prefetched: [StoredKey: ObjectData] = [:]

    /// Whether the references handed out are marked as a migration's source objects (`ObjectRef.isSourceObject`).
    let readsMigrationSource: Bool
    /// Where the values of attributes kept in Core Data's external form are read from: the
    /// support folder beside the store, or the one a migration names (every step of a run reads
    /// the files of the store it started from).
    package var externalFiles: CoreDataExternalData?

    /// The store's count of seconds.
    package var dateEpoch: Timestamp.Epoch? { store.strategy.dateEpoch }
    /// The count a date `CAST` from text is held in: the store's, so that it equals a date stored
    /// from the same text; nil (the exact instant) for a migration that writes a store of the
    /// other format, whose write rounds it once, to its own count.
    package var literalDateEpoch: Timestamp.Epoch?

    /// Creates a graph over a store.
    package convenience init(store: Store) {
        self.init(store: store, readsMigrationSource: false)
    }

    package init(store: Store, readsMigrationSource: Bool) {
        self.store = store
        self.readsMigrationSource = readsMigrationSource
        externalFiles = store.path.map(CoreDataExternalData.beside(store:))
        literalDateEpoch = store.strategy.dateEpoch
    }

    /// An attribute's stored value as the app reads it (`CoreDataExternalValue.readable`): what
    /// expressions and policies see.
    package func readable(_ value: Value, of attribute: Attribute) throws -> Value {
        try CoreDataExternalValue.readable(value, of: attribute, in: store.format, files: externalFiles)
    }

    /// Whether any attribute of the store's schema keeps its values marked (`CoreDataExternalValue`):
    /// without one, a stored value is the value the app reads, found without looking its attribute up.
    private lazy var keepsMarkedValues = CoreDataExternalValue.anyMarked(in: store.schema, format: store.format)

    /// The value of attribute `name` of a stored object as the app reads it; nil when the entity has no such attribute.
    package func attributeValue(_ name: String, of data: ObjectData) throws -> Value? {
        guard keepsMarkedValues else { return data.attributes[name] }
        guard case .attribute(let attribute)? = property(name, of: data.entity) else { return nil }
        return try readable(data.attributes[name] ?? .null, of: attribute)
    }

    /// Makes an object known to the graph without a read (for objects being iterated already).
    package func remember(_ object: ObjectData) {
        current = object
    }

    /// How many objects the batch being iterated holds (what the graph keeps alive besides its caches).
    var batchCount: Int { batch.count }

    /// Makes a batch of objects known as the ones being iterated, so that the objects they refer
    /// to are read together when first needed (see `load`). Replaces the previous batch.
    package func remember(batch objects: [ObjectData]) {
        batch = objects
        // The object of the previous batch is not the one being worked on any more.
        current = nil
        prefetched = [:]
        prefetchedEntities = []
    }

    /// Reads, in a few queries, every object of `entity` that the batch refers to by a to-one
    /// relationship. Keys come with their exact entity, so the objects read are the ones
    /// `Store.object(entity:key:)` would find one by one.
    private func prefetch(_ entity: String) throws {
        prefetchedEntities.insert(entity)
        var keys: [Int64] = []
        var seen: Set<Int64> = []
        for object in batch {
            for related in object.relatedKeys.values where related.count == 1 && related[0].entity == entity {
                if seen.insert(related[0].key).inserted { keys.append(related[0].key) }
            }
        }
        guard !keys.isEmpty, let described = store.schema.entity(named: entity) else { return }
        // Without to-many lists (a query per object each): key paths through a to-one mostly
        // read attributes, and a list asked for is read then (the object is partial).
        let properties = Set(store.schema.allAttributes(of: described).map(\.name) + store.schema.allRelationships(of: described).filter { !$0.isToMany }.map(\.name))
        // One object the batch leads to holding a value reading refuses would fail the read of
        // them all, while the batch's first object is migrated: each is then read when an object
        // leads to it, and the error is that object's.
        guard let objects = try? store.objects(keys: keys, ofExactEntity: entity, properties: properties) else { return }
        for (key, object) in objects {
            prefetched[StoredKey(entity: entity, key: key)] = object
        }
    }

    /// A migration's source graph reads only the source objects it handed out.
    package func canRead(_ object: ObjectRef) -> Bool { !readsMigrationSource || object.isSourceObject }

    /// The reference of an object read from the store.
    package func ref(_ object: ObjectData) -> ObjectRef {
        reference(entity: object.entity, id: object.id, key: object.key)
    }

    private func reference(entity: String, id: String, key: Int64?) -> ObjectRef {
        var ref = ObjectRef(entity: entity, id: id, key: key)
        ref.isSourceObject = readsMigrationSource
        return ref
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
    package func load(_ ref: ObjectRef) throws -> ObjectData? {
        if let current, let key = ref.key, current.key == key, current.entity == ref.entity { return current }
        if let key = ref.key, !batch.isEmpty {
            if !prefetchedEntities.contains(ref.entity) { try prefetch(ref.entity) }
            if let found = prefetched[StoredKey(entity: ref.entity, key: key)] { return found }
        }
        if let cached = cache[ExactText(ref.id)] { return cached }
        let object: ObjectData?
        if let key = ref.key, store.schema.entity(named: ref.entity) != nil {
            object = try store.readObject(entity: ref.entity, key: key)
        } else {
            object = try store.readObject(id: ref.id)
        }
        if let object { cache[ExactText(object.id)] = object }
        return object
    }

    /// The object read whole, when `data` was read with only some of its properties (a
    /// migration reads those its expressions use, a prefetch no to-many lists): a property it
    /// lacks is then one not read, not one without a value.
    package func wholeObject(ifPartial data: ObjectData) throws -> ObjectData? {
        guard data.isPartial, let key = data.key else { return nil }
        let stored = StoredKey(entity: data.entity, key: key)
        if let known = wholeObjects[stored] { return known }
        let whole = try store.readObject(entity: data.entity, key: key)
        wholeObjects[stored] = whole
        return whole
    }
    /// Objects read whole because a partial one lacked a property, so each is read once (a few:
    /// objects may hold large blobs, and a batch mostly asks again for the same few targets).
    private var wholeObjects = BoundedCache<StoredKey, ObjectData>(capacity: 256)

    /// Whether an entity of the store's schema has a property of that name (looked up in the
    /// graph's cache: asked per value a policy reads).
    package func has(_ key: String, in entity: String) -> Bool {
        property(key, of: entity) != nil
    }

    /// The keys of an object of the store's schema.
    package func propertyNames(of object: ObjectRef) -> [String]? {
        store.schema.propertyNames(ofEntity: object.entity)
    }

    /// The attribute's type in the store's schema.
    package func attributeType(of object: ObjectRef, key: String) -> AttributeType? {
        guard case .attribute(let attribute)? = property(key, of: object.entity) else { return nil }
        return attribute.type
    }

    /// The value of a key path step on a stored object, read from its row.
    package func value(of object: ObjectRef, key: String) throws -> EvalValue? {
        guard let data = try load(object), let property = property(key, of: data.entity) else { return nil }
        switch property {
        case .attribute(let attribute):
            if attribute.isTransient { return .null }
            if let value = data.attributes[key] { return .scalar(try readable(value, of: attribute)) }
            // Not read with the object (a migration reads the attributes its expressions name):
            // read from its row now, rather than taken for nil.
            if let whole = try wholeObject(ifPartial: data) { return .scalar(try readable(whole.attributes[key] ?? .null, of: attribute)) }
            return .null
        case .relationship(let relationship):
            var read = (ids: data.relationships[key], keys: data.relatedKeys[key])
            if read.ids == nil, let whole = try wholeObject(ifPartial: data) { read = (whole.relationships[key], whole.relatedKeys[key]) }
            let ids = read.ids ?? [], keys = read.keys ?? []
            var refs: [EvalValue] = []
            refs.reserveCapacity(ids.count)
            for (index, id) in ids.enumerated() {
                if index < keys.count {
                    refs.append(.object(reference(entity: keys[index].entity, id: id, key: keys[index].key)))
                } else {
                    let located = try store.locate(id: id)
                    refs.append(.object(reference(entity: located?.entity ?? relationship.destination, id: id, key: located?.key)))
                }
            }
            return relationship.isToMany ? .collection(refs, ordered: relationship.isOrdered) : (refs.first ?? .null)
        }
    }

    /// A to-many relationship's count from the object's list of ids (`value(of:key:)` makes a
    /// reference of each).
    package func count(of object: ObjectRef, key: String) throws -> Int? {
        guard let data = try load(object), case .relationship(let relationship)? = property(key, of: data.entity), relationship.isToMany else { return nil }
        if let ids = data.relationships[key] { return ids.count }
        return try wholeObject(ifPartial: data)?.relationships[key]?.count
    }

    /// Every stored object of an entity and its sub-entities.
    package func objects(of entity: String) throws -> [ObjectRef] {
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
