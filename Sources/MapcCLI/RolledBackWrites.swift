import Foundation
import MapcKit

/// Stores whose unfinished write (a hot `-journal` a stopped writer left) SQLite rolled back as
/// mapc opened them. Said as a note on standard error by every command, except where `run`
/// collects them: there each is a note of its store's outcome (its JSON's `notes`, a batch's
/// notes, a worker's report), which a batch said nowhere.
enum RolledBackWrites {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var collecting = false
    nonisolated(unsafe) private static var stores: Set<String> = []

    /// The note, for a store's path.
    static func note(_ path: String) -> String {
        "\(path) had an unfinished write (\(path)-journal, left by a writer that was stopped) that SQLite rolled back as mapc opened it, "
            + "as it does for any program that opens the store: its file changed, and it holds what its last committed write left"
    }

    /// Collects the stores from here on, instead of saying them (`run`).
    static func collect() { lock.withLock { collecting = true } }

    /// Told a store SQLite rolled back: collected, or said at once.
    static func rolledBack(_ path: String) {
        let collected = lock.withLock { () -> Bool in
            guard collecting else { return false }
            stores.insert(key(path))
            return true
        }
        if !collected { Console.errText("note: \(note(path))\n") }
    }

    /// The note of the store at `path` if it was rolled back since it was last asked (then
    /// forgotten), for its outcome's notes; none otherwise.
    static func take(_ path: String) -> [String] {
        lock.withLock { stores.remove(key(path)) != nil } ? [note(path)] : []
    }

    /// One store's one name, however it was given (`a.db`, `./a.db`, its absolute path).
    private static func key(_ path: String) -> String { Files.fileURL(path).standardizedFileURL.path }
}
