extension String {
    /// The text's Unicode scalars as `U+0065 U+0301`: what tells apart texts that read alike.
    package var scalarCodes: String {
        unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true).leftPadded(to: 4) }.joined(separator: " ")
    }

    private func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    /// Whether two texts are the same Unicode scalars: as SQLite's `BINARY` collation (a unique
    /// index on an object's id) and Core Data's `isEqual:` compare them. Swift's `==` takes
    /// canonically equivalent text for equal ("é" as one scalar and "e" with a combining accent),
    /// which made two objects' ids one.
    package func isExactly(_ other: String) -> Bool {
        var this = self, that = other
        return this.withUTF8 { a in that.withUTF8 { b in a.count == b.count && a.elementsEqual(b) } }
    }
}

/// Text as a dictionary key compared exactly (`String.isExactly`): an object's id. Its hash is
/// Swift's, which canonically equivalent texts share, so it is coarser than equality, never finer.
package struct ExactText: Hashable, Comparable, Sendable {
    /// The text.
    package let text: String

    /// The key of `text`.
    package init(_ text: String) { self.text = text }

    package static func == (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.isExactly(rhs.text) }

    package func hash(into hasher: inout Hasher) { hasher.combine(text) }

    /// In the order of their Unicode scalars (a store's `ORDER BY` of UTF-8 text).
    package static func < (lhs: ExactText, rhs: ExactText) -> Bool {
        lhs.text.unicodeScalars.lexicographicallyPrecedes(rhs.text.unicodeScalars)
    }
}
