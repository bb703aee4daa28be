/// How many objects each entity (or each entity mapping) has, in a meaningful order: a store's
/// entities as its schema lists them, a step's mappings as its file does. Read in order or by
/// name (`counts["Note"]`); prints as `Note 4, Attachment 3`.
public struct ObjectCounts: Sendable, Equatable, RandomAccessCollection, CustomStringConvertible {
    /// One name and its count.
    public struct Entry: Sendable, Equatable {
        /// The entity's or entity mapping's name.
        public var name: String
        /// Its objects.
        public var count: Int

        /// Creates an entry.
        public init(name: String, count: Int) {
            self.name = name
            self.count = count
        }
    }

    /// The entries, in order.
    public private(set) var entries: [Entry]

    /// Counts from names and counts, in order.
    public init(_ pairs: [(name: String, count: Int)] = []) {
        entries = pairs.map { Entry(name: $0.name, count: $0.count) }
    }

    /// The count of a name, or nil when it is not counted.
    public subscript(name: String) -> Int? {
        entries.first { $0.name == name }?.count
    }

    /// The entry at a position.
    public subscript(position: Int) -> Entry { entries[position] }
    /// The first position.
    public var startIndex: Int { entries.startIndex }
    /// The position after the last.
    public var endIndex: Int { entries.endIndex }
    /// Every count added up.
    public var total: Int { entries.reduce(0) { $0 + $1.count } }

    /// `Note 4, Attachment 3`.
    public var description: String {
        entries.map { "\($0.name) \($0.count)" }.joined(separator: ", ")
    }

    /// These counts followed by others'.
    public static func + (lhs: ObjectCounts, rhs: ObjectCounts) -> ObjectCounts {
        var joined = lhs
        joined.entries += rhs.entries
        return joined
    }
}
