import Foundation
import MapcFoundation

extension Store {
    /// The files SQLite keeps beside a store (`-wal` and `-shm` in WAL mode, a `-journal` left by
    /// an interrupted write) that exist and this user cannot write. SQLite writes them to lock the
    /// store, so a store that is writable itself still cannot be locked, nor migrated in place.
    package static func unwritableCompanions(of realPath: String) -> [String] {
        Files.companions(of: realPath).filter { FileManager.default.fileExists(atPath: $0) && !Files.isWritable($0) }
    }

    /// Why a store whose companion files this user cannot write cannot be locked, and what to do.
    package static func unwritableCompanionsProblem(_ path: String, _ companions: [String]) -> String {
        let names = companions.map { Files.fileURL($0).lastPathComponent }
        return "\(path): this user cannot write \(names.joined(separator: " and ")) beside the store (another user's, or read-only), which SQLite writes to lock it; "
            + "give this user write access to \(companions.count == 1 ? "it" : "them") (chmod u+w, or chown to the user running mapc) and run again, "
            + "or migrate it to a new file with `--output`, which only reads it"
    }
}
