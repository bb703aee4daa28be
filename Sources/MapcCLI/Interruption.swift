import Dispatch
import Foundation
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

    /// Processes working for this run (a batch's workers), which a signal is passed on to.
    private var children: Set<pid_t> = []

    /// Passes the signals this run receives on to `pid` too, until `forget`; one already received
    /// is passed on at once.
    func forward(to pid: pid_t) {
        let already = lock.withLock { () -> Int32? in
            children.insert(pid)
            return received
        }
        if let already { kill(pid, already) }
    }

    /// Stops passing signals on to `pid` (it has ended).
    func forget(_ pid: pid_t) {
        _ = lock.withLock { children.remove(pid) }
    }

    /// The exit status of a run a signal stopped: 128 + the signal's number, as shells report it.
    var exitStatus: Int32 { 128 + (lock.withLock { received } ?? SIGINT) }

    private func receive(_ number: Int32) {
        let first = lock.withLock { () -> Bool in
            defer { if received == nil { received = number } }
            return received == nil
        }
        for child in lock.withLock({ children }) { kill(child, number) }
        // A second signal: quit now, without running exit handlers on other threads.
        guard first else { _exit(128 + number) }
        let again = number == SIGINT ? "press Ctrl-C again" : "send the signal again"
        Console.err("\nstopping at the next safe point; stores not yet replaced are left as they were (\(again) to quit at once)")
    }
}
