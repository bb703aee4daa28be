import Foundation

/// Prints diagnostics the way compilers do: the one-line form, the source line, and a caret.
public struct DiagnosticRenderer: Sendable {
    private var sources: [String: SourceFile] = [:]

    /// Creates a renderer that can quote lines from the given files.
    public init(sources: [SourceFile] = []) {
        for source in sources { self.sources[source.path] = source }
    }

    /// Makes a file's lines available for quoting.
    public mutating func add(_ source: SourceFile) { sources[source.path] = source }

    /// The full text of one diagnostic, ending in a newline.
    public func render(_ diagnostic: Diagnostic) -> String {
        var lines: [FileLine: [Unicode.Scalar]] = [:]
        return render(diagnostic, lines: &lines)
    }

    /// A line of a file, to keep its scalars while diagnostics on it are rendered.
    private struct FileLine: Hashable {
        var path: String
        var line: Int
    }

    /// `render(_:)`, each line's scalars taken once for all the diagnostics on it (10,000 on one
    /// 400 KB line took each its own copy: quadratic).
    private func render(_ diagnostic: Diagnostic, lines: inout [FileLine: [Unicode.Scalar]]) -> String {
        var text = TerminalText.visible(diagnostic.description) + "\n"
        if let location = diagnostic.location, let scalars = lines[FileLine(path: location.path, line: location.line)]
            ?? sources[location.path]?.line(location.line).map({ Array($0.unicodeScalars) }) {
            lines[FileLine(path: location.path, line: location.line)] = scalars
            // A long line (a hostile file's 70,000-character key) is shown as a window around the
            // column, marked with "…" where it is cut.
            let column = min(max(0, location.column - 1), scalars.count)
            let start = scalars.count > Self.maximumWidth ? max(0, min(column - Self.maximumWidth / 3, scalars.count - Self.maximumWidth)) : 0
            let end = min(scalars.count, start + Self.maximumWidth)
            let lead = start > 0 ? "…" : ""
            // A bidirectional control is shown as what it is (`TerminalText`), its carets as wide.
            text += lead + scalars[start..<end].map { TerminalText.visible($0) ?? String($0) }.joined() + (end < scalars.count ? "…" : "") + "\n"
            // Columns count Unicode scalars; tabs stay tabs so the caret lines up in terminals.
            let prefix = (lead.isEmpty ? "" : " ") + scalars[start..<column].map { $0 == "\t" ? "\t" : String(repeating: " ", count: TerminalText.visible($0)?.count ?? 1) }.joined()
            let underlined = scalars[column..<min(end, column + max(1, diagnostic.length))].reduce(0) { $0 + (TerminalText.visible($1)?.count ?? 1) }
            text += prefix + "^" + String(repeating: "~", count: max(0, underlined - 1)) + "\n"
        }
        return text
    }

    /// The widest part of a line shown under a diagnostic, in Unicode scalars.
    static let maximumWidth = 160

    /// All diagnostics, rendered and joined.
    public func render(_ diagnostics: [Diagnostic]) -> String {
        var lines: [FileLine: [Unicode.Scalar]] = [:]
        return diagnostics.map { render($0, lines: &lines) }.joined()
    }

    /// The diagnostics as a JSON array, for editors: severity, message, fix, path, line, column, length.
    public static func json(_ diagnostics: [Diagnostic]) -> String {
        let items: [JSONValue] = diagnostics.map { diagnostic in
            var object: [(String, JSONValue)] = [
                ("severity", .string(diagnostic.severity.rawValue)),
                ("message", .string(diagnostic.message)),
            ]
            if let fix = diagnostic.fix { object.append(("fix", .string(fix))) }
            if let location = diagnostic.location {
                object.append(("path", .string(location.path)))
                object.append(("line", .integer(Int64(location.line))))
                object.append(("column", .integer(Int64(location.column))))
                object.append(("length", .integer(Int64(diagnostic.length))))
            }
            return .object(object)
        }
        return JSONValue.array(items).serialized(pretty: true)
    }
}
