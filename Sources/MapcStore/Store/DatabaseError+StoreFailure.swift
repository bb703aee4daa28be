internal import GRDB
import MapcModel

/// SQLite's failures are the store's: in a `$manager` lookup, an interrupted or failed statement
/// reaches the run as itself (a cancellation, a full disk), not as the expression's failure.
extension DatabaseError: StoreFailure {}
