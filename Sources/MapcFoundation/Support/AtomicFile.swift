import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Creating a file so that it appears whole or not at all: build it under a temporary name in
/// the same folder, flush it, then rename it into place.
package enum AtomicFile {
    /// A temporary path beside `path`, in the same folder so that the final rename stays on one file system.
    package static func temporaryPath(besides path: String) -> String {
        let url = Files.fileURL(path)
        let name = temporaryPrefix(for: url.lastPathComponent) + "\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        return url.deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// How the temporary files beside a file named `name` begin (`.NAME.mapc-`), which is how a
    /// later run finds what a killed one left. A name so long that a temporary file's (with its
    /// process, number and SQLite's `-journal`, 37 bytes more) would pass the system's 255 is cut
    /// at 180 bytes and marked with a digest of the whole, so two long names never share files.
    package static func temporaryPrefix(for name: String) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count > 218 else { return ".\(name).mapc-" }
        var cut = ""
        for scalar in name.unicodeScalars {
            guard cut.utf8.count + String(scalar).utf8.count <= 180 else { break }
            cut.unicodeScalars.append(scalar)
        }
        // FNV-1a, the same in every process (Swift's own hashing is seeded per process).
        let digest = bytes.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
        return ".\(cut)~\(String(digest, radix: 16)).mapc-"
    }

    /// A new, empty file beside `path` (as `temporaryPath` names it) that only its owner can read
    /// or write: a store's data is written into it, and must not be readable by others before it
    /// takes the permissions of the store it replaces (`Files.copyAttributes`) or of a copy
    /// (`Files.givePermissionsOfCopy`). SQLite opens an empty file as an empty database.
    package static func privateFile(besides path: String) throws -> String {
        try newFile(besides: path, mode: 0o600)
    }

    /// A new, empty file beside `path`, or an error naming `path` and its folder (not the
    /// temporary name the user never gave).
    private static func newFile(besides path: String, mode: mode_t) throws -> String {
        let temporary = temporaryPath(besides: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            let failure = errno
            throw MapcError.file("cannot create a file beside \(path) (\(String(cString: strerror(failure)))); nothing was changed. Check that its folder is writable")
        }
        close(descriptor)
        return temporary
    }

    /// Runs `build` on a temporary path, then moves the result to `path` (which must not exist).
    /// On any error the temporary file and its SQLite side files are removed. The file is made
    /// first, as SQLite makes one (0644 less the umask), so a folder it cannot be made in is said
    /// as such.
    package static func create(at path: String, _ build: (String) throws -> Void) throws {
        let temporary = try newFile(besides: path, mode: 0o644)
        do {
            try build(temporary)
            try Files.moveIntoPlace(temporary, path)
        } catch {
            removeStoreFiles(temporary)
            throw error
        }
    }

    /// Removes a SQLite file with its -wal, -shm and -journal companions.
    package static func removeStoreFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }
}
