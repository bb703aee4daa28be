/// Errors that are not tied to a position in a source file: unreadable files, store problems,
/// bad data. Each message says what is wrong, where, and how to fix it.
public enum MapcError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A file could not be read or is not acceptable as input.
    case input(String)
    /// A data file (JSON) holds values that do not fit the schema.
    case data([String])
    /// The store cannot be opened, is not a mapc store, or does not match the expected schema.
    case store(String)
    /// The store is in use: another process holds a lock on it (an app reading or writing it),
    /// or another migration of it is running. Nothing was changed; trying again later may succeed.
    case storeInUse(String)
    /// The store matches no version of the schemas (it may be a store of another model, or of a
    /// version whose schema file is missing). Nothing was changed; it needs the schema files of
    /// the version that wrote it.
    case unknownVersion(String)
    /// A requested version or entity does not exist.
    case notFound(String)
    /// A file is in the way, missing, or cannot be written (not a problem of its content).
    case file(String)

    public var description: String {
        switch self {
        case .input(let message), .store(let message), .storeInUse(let message), .unknownVersion(let message), .notFound(let message), .file(let message):
            return message
        case .data(let problems):
            return problems.joined(separator: "\n")
        }
    }
}
