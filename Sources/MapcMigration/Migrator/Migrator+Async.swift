import Foundation
import Synchronization
import MapcFoundation
import MapcModel

extension Migrator {
    /// `migrate(storeAt:from:to:options:progress:)` off the caller's thread: on a thread of its
    /// own (a migration can block for minutes, which a thread of Swift's cooperative pool must
    /// not), resuming the caller when it ends. Cancelling the task stops the migration between
    /// batches, leaving the store untouched (`MigrationError.cancelled`).
    public func migrate(storeAt url: URL, from claimed: String? = nil, to version: String? = nil, options: MigrationOptions = MigrationOptions(),
                        progress: (@Sendable (MigrationProgress) -> Void)? = nil) async throws -> MigrationOutcome {
        try await offThread(options) { options in try self.migrate(storeAt: url, from: claimed, to: version, options: options) { progress?($0) } }
    }

    /// `migrate(_:options:progress:)` of a plan, off the caller's thread, as
    /// `migrate(storeAt:)`'s `async` form runs (the plan, check, migrate flow of an app's
    /// startup, which blocked a thread of the cooperative pool and which `Task.cancel()` did not stop).
    public func migrate(_ plan: MigrationPlan, options: MigrationOptions = MigrationOptions(),
                        progress: (@Sendable (MigrationProgress) -> Void)? = nil) async throws -> MigrationOutcome {
        try await offThread(options) { options in try self.migrate(plan, options: options) { progress?($0) } }
    }

    /// `status(ofStoreAt:)` off the caller's thread: it reads the whole file (SQLite's quick
    /// check) and may wait for another process's lock, which a thread of Swift's cooperative
    /// pool must not. A task cancelled before it starts throws `MigrationError.cancelled`.
    public func status(ofStoreAt url: URL) async throws -> StoreStatus {
        try await offThread { try self.status(ofStoreAt: url) }
    }

    /// `version(ofStoreAt:claimed:)` off the caller's thread, as `status(ofStoreAt:)`'s `async` form.
    public func version(ofStoreAt url: URL, claimed: String? = nil) async throws -> Schema {
        try await offThread { try self.version(ofStoreAt: url, claimed: claimed) }
    }

    /// `plan(forStoreAt:from:to:)` off the caller's thread, as `status(ofStoreAt:)`'s `async` form.
    public func plan(forStoreAt url: URL, from claimed: String? = nil, to version: String? = nil) async throws -> MigrationPlan {
        try await offThread { try self.plan(forStoreAt: url, from: claimed, to: version) }
    }

    /// Runs a migration on a thread of its own, resuming the caller when it ends; cancelling the
    /// task sets what `options.isCancelled` answers (with whatever it answered already). A run
    /// cancelled while it waited for another process's lock on the store is `cancelled`, not
    /// "in use": the caller asked it to stop, and it changed nothing.
    private func offThread(_ options: MigrationOptions, _ body: @escaping @Sendable (MigrationOptions) throws -> MigrationOutcome) async throws -> MigrationOutcome {
        let cancelled = CancellationFlag()
        var options = options
        let earlier = options.isCancelled
        options.isCancelled = { cancelled.isSet || earlier() }
        let frozen = options
        return try await withTaskCancellationHandler {
            try await offThread {
                do { return try body(frozen) } catch MapcError.storeInUse where cancelled.isSet { throw MigrationError.cancelled }
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// Runs `body` on a thread of its own, resuming the caller with its result.
    private func offThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        if Task.isCancelled { throw MigrationError.cancelled }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            let work: @Sendable () -> Void = { continuation.resume(with: Swift.Result { try body() }) }
            // With no thread to be had (the system's limit), on this one: slower, never stuck.
            if !DetachedThread.start(work) { work() }
        }
    }
}

/// A flag one task sets and another reads.
private final class CancellationFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}
