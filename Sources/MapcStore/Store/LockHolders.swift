import Foundation
import MapcFoundation

/// Which other processes hold SQLite's locks on a store file, read from the system's table of
/// locks (Linux's `/proc/locks`) rather than asked through a descriptor of the file: closing any
/// descriptor of a file drops every POSIX lock this process holds on it, SQLite's included.
package enum LockHolders {
    /// SQLite's shared lock bytes (os_unix.c): after the pending byte at 1 GiB and the reserved
    /// byte, 510 bytes of which a reader locks one and a writer all.
    static let sharedBytes: ClosedRange<Int64> = (0x4000_0000 + 2)...(0x4000_0000 + 2 + 509)

    /// The ids of other processes holding a lock on the shared lock bytes of the file at `path`:
    /// a connection to a store in write-ahead-log mode holds one for as long as it has the store
    /// open, a connection to a rollback-journal store while it reads. Empty where the system keeps
    /// no such table, or when it cannot be read.
    package static func processesSharing(_ path: String) -> [Int32] {
        var status = stat()
        guard stat(path, &status) == 0, let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        return holders(in: table, device: UInt64(status.st_dev), inode: UInt64(status.st_ino), excluding: getpid())
    }

    /// Reads `/proc/locks` lines (`1: POSIX  ADVISORY  READ 4242 fe:00:16646827 1073741826 1073742335`;
    /// a waiting lock's line has `->` after its number and holds nothing yet).
    static func holders(in table: String, device: UInt64, inode: UInt64, excluding ownProcess: Int32) -> [Int32] {
        // The device as the kernel prints it: major and minor numbers in hexadecimal (glibc's encoding of dev_t).
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        let file = String(format: "%02llx:%02llx:%llu", major, minor, inode)
        var pids: [Int32] = []
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[1] != "->", fields[1] == "POSIX", fields[5] == file,
                  let start = Int64(fields[6]) else { continue }
            let end = fields[7] == "EOF" ? Int64.max : Int64(fields[7]) ?? Int64.max
            guard start <= sharedBytes.upperBound, end >= sharedBytes.lowerBound,
                  let pid = Int32(fields[4]), pid != ownProcess, !pids.contains(pid) else { continue }
            pids.append(pid)
        }
        return pids
    }
}
