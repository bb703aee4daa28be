import MapcFoundation
/// A span of an expression's text, in Unicode scalar offsets from its start (end exclusive).
package struct SourceRange: Sendable, Hashable {
    /// First scalar of the span.
    package var start: Int
    /// One past the last scalar.
    package var end: Int

    /// Creates a range.
    package init(_ start: Int, _ end: Int) {
        self.start = start
        self.end = max(start, end)
    }

    /// The smallest range covering both.
    package func union(_ other: SourceRange) -> SourceRange {
        SourceRange(min(start, other.start), max(end, other.end))
    }

    /// The number of scalars covered, at least 1 (for carets).
    package var length: Int { max(1, end - start) }
}

/// The text of one expression and where it stands in its file, so diagnostics can say
/// `mapping.yaml:12:17` rather than "offset 4".
package struct ExpressionSource: Sendable {
    /// The expression's text.
    package let text: String
    /// Where the text's first scalar stands in its file; for expressions typed on a command
    /// line, a pseudo-file such as `<expression>` at 1:1.
    package let origin: FileLocation
    /// Whether the file wrote the text in YAML quotes, which YAML removes: `kind: "book"` is the
    /// expression `book`, a key; the text "book" is written `kind: '"book"'`.
    package var quotedInFile = false
    /// Where each scalar of the text stands in its file, when YAML wrote it otherwise than
    /// scalar for scalar (escapes, `''`, folded lines, a block's indentation, a tag before it).
    package var placement: YAMLScalarPlacement?

    /// Creates a source for an expression that starts at `origin`.
    package init(text: String, origin: FileLocation = FileLocation(path: "<expression>", line: 1, column: 1)) {
        self.text = text
        self.origin = origin
    }

    /// How to write `text` as text where YAML took its quotes away (`kind: "book"` is the key
    /// `book`): the one wording, for a bare key and for any expression.
    package static func quotingHint(_ text: String) -> String {
        "YAML removed the quotes around \(text); for the text \"\(text)\", quote it inside YAML's quotes: '\"\(text)\"'"
    }

    /// `diagnostics` with the quoting hint added to the first error, when YAML wrote this
    /// expression in quotes and it reads as text meant as a value (no `$`, quotes, calls or
    /// lines of its own): `via: "v10-skip"` read the keys v10 and skip, `"a b"` stopped at b,
    /// each said without why.
    package func withQuotingHint(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        // Not for text with a backslash: inside the expression's quotes it would be an escape
        // (`'"50\50"'` is "50(").
        guard quotedInFile, !text.isEmpty, !text.contains(where: { "$\"'(\n{[\\".contains($0) }),
              let first = diagnostics.firstIndex(where: { $0.severity == .error }),
              !diagnostics.contains(where: { $0.fix?.contains("YAML removed the quotes") == true }) else { return diagnostics }
        var hinted = diagnostics
        hinted[first].fix = (hinted[first].fix.map { "\($0); or, " } ?? "") + Self.quotingHint(text)
        return hinted
    }

    /// The text a range of the expression covers.
    package func text(of range: SourceRange) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(range.start).prefix(range.length)))
    }

    /// The file location of a scalar offset. Line breaks inside the text advance the line, so
    /// multi-line block scalars map exactly when their lines are not re-indented.
    package func location(of offset: Int) -> FileLocation {
        if let spans = placement?.spans, !spans.isEmpty {
            return offset < spans.count ? spans[max(0, offset)].start : spans[spans.count - 1].end
        }
        var line = origin.line
        var column = origin.column
        for (index, scalar) in text.unicodeScalars.enumerated() {
            if index >= offset { break }
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
        }
        return FileLocation(path: origin.path, line: line, column: column)
    }

    /// A diagnostic at a range of the text.
    package func diagnostic(_ severity: Severity, _ message: String, at range: SourceRange, fix: String? = nil) -> Diagnostic {
        Diagnostic(severity, message, at: location(of: range.start), length: fileLength(of: range), fix: fix)
    }

    /// How many scalars of the file a range of the text covers (an escape is several), where it
    /// stays on one line; its length in the text otherwise.
    private func fileLength(of range: SourceRange) -> Int {
        guard let spans = placement?.spans, range.start >= 0, range.start < spans.count, range.end >= 1 else { return range.length }
        let start = spans[range.start].start, end = spans[min(range.end, spans.count) - 1].end
        return start.line == end.line && end.column > start.column ? end.column - start.column : range.length
    }

    /// The text as a source file, so renderers can quote it when it is not part of a file.
    package var standaloneFile: SourceFile { SourceFile(path: origin.path, text: text) }
}

extension ExpressionSource {
    /// Parses the text; a failure is a diagnostic located in the file.
    package func parse() -> Result<Expr, Diagnostic> {
        ExpressionParser.parse(text).mapError { $0.diagnostic(in: self) }
    }
}
