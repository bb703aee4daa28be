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
    /// through its own name is locked once): `STORE.mapc-lock`, or for a name too long for that
    /// to be a file's (246 bytes and more), a name made as the temporary files' are, from a cut of
    /// it and a digest of the whole (`AtomicFile.temporaryPrefix`): such a store was made, and
    /// could not be migrated ("File name too long").
    package static func path(for store: String) -> String {
        let real = Files.realPath(store)
        let name = real.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? real
        guard name.utf8.count + suffix.utf8.count > 255 else { return real + suffix }
        return Files.sibling(named: AtomicFile.temporaryPrefix(for: name) + "lock", of: real)
    }

    /// How a lock's name ends, whatever its store's name.
    package static let suffix = ".mapc-lock"

    /// Takes the lock on a store, or throws when another mapc command holds it.
    package init(store: String) throws {
        let path = Self.path(for: store)
        descriptor = try Self.openLockFile(path, store: store)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            descriptor = -1
            throw MapcError.storeInUse("another mapc command is writing \(store) (or an app migrating it with MapcKit: \(path) is locked); wait for it to finish")
        }
    }

    /// Opens (or creates) the lock file. Never through a symbolic link at its name, which would
    /// have the lock made or taken on another file (as root, anywhere the link says). A lock
    /// another user made (root's run of the user's store) is taken through a read-only
    /// descriptor, which `flock` accepts; one this process makes belongs to the store's owner.
    private static func openLockFile(_ path: String, store: String) throws -> Int32 {
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        var failure = errno
        if descriptor < 0, failure == EACCES {
            descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            // No lock file to read: the first failure (it could not be made) is the one to say.
            if descriptor < 0, errno != ENOENT { failure = errno }
        }
        guard descriptor >= 0 else {
            if failure == ELOOP {
                throw MapcError.file("\(path) is a symbolic link; mapc takes its lock on the file of that name itself, never through a link. Remove the link and run again")
            }
            if failure == EACCES || failure == EROFS, let problem = Files.unwritableFolderProblem(of: store, for: .locking) { throw MapcError.store(problem) }
            throw MapcError.file("cannot create lock file \(path): \(String(cString: strerror(failure)))")
        }
        var lock = stat(), owner = stat()
        if fstat(descriptor, &lock) == 0, lock.st_mode & S_IFMT == S_IFREG, lock.st_nlink == 1, lock.st_uid == geteuid(), lock.st_size == 0, stat(store, &owner) == 0,
           lock.st_uid != owner.st_uid || lock.st_gid != owner.st_gid {
            // Made by another user than the store's (root): the store's owner must be able to take it too.
            _ = fchown(descriptor, owner.st_uid, owner.st_gid)
        }
        return descriptor
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
