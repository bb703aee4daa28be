import Foundation
import Synchronization
import MapcFoundation

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

    /// Runs a migration on a thread of its own, resuming the caller when it ends; cancelling the
    /// task sets what `options.isCancelled` answers (with whatever it answered already).
    private func offThread(_ options: MigrationOptions, _ body: @escaping @Sendable (MigrationOptions) throws -> MigrationOutcome) async throws -> MigrationOutcome {
        let cancelled = CancellationFlag()
        var options = options
        let earlier = options.isCancelled
        options.isCancelled = { cancelled.isSet || earlier() }
        let frozen = options
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<MigrationOutcome, any Error>) in
                let work: @Sendable () -> Void = { continuation.resume(with: Result { try body(frozen) }) }
                // With no thread to be had (the system's limit), on this one: slower, never stuck.
                if !DetachedThread.start(work) { work() }
            }
        } onCancel: {
            cancelled.set()
        }
    }
}

/// A flag one task sets and another reads.
private final class CancellationFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}
