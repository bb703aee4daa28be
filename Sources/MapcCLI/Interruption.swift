import Dispatch
import Foundation

/// Ctrl-C (SIGINT) and SIGTERM during a migration: the first one asks the run to stop, which it
/// does at its next batch, removing its temporary files and leaving every store as it was; a
/// second one ends the process at once (the next run cleans up after it, as after a kill).
final class Interruption: @unchecked Sendable {
    /// The exit status of a run stopped by a signal: 128 + SIGINT, as shells report it.
    static let exitStatus: Int32 = 130

    private let lock = NSLock()
    private var received = false
    private var sources: [DispatchSourceSignal] = []

    /// Starts listening for SIGINT and SIGTERM.
    init() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.receive(number) }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Whether a signal asked the run to stop.
    var isRequested: Bool { lock.withLock { received } }

    private func receive(_ number: Int32) {
        let first = lock.withLock { () -> Bool in
            defer { received = true }
            return !received
        }
        guard first else { Foundation.exit(Self.exitStatus) }
        Console.err("\nstopping: the stores are left as they were (press Ctrl-C again to quit at once)")
    }
}
