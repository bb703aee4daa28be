import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starts work on a thread of its own, and says when the system would not start one.
///
/// Foundation's `Thread.detachNewThread` ignores a failure to create the thread (the process's or
/// the system's thread limit, `EAGAIN`): the work then never runs, and whoever waits for it waits
/// for ever. Every caller in mapc does the work on its own thread instead when no thread starts:
/// slower, never stuck. (On Linux. Elsewhere Foundation's thread is started as before, and its
/// failure is still not seen: not built or tested on other systems yet.)
package enum DetachedThread {
    /// Runs `body` on a new detached thread; false, with `body` not run, when none could be started.
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        if refusesStartsOnThisThread { return false }
        #if canImport(Glibc)
        let work = Unmanaged.passRetained(Work(body))
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Work>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, work.toOpaque())
        guard created == 0 else {
            work.release()
            return false
        }
        pthread_detach(thread)
        return true
        #else
        Thread.detachNewThread(body)
        return true
        #endif
    }

    /// For tests: on a thread that sets it, every start fails, as at the system's thread limit.
    /// (A thread's, not a task's: a test waits for such a thread with a time limit, so that a
    /// hang fails the test rather than blocking the few threads tests run on.)
    static var refusesStartsOnThisThread: Bool {
        get { Thread.current.threadDictionary[refusalKey] as? Bool ?? false }
        set { Thread.current.threadDictionary[refusalKey] = newValue }
    }
    private static let refusalKey = "mapc.DetachedThread.refusesStarts"

    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
