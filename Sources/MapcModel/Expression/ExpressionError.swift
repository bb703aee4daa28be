import Foundation
import MapcFoundation
/// A problem with an expression (parse, check or evaluation), located in its text.
public struct ExpressionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// Where in the expression.
    public var range: SourceRange
    /// A suggested fix.
    public var fix: String?

    /// Creates an error.
    public init(_ message: String, at range: SourceRange, fix: String? = nil) {
        self.message = message
        self.range = range
        self.fix = fix
    }

    public var description: String { fix.map { "\(message); \($0)" } ?? message }

    /// The error as a diagnostic located in the expression's file.
    public func diagnostic(in source: ExpressionSource) -> Diagnostic {
        source.diagnostic(.error, message, at: range, fix: fix)
    }
}

extension ExpressionError: LocalizedError {
    public var errorDescription: String? { description }
}
