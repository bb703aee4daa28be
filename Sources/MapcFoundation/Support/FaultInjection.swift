internal import CMapcSystem

/// The test hook of the crash-testing harness (`Benchmarks/fault-injection.sh`): with the
/// environment variable `MAPC_FAULT=crash@N` the process is killed at its N-th file operation
/// (a SQLite write, truncate, delete or sync, or one of mapc's renames, links and syncs), with
/// `fail@N` that operation fails with an I/O error, with `term@N` the process sends itself SIGTERM (`hup@N`: SIGHUP)
/// there (a user's stop at a known point: the run stops at its next check), and with `count` the operations are only
/// counted (the total is appended to the file `MAPC_FAULT_LOG` at exit). Unset, it does nothing.
package enum FaultInjection {
    /// The kinds of operation counted.
    package enum Operation: Int32 {
        case write = 0, sync = 1, rename = 2
    }

    /// Activates the hook when `MAPC_FAULT` asks for it; returns whether it is active.
    @discardableResult
    package static func installFromEnvironment() -> Bool {
        mapc_faults_install() == 1
    }

    /// Counts one of mapc's own operations, failing it when the harness says so.
    static func point(_ operation: Operation) throws {
        if mapc_faults_tick(operation.rawValue) == 1 {
            throw MapcError.file("injected I/O error (MAPC_FAULT) at a \(operation) operation")
        }
    }
}
