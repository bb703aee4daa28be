import Foundation

extension String {
    /// The name as a SQL identifier: in double quotes, each double quote in it doubled, so that
    /// any name (one a store or an app chose: `app"cache`) names itself and nothing else. GRDB's
    /// `quotedDatabaseIdentifier` only wraps the name in quotes, which such a name ends early.
    package var quotedSQLIdentifier: String {
        // Nearly every name has no quote: quoted without a search-and-replace.
        utf8.contains(UInt8(ascii: "\"")) ? "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\"" : "\"" + self + "\""
    }
}
