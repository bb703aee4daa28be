import Foundation

/// How serious a diagnostic is.
public enum Severity: String, Sendable, Codable, Comparable {
    /// Information attached to another diagnostic (where something was declared, say).
    case note
    /// Something that works but probably is not what was meant; a run goes ahead.
    case warning
    /// Something that stops the file from being used until it is fixed.
    case error

    private var rank: Int {
        switch self {
        case .note: return 0
        case .warning: return 1
        case .error: return 2
        }
    }

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// One problem found in an input file: what is wrong, where, and how to fix it.
public struct Diagnostic: Sendable, Hashable, Error, CustomStringConvertible {
    /// Error, warning or note.
    public var severity: Severity
    /// What is wrong, in one sentence.
    public var message: String
    /// Where; nil when the problem concerns a whole file that could not be read.
    public var location: FileLocation?
    /// How many columns the caret underline spans (at least 1).
    public var length: Int
    /// A suggested fix, printed after the message (for example "did you mean 'title'?").
    public var fix: String?

    /// Creates a diagnostic.
    public init(_ severity: Severity, _ message: String, at location: FileLocation?, length: Int = 1, fix: String? = nil) {
        self.severity = severity
        self.message = Self.bounded(message)
        self.location = location
        self.length = max(1, length)
        self.fix = fix.map(Self.bounded)
    }

    /// The longest message or fix kept whole, in Unicode scalars: one quotes what a file holds,
    /// and a value of a million characters (or a whole file read as one scalar) was sent whole.
    static let maxTextLength = 2_000

    /// `text` within `maxTextLength`: its start and end, with how much was left out between.
    static func bounded(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > maxTextLength else { return text }
        let head = scalars.prefix(maxTextLength - 500), tail = scalars.suffix(400)
        return String(String.UnicodeScalarView(head)) + " … (\(scalars.count - head.count - tail.count) characters left out) … " + String(String.UnicodeScalarView(tail))
    }

    /// Creates an error diagnostic.
    public static func error(_ message: String, at location: FileLocation?, length: Int = 1, fix: String? = nil) -> Diagnostic {
        Diagnostic(.error, message, at: location, length: length, fix: fix)
    }

    /// Creates a warning diagnostic.
    public static func warning(_ message: String, at location: FileLocation?, length: Int = 1, fix: String? = nil) -> Diagnostic {
        Diagnostic(.warning, message, at: location, length: length, fix: fix)
    }

    /// The one-line form: `path:line:col: error: message (fix)`.
    public var description: String {
        var text = location.map { "\($0): " } ?? ""
        text += "\(severity.rawValue): \(message)"
        if let fix { text += "; \(fix)" }
        return text
    }
}

/// A set of diagnostics thrown together, so a file with many problems reports all of them at once.
public struct DiagnosticsError: Error, Sendable, CustomStringConvertible {
    /// The diagnostics, in file order.
    public var diagnostics: [Diagnostic]

    /// Creates the error.
    public init(_ diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

extension Array where Element == Diagnostic {
    /// Whether any diagnostic is an error.
    public var hasErrors: Bool { contains { $0.severity == .error } }
}
