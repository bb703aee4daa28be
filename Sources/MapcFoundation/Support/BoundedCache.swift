/// A dictionary that empties itself when it reaches its capacity: bounded memory at constant cost
/// per operation, for caches whose misses are cheap compared with unbounded growth.
package struct BoundedCache<Key: Hashable, Cached> {
    let capacity: Int
    private var storage: [Key: Cached] = [:]

    package init(capacity: Int) { self.capacity = capacity }

    package subscript(key: Key) -> Cached? {
        get { storage[key] }
        set {
            if newValue != nil, storage[key] == nil, storage.count >= capacity { storage.removeAll(keepingCapacity: true) }
            storage[key] = newValue
        }
    }

    var count: Int { storage.count }
}


extension BoundedCache: Sendable where Key: Sendable, Cached: Sendable {}
