internal import GRDB

extension Store {
    /// The two numbers an app may keep in a SQLite file's header (`PRAGMA application_id`, which
    /// says what kind of file it is, and `PRAGMA user_version`, an app's own schema count): not
    /// data of any object, but the app's, so a migrated store keeps them.
    package struct HeaderFields: Sendable, Equatable {
        var applicationID: Int32
        var userVersion: Int32
    }

    /// The header fields of this store's file.
    package func headerFields() throws -> HeaderFields {
        try reading { db in
            HeaderFields(applicationID: try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                         userVersion: try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0)
        }
    }

    /// Writes header fields into this store's file (each only when not 0, which a new file has).
    package func setHeaderFields(_ fields: HeaderFields) throws {
        guard fields.applicationID != 0 || fields.userVersion != 0 else { return }
        try database.writeWithoutTransaction { db in
            // Integers, not text from the store: formatted into the pragma, which takes no argument.
            if fields.applicationID != 0 { try db.execute(sql: "PRAGMA application_id = \(fields.applicationID)") }
            if fields.userVersion != 0 { try db.execute(sql: "PRAGMA user_version = \(fields.userVersion)") }
        }
    }
}
