import Dispatch
import Foundation
import MapcKit
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C (SIGINT) and SIGTERM during a migration: the first one asks the run to stop, which it
/// does at its next safe point (between batches, within a long SQL statement, before the
/// replacement), removing its temporary files and leaving every store that has not been replaced
/// yet as it was; a second one ends the process at once (the next run cleans up after it, as
/// after a kill). A signal the process was started ignoring (a shell's background job) stays
/// ignored, and each signal's disposition is put back afterwards.
final class Interruption: @unchecked Sendable {
    private let lock = NSLock()
    private var received: Int32?
    private var sources: [DispatchSourceSignal] = []
    private var previous: [(Int32, sigaction)] = []

    /// Starts listening for SIGINT and SIGTERM.
    init() {
        for number in Self.signals {
            var old = sigaction()
            guard sigaction(number, nil, &old) == 0 else { continue }
            // Started with the signal ignored: leave it so, as the shell intended.
            if let handler = old.__sigaction_handler.sa_handler, unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            previous.append((number, old))
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.receive(number) }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
        for (number, old) in previous {
            var restored = old
            sigaction(number, &restored, nil)
        }
    }

    /// Whether a signal asked the run to stop.
    var isRequested: Bool { lock.withLock { received != nil } }

    /// The signals that stop a run at its next safe point: Ctrl-C, a terminal or ssh session
    /// closing (SIGHUP; `nohup` keeps it ignored), and a job runner's SIGTERM.
    static let signals = [SIGINT, SIGHUP, SIGTERM]

    /// The exit statuses of runs those signals stopped (128 + the signal): 130, 129, 143.
    static let exitStatuses = Set(signals.map { 128 + $0 })

    /// Processes working for this run (a batch's workers): how to tell each to stop at its next
    /// safe point (a message it reads: a signal could come before it listens, and it inherits the
    /// signals this process ignores to hear them its own way).
    private var children: [pid_t: @Sendable () -> Void] = [:]

    /// Tells `pid` to stop when this run is asked to (at once, if it was), until `forget`.
    func forward(to pid: pid_t, stop: @escaping @Sendable () -> Void) {
        let already = lock.withLock { () -> Bool in
            children[pid] = stop
            return received != nil
        }
        if already { stop() }
    }

    /// Stops telling `pid` (it has ended).
    func forget(_ pid: pid_t) {
        _ = lock.withLock { children.removeValue(forKey: pid) }
    }

    /// A stop asked for otherwise than by a signal (a batch's worker told by its batch, or left
    /// alone by it): as SIGTERM's, once.
    func request() {
        guard lock.withLock({ received == nil }) else { return }
        receive(SIGTERM)
    }

    /// The exit status of a run a signal stopped: 128 + the signal's number, as shells report it.
    var exitStatus: Int32 { 128 + (lock.withLock { received } ?? SIGINT) }

    private func receive(_ number: Int32) {
        let first = lock.withLock { () -> Bool in
            defer { if received == nil { received = number } }
            return received == nil
        }
        let working = lock.withLock { children }
        // A second signal: quit now (the workers too), without running exit handlers on other threads.
        guard first else {
            for pid in working.keys { kill(pid, SIGKILL) }
            _exit(128 + number)
        }
        for stop in working.values { stop() }
        let again = number == SIGINT ? "press Ctrl-C again" : "send the signal again"
        // A policy's hook that does not return (a loop) keeps the run from its next safe point: said, with whose.
        let policy = PolicyCrash.running.map { "; \($0), is working: a hook of it that does not return keeps the run from stopping" } ?? ""
        Console.err("\nstopping at the next safe point; stores not yet replaced are left as they were\(policy) (\(again) to quit at once)")
    }
}
