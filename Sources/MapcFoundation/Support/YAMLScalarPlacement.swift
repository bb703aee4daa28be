package import Yams

/// Where each Unicode scalar of a YAML scalar's value stands in its file.
///
/// YAML changes a value's text on the way in: quotes are removed, `''` and escapes such as
/// `\u00e9` become one character, line breaks fold into spaces, a block scalar's indentation is
/// dropped, and a tag or an anchor may stand before it. An offset into the value (where an
/// expression's error is) is therefore not an offset from where the node starts; this maps one to
/// the other by walking the file's text beside the value, so that diagnostics, carets and an
/// editor's quick fixes land on the characters they name.
package struct YAMLScalarPlacement: Sendable {
    /// For each scalar of the value: where its text starts in the file, and where it ends
    /// (exclusive: the column after it).
    package let spans: [(start: FileLocation, end: FileLocation)]

    /// The placement of the value's text from its scalar `offset` on (an expression quoted
    /// inside another, such as a predicate given to `FILTER` as a string).
    package func dropping(first offset: Int) -> YAMLScalarPlacement {
        YAMLScalarPlacement(spans: Array(spans.dropFirst(offset)))
    }

    private init(spans: [(start: FileLocation, end: FileLocation)]) {
        self.spans = spans
    }

    /// The placement of a scalar node's value, or nil when its text cannot be followed in the
    /// file (no position, a value the walk does not recognise): callers then count from the
    /// node's start, as for a plain one-line value.
    package init?(of node: Node, in source: SourceFile) {
        guard let scalar = node.scalar, let mark = node.mark.map(source.place(of:)) else { return nil }
        var reader = Reader(source: source, line: mark.line, column: mark.column)
        // Node properties (a tag, an anchor) before the value.
        while let next = reader.peek(), next == "!" || next == "&" {
            while let scalar = reader.peek(), !Reader.isWhitespace(scalar) { reader.advance() }
            reader.skipWhitespace()
        }
        switch scalar.style {
        case .singleQuoted, .doubleQuoted:
            guard reader.peek() == (scalar.style == .singleQuoted ? "'" : "\"") else { return nil }
            reader.advance()
        case .literal, .folded:
            // The header (`|`, `>-`, `|2`) and the rest of its line.
            while let next = reader.peek(), next != "\n" { reader.advance() }
        default: break
        }
        var spans: [(start: FileLocation, end: FileLocation)] = []
        spans.reserveCapacity(scalar.string.unicodeScalars.count)
        let value = Array(scalar.string.unicodeScalars)
        var index = 0
        while index < value.count {
            let wanted = value[index]
            guard let next = reader.peek() else { return nil }
            let start = reader.location
            if scalar.style == .doubleQuoted, next == "\\" {
                reader.advance()
                guard let escape = reader.peek() else { return nil }
                if escape == "\n" || escape == "\r" {
                    // A line continuation: no character of the value.
                    reader.skipWhitespace()
                    continue
                }
                let digits = escape == "x" ? 2 : escape == "u" ? 4 : escape == "U" ? 8 : 0
                for _ in 0...digits { reader.advance() }
            } else if scalar.style == .singleQuoted, wanted == "'", next == "'" {
                reader.advance()
                guard reader.peek() == "'" else { return nil }
                reader.advance()
            } else if Reader.isWhitespace(wanted) {
                // A space or line break of the value, perhaps folded from a break of the file:
                // one whitespace scalar of the file (what follows it is skipped below).
                if Reader.isWhitespace(next) { reader.advance() }
            } else {
                // Indentation and folded breaks stand between the value's characters.
                if Reader.isWhitespace(next) {
                    reader.skipWhitespace()
                    continue
                }
                guard next == wanted else { return nil }
                reader.advance()
            }
            spans.append((start, reader.location))
            index += 1
        }
        self.spans = spans
    }

    /// The lines of a document that continue a value begun on an earlier line (a block
    /// scalar's lines, a value folded over lines): text there is a value's, never a key. An editor
    /// completes there as in an expression.
    package static func continuationLines(in document: YAMLDocument) -> Set<Int> {
        var lines = Set<Int>()
        var pending = document.root.map { [$0] } ?? []
        var visited = 0
        while let node = pending.popLast(), visited < 1_000_000 {
            visited += 1
            switch node {
            case .scalar:
                guard let first = node.mark.map({ document.source.place(of: $0).line }), let last = YAMLScalarPlacement(of: node, in: document.source)?.spans.last?.end.line, last > first else { continue }
                lines.formUnion((first + 1)...last)
            case .mapping(let mapping):
                pending += mapping.map(\.value)
            case .sequence(let sequence):
                pending += Array(sequence)
            case .alias:
                continue
            }
        }
        return lines
    }

    /// The file's text from a position on, scalar by scalar, lines joined by `\n` (a `\r` before
    /// it dropped, as `SourceFile` does).
    private struct Reader {
        let source: SourceFile
        var line: Int
        var column: Int
        private var current: [Unicode.Scalar]

        init(source: SourceFile, line: Int, column: Int) {
            self.source = source
            self.line = line
            self.column = column
            current = source.line(line).map { Array($0.unicodeScalars) } ?? []
        }

        var location: FileLocation { FileLocation(path: source.path, line: line, column: column) }

        func peek() -> Unicode.Scalar? {
            if column - 1 < current.count { return current[column - 1] }
            return source.line(line + 1) == nil ? nil : "\n"
        }

        mutating func advance() {
            if column - 1 < current.count {
                column += 1
            } else if let next = source.line(line + 1) {
                line += 1
                column = 1
                current = Array(next.unicodeScalars)
            }
        }

        mutating func skipWhitespace() {
            while let next = peek(), Self.isWhitespace(next) { advance() }
        }

        static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" }
    }
}
