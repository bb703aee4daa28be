/// Text written in pieces: small pieces gathered into writes of about 64 KiB, a large one (an
/// object with a value of hundreds of MB) passed on as it is, never copied into the gathering.
package struct GatheredText {
    /// The size of a write of gathered pieces, and of a piece passed on alone.
    static let writeSize = 1 << 16
    private var pending = ""
    private let write: (String) throws -> Void

    /// Gathers text for `write`.
    package init(_ write: @escaping (String) throws -> Void) {
        self.write = write
    }

    /// Adds a piece: gathered, or written with what was gathered before it.
    package mutating func add(_ piece: String) throws {
        if piece.utf8.count >= Self.writeSize {
            try finish()
            try write(piece)
            return
        }
        pending += piece
        if pending.utf8.count >= Self.writeSize { try finish() }
    }

    /// Writes what is gathered.
    package mutating func finish() throws {
        guard !pending.isEmpty else { return }
        try write(pending)
        pending = ""
    }
}
