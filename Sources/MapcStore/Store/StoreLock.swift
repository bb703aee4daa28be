import Foundation
import MapcFoundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// mapc's exclusive lock on a store (`STORE.mapc-lock`, beside the store's real path): every mapc
/// command that writes a store holds it, so a `load` cannot slip into a store that a `run` is
/// replacing. Non-blocking; the kernel drops it if the process dies.
package final class StoreLock {
    private var descriptor: Int32

    /// The lock file's path for a store (its real path: a store reached through a link and
    /// through its own name is locked once).
    package static func path(for store: String) -> String { Files.realPath(store) + ".mapc-lock" }

    /// Takes the lock on a store, or throws when another mapc command holds it.
    package init(store: String) throws {
        let path = Self.path(for: store)
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            if errno == EACCES || errno == EROFS, let problem = Files.unwritableFolderProblem(of: store) { throw MapcError.store(problem) }
            throw MapcError.file("cannot create lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            descriptor = -1
            throw MapcError.storeInUse("another mapc command is writing \(store) (or an app migrating it with MapcKit: \(store).mapc-lock is locked); wait for it to finish")
        }
    }

    /// Releases the lock (also done when the lock is released from memory).
    package func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
