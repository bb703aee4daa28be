import Foundation
import MapcFoundation
/// A problem with an expression (parse, check or evaluation), located in its text.
package struct ExpressionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    package var message: String
    /// Where in the expression.
    package var range: SourceRange
    /// A suggested fix.
    package var fix: String?

    /// Creates an error.
    package init(_ message: String, at range: SourceRange, fix: String? = nil) {
        self.message = message
        self.range = range
        self.fix = fix
    }

    package var description: String { fix.map { "\(message); \($0)" } ?? message }

    /// The error as a diagnostic located in the expression's file.
    package func diagnostic(in source: ExpressionSource) -> Diagnostic {
        source.diagnostic(.error, message, at: range, fix: fix)
    }
}

extension ExpressionError: LocalizedError {
    package var errorDescription: String? { description }
}
