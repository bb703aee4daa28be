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
        let url = URL(fileURLWithPath: path)
        let name = ".\(url.lastPathComponent).mapc-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        return url.deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Runs `build` on a temporary path, then moves the result to `path` (which must not exist).
    /// On any error the temporary file and its SQLite side files are removed.
    package static func create(at path: String, _ build: (String) throws -> Void) throws {
        let temporary = temporaryPath(besides: path)
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
