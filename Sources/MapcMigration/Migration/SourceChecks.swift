import Foundation
internal import GRDB
import MapcFoundation
import MapcModel
import MapcStore

/// The checks a migration makes of the store it reads before trusting what it built from it:
/// SQLite's `quick_check` (`Store.checkIntegrity`) and that every row is of an entity the schema
/// has (`Store.checkEveryRowIsRecognised`), then the count of references that lead nowhere
/// (`Store.danglingReferences`), which becomes a note.
///
/// Each reads the whole store, which costs as much as the migration's own reading of it
/// (docs/performance.md). They read only, so they run on a read-only connection of
/// their own, on another thread, while the first step creates its objects, on the machine's
/// second core; `StoreMigration` has the step wait for them before it validates (before it starts,
/// when it runs custom policies), and a failure stops the step at its next batch. Whatever the
/// timing, the store is replaced only after both passed, and a step that failed on a damaged
/// store reports the damage, as when the checks ran first. The fault-injection counter is not
/// disturbed: it numbers writes and syncs, and the checks make none.
final class SourceChecks: @unchecked Sendable {
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    /// Signalled once the checks that make the store's objects trustworthy (integrity, every row
    /// recognised) are done: policy code waits for those only.
    private let trusted = DispatchSemaphore(value: 0)
    /// Guarded by `lock`.
    private var outcome: Result<Void, any Error>?
    /// What the integrity and row checks found (guarded by `lock`).
    private var trustOutcome: Result<Void, any Error>?
    private var store: Store?
    private var stopped = false

    /// What the checks noted: references that lead nowhere (guarded by `lock`; read after `wait`).
    private var foundNotes: [String] = []

    /// Starts the checks of the store at `path`, read with `schema`. References that lead
    /// nowhere become nil, and a note says so.
    init(path: String, schema: Schema) {
        let check: @Sendable () -> Void = { [self] in
            let result = Result<Void, any Error> {
                let store = try Store.open(at: path, schema: schema, readOnly: true)
                defer { try? store.close() }
                try Store.quietSideConnection(store.database)
                try lock.withLock {
                    // Stopped before the connection was open: nothing left to check for.
                    if stopped { throw CancellationError() }
                    self.store = store
                }
                defer { lock.withLock { self.store = nil } }
                try store.verifyIntegrity()
                // An interruption only stops a running statement: one between the checks is seen here.
                try lock.withLock { if stopped { throw CancellationError() } }
                try store.checkEveryRowIsRecognised()
                lock.withLock { trustOutcome = .success(()) }
                trusted.signal()
                try lock.withLock { if stopped { throw CancellationError() } }
                // Such a reference leads an app nowhere (Core Data raises when it fires the fault);
                // real stores have them (batch deletes, relationships without an inverse). The
                // migrated store holds none where there was none to hold: said, not refused.
                let dangling = try store.danglingReferences()
                if dangling.count > 0 {
                    lock.withLock { foundNotes.append("\(dangling.described) became nil: an app reading them finds nothing, and the migrated store has none") }
                }
                let disagreeing = try store.disagreeingDestinationEntities()
                if disagreeing.count > 0 {
                    lock.withLock {
                        foundNotes.append("\(English.count(disagreeing.count, "to-one reference")) whose destination-entity column names another entity than its object (\(disagreeing.listed)): "
                                          + "each is read as the object its key names, whose entity the migrated store's column names (Core Data would look for an object of the entity the column names)")
                    }
                }
                let strays = try store.valuesOfOtherEntities()
                if strays.values > 0 {
                    let examples = strays.columns.prefix(3).joined(separator: "; ") + (strays.columns.count > 3 ? "; …" : "")
                    lock.withLock {
                        foundNotes.append("\(English.count(strays.values, "value")) in columns of another entity than their row's (\(examples)) \(strays.values == 1 ? "is" : "are") left out: "
                                          + "no app reads them (Core Data reads a row's own entity's columns), and the migrated store carries each object's own properties")
                    }
                }
                let files = CoreDataExternalData.beside(store: path)
                let missing = try store.missingExternalFiles(in: files)
                if missing.count > 0 {
                    lock.withLock {
                        foundNotes.append("Core Data's external files missing from \(files.dataFolder), named by \(English.count(missing.count, "value")) (\(missing.listed)): "
                                          + "an app finds no data there, and the migrated store keeps the references; copy the store with its hidden .<name>_SUPPORT folder (a backup taken without it lost them)")
                    }
                }
            }
            let trustUnknown = lock.withLock { () -> Bool in
                outcome = result
                guard trustOutcome == nil else { return false }
                trustOutcome = result
                return true
            }
            if trustUnknown { trusted.signal() }
            finished.signal()
        }
        // Without a thread of their own, the checks run here, before the step starts.
        if !DetachedThread.start(check) { check() }
    }

    /// Whether a check has failed already (asked between batches, so a failure stops the step early).
    var hasFailed: Bool {
        lock.withLock {
            if case .failure? = outcome { return true }
            return false
        }
    }

    /// Waits for the checks that make the store's objects trustworthy (integrity, every row
    /// recognised), and throws what they found; the count of references that lead nowhere may
    /// still run (such a reference reads as none, so policy code need not wait for it).
    func waitUntilTrusted() throws {
        trusted.wait()
        // Left signalled, so that waiting again returns at once.
        trusted.signal()
        try lock.withLock { try trustOutcome?.get() }
    }

    /// Waits for the checks and throws what they found.
    func wait() throws {
        waitUntilFinished()
        try lock.withLock { try outcome?.get() }
    }

    /// What the checks noted, once they are done.
    var notes: [String] {
        waitUntilFinished()
        return lock.withLock { foundNotes }
    }

    private func waitUntilFinished() {
        finished.wait()
        // Left signalled, so that waiting again returns at once.
        finished.signal()
    }

    /// What the checks found, after a step failed with `error`: the store's damage explains (and
    /// is reported instead of) whatever the step ran into, as when the checks ran first. A step
    /// the user cancelled does not wait for a long check: it is interrupted.
    func failure(after error: any Error) -> (any Error)? {
        if case MigrationError.cancelled = error, !hasFailed {
            lock.withLock {
                stopped = true
                if let queue = try? store?.database { queue.interrupt() }
            }
        }
        waitUntilFinished()
        return lock.withLock {
            guard case .failure(let found)? = outcome, !(found is CancellationError),
                  (found as? DatabaseError)?.resultCode != .SQLITE_INTERRUPT else { return nil }
            return found
        }
    }
}
