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
/// belongs to the store's file name as the app opens it (a link is not resolved), so a store
/// written under another name or in another folder (`run --output`) must take a copy of it or
/// its references lead nowhere.
package struct CoreDataExternalData {
    /// The store file's path, as the app names it (the file need not exist).
    package let store: String
    /// Its hidden support folder (which need not exist).
    package let supportFolder: String

    /// The support folder of the store file at `store`.
    package init(store: String) {
        self.store = store
        let url = Files.fileURL(store)
        let name = url.deletingPathExtension().lastPathComponent
        supportFolder = url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT").path
    }

    /// The support folder of the store at `path` as the app names it, or, when there is none
    /// there and the name is a link, the one beside the file it leads to.
    package static func beside(store path: String) -> CoreDataExternalData {
        let named = CoreDataExternalData(store: path)
        if named.exists { return named }
        let resolved = Files.realPath(path)
        return resolved == path ? named : CoreDataExternalData(store: resolved)
    }

    /// The folder of the values themselves.
    package var dataFolder: String { (supportFolder as NSString).appendingPathComponent("_EXTERNAL_DATA") }

    /// Whether anything is at the support folder's path.
    package var exists: Bool { Files.kind(of: supportFolder) != .missing }

    /// The deepest folder followed inside the support folder (links may lead round in circles).
    static let maxDepth = 8
    /// The file that marks a copy still being made: its store is not in place yet.
    static let unfinishedMarker = ".mapc-copy-unfinished"

    /// One entry of the support folder, links followed: a folder, or a file and its size.
    private enum Entry {
        case folder(relative: String)
        case file(relative: String, real: String, size: Int64)
    }

    /// Every entry under the support folder, links followed; throws at anything that is neither
    /// a file nor a folder (a FIFO would block a copy for ever), or a loop deeper than `maxDepth`.
    private func entries() throws -> [Entry] {
        var found: [Entry] = []
        func walk(_ path: String, _ relative: String, depth: Int) throws {
            guard depth <= Self.maxDepth else { throw MapcError.file("\(path) lies more than \(Self.maxDepth) folders deep in \(supportFolder) (a loop of links?)") }
            let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            for name in names where !(depth == 0 && name == Self.unfinishedMarker) {
                let child = (path as NSString).appendingPathComponent(name), childRelative = relative.isEmpty ? name : "\(relative)/\(name)"
                var info = stat()
                guard stat(child, &info) == 0 else { throw MapcError.file("cannot read \(child): \(String(cString: strerror(errno)))") }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    found.append(.folder(relative: childRelative))
                    try walk(child, childRelative, depth: depth + 1)
                case S_IFREG:
                    found.append(.file(relative: childRelative, real: Files.realPath(child), size: Int64(info.st_size)))
                default:
                    throw MapcError.file("\(child) is neither a file nor a folder; Core Data keeps only files in \(Files.fileURL(supportFolder).lastPathComponent): move it away")
                }
            }
        }
        guard Files.kind(of: Files.realPath(supportFolder)) == .directory else { return [] }
        try walk(supportFolder, "", depth: 0)
        return found
    }

    /// The files of external values and their total size; nil when there are none (or the
    /// folder cannot be read: `countedValues` says why).
    package func values() -> (files: Int, bytes: Int64)? { (try? countedValues()) ?? nil }

    /// The files of external values and their total size, nil when there are none; throws when
    /// the folder holds what cannot be copied (a FIFO, a loop of links).
    package func countedValues() throws -> (files: Int, bytes: Int64)? {
        let entries = try entries()
        var files = 0, bytes: Int64 = 0
        for case .file(let relative, _, let size) in entries where relative.hasPrefix("_EXTERNAL_DATA/") {
            files += 1
            bytes += size
        }
        return files == 0 ? nil : (files, bytes)
    }

    /// The values in words, for `status` and notes: "3 files (1.2 MB) in .Notes_SUPPORT/_EXTERNAL_DATA".
    package func describe(_ values: (files: Int, bytes: Int64)) -> String {
        let folder = Files.fileURL(supportFolder).lastPathComponent + "/_EXTERNAL_DATA"
        return "\(English.count(values.files, "file", "files")) (\(English.size(values.bytes))) in \(folder)"
    }

    /// Whether this support folder is `other`'s too (two store names with one stem, or links).
    package func isSameFolder(as other: CoreDataExternalData) -> Bool {
        Files.lexicallyStandardized(Files.realPath(supportFolder)) == Files.lexicallyStandardized(Files.realPath(other.supportFolder))
    }

    /// Whether this support folder is a copy a run put in place before it was killed, its store
    /// never put beside it (the marker `copy` leaves until `finish` removes it).
    package var isUnfinishedCopy: Bool {
        Files.kind(of: (supportFolder as NSString).appendingPathComponent(Self.unfinishedMarker)) == .regularFile
    }

    /// Copies the support folder, whole, links followed, to `destination`'s support folder,
    /// which must not exist: into a temporary folder beside the destination store first (named
    /// as the run's temporary files are, so a killed run's copy is removed with them), flushed,
    /// then renamed into place, marked unfinished until `finish` (the store then beside it).
    /// Files are hard-linked where the file system allows (Core Data never rewrites an external
    /// value in place: a new value is a new file), else copied. `isCancelled` is asked between files.
    package func copy(to destination: CoreDataExternalData, isCancelled: () -> Bool = { false }) throws {
        guard !destination.exists else {
            throw MapcError.file("\(destination.supportFolder) already exists and belongs to another store; move or delete it first")
        }
        let entries = try entries()
        let temporary = AtomicFile.temporaryPath(besides: destination.store)
        do {
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
            var folders = [temporary]
            for entry in entries {
                switch entry {
                case .folder(let relative):
                    let folder = (temporary as NSString).appendingPathComponent(relative)
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
                    folders.append(folder)
                case .file(let relative, let real, _):
                    if isCancelled() { throw CancellationError() }
                    let target = (temporary as NSString).appendingPathComponent(relative)
                    if link(real, target) != 0 {
                        try FileManager.default.copyItem(atPath: real, toPath: target)
                        try Files.sync(target)
                    }
                }
            }
            try Data().write(to: Files.fileURL((temporary as NSString).appendingPathComponent(Self.unfinishedMarker)))
            // Every folder's entries on disk before the rename makes the copy visible.
            for folder in folders.reversed() { try Files.sync(folder) }
            try Files.moveIntoPlace(folder: temporary, destination.supportFolder)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            if let error = error as? MapcError { throw error }
            if error is CancellationError { throw error }
            throw MapcError.file("cannot copy \(supportFolder) to \(destination.supportFolder): \(Files.reason(of: error))")
        }
    }

    /// Marks a copy finished: its store is in place beside it.
    package func finish() {
        unlink((supportFolder as NSString).appendingPathComponent(Self.unfinishedMarker))
    }

    /// Removes the support folder (a copy made for a store that did not come to be).
    package func remove() {
        try? FileManager.default.removeItem(atPath: supportFolder)
    }
}
