/// Errors that are not tied to a position in a source file: unreadable files, store problems,
/// bad data. Each message says what is wrong, where, and how to fix it.
public enum MapcError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A file could not be read or is not acceptable as input.
    case input(String)
    /// A data file (JSON) holds values that do not fit the schema.
    case data([String])
    /// The store cannot be opened, is not a mapc store, or does not match the expected schema.
    case store(String)
    /// A requested version or entity does not exist.
    case notFound(String)
    /// A file is in the way, missing, or cannot be written (not a problem of its content).
    case file(String)

    public var description: String {
        switch self {
        case .input(let message), .store(let message), .notFound(let message), .file(let message):
            return message
        case .data(let problems):
            return problems.joined(separator: "\n")
        }
    }
}
