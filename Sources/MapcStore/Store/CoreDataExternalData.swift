import Foundation
import MapcFoundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files Core Data keeps beside a store: the values of binary attributes that allow external
/// storage, when large, live in `.<name>_SUPPORT/_EXTERNAL_DATA/` (`<name>` is the store file's
/// name without its extension), and the column holds a reference to one of them. The folder
/// belongs to the store's file name, so a store written under another name or in another folder
/// (`run --output`) must take a copy of it or its references lead nowhere.
package struct CoreDataExternalData {
    /// The store file's path (the file need not exist).
    package let store: String
    /// Its hidden support folder (which need not exist).
    package let supportFolder: String

    /// The support folder of the store file at `store`.
    package init(store: String) {
        self.store = store
        let url = URL(fileURLWithPath: store)
        let name = url.deletingPathExtension().lastPathComponent
        supportFolder = url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT").path
    }

    /// The folder of the values themselves.
    package var dataFolder: String { (supportFolder as NSString).appendingPathComponent("_EXTERNAL_DATA") }

    /// Whether anything is at the support folder's path.
    package var exists: Bool { Files.kind(of: supportFolder) != .missing }

    /// The files of external values and their total size; nil when there are none.
    package func values() -> (files: Int, bytes: Int64)? {
        guard Files.kind(of: dataFolder) == .directory, let names = try? FileManager.default.contentsOfDirectory(atPath: dataFolder) else { return nil }
        var files = 0
        var bytes: Int64 = 0
        for name in names {
            var info = stat()
            guard lstat((dataFolder as NSString).appendingPathComponent(name), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            files += 1
            bytes += Int64(info.st_size)
        }
        return files == 0 ? nil : (files, bytes)
    }

    /// The values in words, for `status` and notes: "3 files (1.2 MB) in .Notes_SUPPORT/_EXTERNAL_DATA".
    package func describe(_ values: (files: Int, bytes: Int64)) -> String {
        let folder = URL(fileURLWithPath: supportFolder).lastPathComponent + "/_EXTERNAL_DATA"
        return "\(English.count(values.files, "file", "files")) (\(English.size(values.bytes))) in \(folder)"
    }

    /// Copies the support folder, whole, to `destination`'s support folder, which must not exist:
    /// into a temporary folder beside the destination store first (named as the run's temporary
    /// files are, so a killed run's copy is removed with them), renamed into place at the end,
    /// so that it appears whole or not at all. Files are hard-linked where the file system allows (Core Data never rewrites
    /// an external value in place: a new value is a new file), else copied.
    package func copy(to destination: CoreDataExternalData) throws {
        guard !destination.exists else {
            throw MapcError.file("\(destination.supportFolder) already exists and belongs to another store; move or delete it first")
        }
        let temporary = AtomicFile.temporaryPath(besides: destination.store)
        do {
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
            guard let walker = FileManager.default.enumerator(atPath: supportFolder) else {
                throw MapcError.file("cannot read \(supportFolder)")
            }
            while let relative = walker.nextObject() as? String {
                let from = (supportFolder as NSString).appendingPathComponent(relative)
                let to = (temporary as NSString).appendingPathComponent(relative)
                var info = stat()
                guard lstat(from, &info) == 0 else { throw MapcError.file("cannot read \(from): \(String(cString: strerror(errno)))") }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    try FileManager.default.createDirectory(atPath: to, withIntermediateDirectories: false)
                case S_IFREG:
                    if link(from, to) != 0 { try FileManager.default.copyItem(atPath: from, toPath: to) }
                default:
                    // A link or a special file is not Core Data's: copied as it is (a link stays a link).
                    try FileManager.default.copyItem(atPath: from, toPath: to)
                }
            }
            try Files.moveIntoPlace(folder: temporary, destination.supportFolder)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            if let error = error as? MapcError { throw error }
            throw MapcError.file("cannot copy \(supportFolder) to \(destination.supportFolder): \(error.localizedDescription)")
        }
    }

    /// Whether this support folder holds nothing but copies of `other`'s external values (the
    /// same names and sizes): what a run killed between putting the copy in place and the new
    /// store beside it leaves, which the next run may replace.
    package func holdsOnlyCopies(of other: CoreDataExternalData) -> Bool {
        let manager = FileManager.default
        guard let entries = try? manager.contentsOfDirectory(atPath: supportFolder), Set(entries).isSubset(of: ["_EXTERNAL_DATA"]) else { return false }
        guard let names = try? manager.contentsOfDirectory(atPath: dataFolder) else { return entries.isEmpty }
        for name in names {
            var mine = stat(), theirs = stat()
            guard lstat((dataFolder as NSString).appendingPathComponent(name), &mine) == 0, (mine.st_mode & S_IFMT) == S_IFREG,
                  lstat((other.dataFolder as NSString).appendingPathComponent(name), &theirs) == 0, mine.st_size == theirs.st_size else { return false }
        }
        return true
    }

    /// Removes the support folder (a copy made for a store that did not come to be).
    package func remove() {
        try? FileManager.default.removeItem(atPath: supportFolder)
    }
}
