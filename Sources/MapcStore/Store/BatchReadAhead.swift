import Foundation
package import GRDB
import MapcFoundation
import MapcModel

/// Reads the batches of `Store.forEachBatch` one ahead of the code that works on them, on a thread
/// and a read-only connection of their own: reading the next batch (a fifth of an interpreted
/// migration's time) overlaps the work on this one, on the machine's second core.
///
/// Only for a store no process can commit to while it is read (a migration's source under its
/// write lock, or a step's own temporary file): these reads are not in the caller's read
/// transaction, so they see the same rows only because nobody writes. The connection is used only
/// if the path still names the file the store opened. Memory stays bounded: one batch worked on,
/// at most one read and waiting, one being read. The batches come in key order; a failure to read
/// one comes after the batches before it, and the caller reads on in line from there, so what it
/// reports is what reading in line finds. No file operation is made that the fault-injection
/// counter numbers (as `SourceChecks`): the connection only reads, and does not recover.
final class BatchReadAhead: @unchecked Sendable {
    /// Guards the fields below it, and is signalled when one changes.
    private let condition = NSCondition()
    /// Batches read and not yet taken (at most one), then a failure if the reading failed.
    private var ready: [Result<[ObjectData], any Error>] = []
    /// Whether the reader has put its last batch or its failure.
    private var finished = false
    /// Whether the caller has stopped taking batches: the reader ends at its next step.
    private var stopped = false
    /// Batches the caller is done with, freed by the reader: memory is given back on the thread
    /// that took it (freeing another thread's blocks waits for its allocator's lock, which
    /// cost the working thread a fifth of what reading ahead saved it).
    private var used: [[ObjectData]] = []
    /// The reader's connection while it is open, to interrupt a running read on `stop`.
    private var connection: DatabaseQueue?
    /// Whether the reader's connection opened; nil until it is known.
    private var opened: Bool?
    /// Signalled once, when the reader's thread has closed its connection and ended.
    private let ended = DispatchSemaphore(value: 0)

    /// Starts reading the objects of `entity` in `store` (whose file is at `path`), as
    /// `Store.forEachBatch` with the same arguments would.
    init(store: Store, path: String, entity: String, batchSize: Int, properties: Set<String>?) {
        let started = DetachedThread.start { [self] in
            defer { ended.signal() }
            // A connection that cannot be opened (no file descriptor left), or that would read
            // another file than the store's (the path renamed over meanwhile), only means no
            // reading ahead: the caller reads in line (`isAvailable`).
            let queue: DatabaseQueue
            do {
                queue = try Store.openQueue(path: path, readOnly: true, recovering: false)
            } catch {
                open(nil)
                finish(error)
                return
            }
            defer { try? queue.close() }
            do {
                try Store.quietSideConnection(queue)
                guard let opened = store.fileIdentity, Files.identity(of: path) == opened else {
                    throw MapcError.store("\(path) is no longer the file the migration opened")
                }
            } catch {
                open(nil)
                finish(error)
                return
            }
            guard open(queue) else { return }
            defer { open(nil) }
            do {
                var lastKey: Int64?
                while !isStopped {
                    freeUsed()
                    var batch: [ObjectData] = []
                    batch.reserveCapacity(Swift.min(batchSize, 4_096))
                    let reachedBudget = try queue.read { db in
                        try store.readObjects(ofExactEntity: entity, after: lastKey, limit: batchSize, byteBudget: Store.batchByteBudget, in: db, properties: properties) { batch.append($0) }
                    }
                    guard let last = batch.last?.key else { break }
                    guard put(.success(batch)) else { return }
                    if batch.count < batchSize && !reachedBudget { break }
                    lastKey = last
                }
                finish(nil)
            } catch {
                finish(error)
            }
        }
        if !started {
            // No thread for the reader: the caller reads in line (`isAvailable`).
            open(nil)
            finish(nil)
            ended.signal()
        }
    }

    /// Whether the reader's connection is open (waiting until that is known); when not, the
    /// caller reads in line and `next` is not called.
    func isAvailable() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while opened == nil { condition.wait() }
        return opened == true
    }

    /// The next batch, once it is read; nil after the last. Throws what stopped the reading.
    func next() throws -> [ObjectData]? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !finished { condition.wait() }
        guard !ready.isEmpty else { return nil }
        let result = ready.removeFirst()
        condition.broadcast()
        return try result.get()
    }

    /// Hands a batch back once the caller is done with it, leaving `batch` empty: when nothing
    /// else holds its objects, the reader frees them before its next read (the last ones, given
    /// back after its last read, are freed with the reader).
    func giveBack(_ batch: inout [ObjectData]) {
        var taken: [ObjectData] = []
        swap(&taken, &batch)
        condition.withLock { used.append(taken) }
    }

    /// Stops the reading (interrupting a read under way) and waits until its connection is
    /// closed. Called once, when the caller is done, whether it took every batch or not.
    func stop() {
        condition.lock()
        stopped = true
        connection?.interrupt()
        condition.broadcast()
        condition.unlock()
        ended.wait()
    }

    /// Whether the caller has stopped taking batches.
    private var isStopped: Bool {
        condition.withLock { stopped }
    }

    /// Records the open connection (nil when it could not be opened, or once it closes); false
    /// when the caller has stopped already.
    @discardableResult
    private func open(_ queue: DatabaseQueue?) -> Bool {
        condition.withLock {
            connection = queue
            if opened == nil { opened = queue != nil }
            condition.broadcast()
            return !stopped
        }
    }

    /// Frees the batches given back (outside the lock).
    private func freeUsed() {
        var batches: [[ObjectData]] = []
        condition.withLock { swap(&batches, &used) }
        batches.removeAll()
    }

    /// Hands a batch over once the previous one is taken; false when the caller has stopped.
    private func put(_ batch: Result<[ObjectData], any Error>) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !ready.isEmpty && !stopped { condition.wait() }
        guard !stopped else { return false }
        ready.append(batch)
        condition.broadcast()
        return true
    }

    /// Marks the end of the reading, after the batches handed over, with its failure if any.
    private func finish(_ failure: (any Error)?) {
        condition.withLock {
            if let failure { ready.append(.failure(failure)) }
            finished = true
            condition.broadcast()
        }
    }
}
