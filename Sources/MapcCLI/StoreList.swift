import Foundation
import MapcKit

/// The stores a command is given: files as named, and for a folder the store files in it.
enum StoreList {
    /// A folder's file that is not worked on, and why.
    struct PassedOver {
        var path: String
        var reason: String
        /// Whether the file belongs to a store (its `-wal`, `-shm` or `-journal`, a lock or a backup).
        var belongsToAStore = false

        var json: JSONValue { .object([("store", .string(path)), ("result", .string("passed over")), ("reason", .string(reason))]) }
    }

    /// The stores to work on and the folders' files passed over.
    struct Selection {
        var stores: [String] = []
        var passedOver: [PassedOver] = []

        /// Tells standard error what was passed over: each file with its reason, and the files
        /// that belong to stores as one count.
        func note() {
            for file in passedOver where !file.belongsToAStore { Console.err("note: passed over \(file.path): \(file.reason)") }
            let companions = passedOver.filter(\.belongsToAStore).count
            if companions > 0 { Console.err("note: passed over \(companions == 1 ? "1 file that belongs to a store" : "\(companions) files that belong to stores") (a store's -wal, -shm or -journal, a lock, a backup, a killed run's temporary file)") }
        }
    }

    /// Extensions of store files: a folder's file named so is a store even when it cannot be read
    /// or is no longer SQLite (a damaged store fails; it is not passed over).
    static let storeExtensions: Set<String> = ["sqlite", "sqlite3", "db", "db3", "store", "sqlitedb", "storedata"]

    /// Whether a file's name says it is a store (`storeExtensions`).
    static func isNamedAsStore(_ name: String) -> Bool {
        storeExtensions.contains((name as NSString).pathExtension.lowercased())
    }

    /// The endings of the files SQLite keeps beside a store.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// The paths named, a folder replaced by its stores in name order; each file once, whatever
    /// names (links, `./`) reach it. A folder's file is a store when it starts with SQLite's
    /// header or is named as a store (`storeExtensions`): one that cannot be read is kept, so that
    /// its error is reported and counted as a failure. Every other file of a folder is passed over
    /// with its reason: a store's `-wal`, `-shm` or `-journal`, a lock, a backup, a hidden file,
    /// a folder, a FIFO or device, a link to nothing, a file that is not SQLite.
    /// A backup named alone is kept (`status` and `dump` read it; `run` and `plan` say why it is
    /// not migrated in place, `backupRefusal`).
    static func expand(_ paths: [String]) throws -> Selection {
        var selection = Selection()
        var result: [String] = []
        for path in paths {
            if let problem = Files.storePathProblem(path) { throw MapcError.file(problem) }
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
                // A list made by a glob names a store's files too: passed over as in a folder.
                if let reason = companionReason(path), !(paths.count == 1 && backupOwner(path) != nil) {
                    selection.passedOver.append(PassedOver(path: path, reason: reason, belongsToAStore: true))
                } else {
                    result.append(path)
                }
                continue
            }
            // A store whose name is not UTF-8 comes back with replacement characters: it would
            // name another file (one named with them) or none, and be left without a word.
            if let unreadable = storeNamesNotUTF8(in: path).first {
                throw MapcError.file("\(path) holds a store whose name is not UTF-8 text (shown as '\(unreadable)'); mapc reads paths as UTF-8 and would name another file or none: "
                                     + "rename it (for example with `convmv -f latin1 -t utf8`) and run again; nothing was read")
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            let before = result.count
            for name in names {
                let file = (path as NSString).appendingPathComponent(name)
                func passOver(_ reason: String, belongs: Bool = false) { selection.passedOver.append(PassedOver(path: file, reason: reason, belongsToAStore: belongs)) }
                if let reason = companionReason(file) { passOver(reason, belongs: true); continue }
                if name.hasPrefix(".") { passOver("a hidden file"); continue }
                // A name that is not UTF-8, decoded with replacement characters, names no file (a
                // store so named stopped the folder above).
                if name.contains("\u{FFFD}"), Files.kind(of: file) == .missing {
                    passOver("its name is not UTF-8 text (shown with \u{FFFD}), which mapc cannot name; rename it (convmv) if it should be read")
                    continue
                }
                let namedAsStore = isNamedAsStore(name)
                // Regular files only (through links): opening a FIFO or a terminal to read its
                // header would wait forever.
                switch Files.kind(of: Files.realPath(file)) {
                case .regularFile: break
                case .directory: passOver("a folder (folders inside are not searched)"); continue
                case .missing, .symbolicLink:
                    // A link whose target is missing (or a loop of links): a store's name fails as one.
                    if namedAsStore { result.append(file) } else { passOver("a link to a file that does not exist") }
                    continue
                case .other(let what):
                    if namedAsStore { result.append(file) } else { passOver("it is \(what)") }
                    continue
                }
                if namedAsStore || !FileManager.default.isReadableFile(atPath: file) || isSQLiteFile(file) {
                    result.append(file)
                } else {
                    passOver("it does not start with SQLite's header and is not named as a store (.\(storeExtensions.sorted().joined(separator: ", ."))); name it on its own to see why, if it is a damaged store")
                }
            }
            if result.count == before {
                selection.note()
                throw MapcError.file("\(path) is a directory, not a store file, and it holds no stores; give a store file, or a folder of store files")
            }
        }
        // One store, however many names reach it (links, hard links, `./`): by the file's identity.
        var unique: [String] = []
        var seen: [FileIdentity: Int] = [:]
        for path in result {
            guard let identity = FileIdentity(path) else {
                unique.append(path)
                continue
            }
            if let index = seen[identity] {
                Console.err(Files.lexicallyStandardized(path) == Files.lexicallyStandardized(unique[index]) ? "note: \(path) is named more than once; it is worked on once"
                                                  : "note: \(path) is the same store as \(unique[index]); it is worked on once")
                // The file's own name rather than a link's, when both are given; between names of one
                // kind, the first in sorted order, so that the name kept (which a shard is chosen
                // by) does not depend on the order of the list.
                let keptIsLink = Files.kind(of: unique[index]) == .symbolicLink, pathIsLink = Files.kind(of: path) == .symbolicLink
                if (keptIsLink && !pathIsLink) || (keptIsLink == pathIsLink && Files.lexicallyStandardized(path) < Files.lexicallyStandardized(unique[index])) {
                    unique[index] = path
                }
            } else {
                seen[identity] = unique.count
                unique.append(path)
            }
        }
        selection.stores = unique
        return selection
    }

    /// Why a file is one of a store's own beside it (its `-wal`, `-shm` or `-journal`, mapc's lock, a
    /// `--keep-backup` copy) and not a store to migrate, or nil. Only when that store is there: a
    /// store may be named anything (`gina-shm`, `alice.backup-v1.db`), and one whose store is gone
    /// is what is left of it.
    static func companionReason(_ file: String) -> String? {
        let name = (file as NSString).lastPathComponent
        if name.hasSuffix(StoreLock.suffix) { return "a lock mapc keeps beside a store" }
        func isThere(_ owner: Substring) -> Bool {
            Files.kind(of: Files.realPath(Files.sibling(named: owner, of: file))) == .regularFile
        }
        if let suffix = companionSuffixes.first(where: name.hasSuffix), isThere(name.dropLast(suffix.count)) {
            return "a store's \(suffix.dropFirst()) file"
        }
        if backupOwner(file) != nil { return "a backup of a store (kept by --keep-backup)" }
        // `.<store>.mapc-<pid>-<n>.tmp` (`AtomicFile`): what a killed run left beside its store.
        if name.hasPrefix("."), name.contains(".tmp"), let marker = name.range(of: ".mapc-", options: .backwards), marker.lowerBound > name.index(after: name.startIndex),
           isThere(name[name.index(after: name.startIndex)..<marker.lowerBound]) {
            return "a temporary file a run of \(name[name.index(after: name.startIndex)..<marker.lowerBound]) left when it was killed (the next run of that store removes it)"
        }
        return nil
    }

    /// The names in a folder whose bytes are not UTF-8 and that are, or may be, stores or a
    /// store's files (named as stores, or starting with SQLite's header), shown with replacement
    /// characters. Another file so named (a photo, a log) is passed over like any other.
    static func storeNamesNotUTF8(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            guard String(validating: bytes, as: UTF8.self) == nil else { continue }
            let shown = String(decoding: bytes, as: UTF8.self)
            let named = isNamedAsStore(shown) || companionSuffixes.contains(where: shown.hasSuffix)
            if named || startsWithSQLiteHeader(folder: folder, name: bytes) { names.append(shown) }
        }
        return names.sorted()
    }

    /// Whether the file a folder names with these bytes starts with SQLite's header (opened by
    /// its bytes, which no String holds; never waiting on a FIFO).
    private static func startsWithSQLiteHeader(folder: String, name: [UInt8]) -> Bool {
        let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name + [0]
        let descriptor = path.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in characters.baseAddress.map { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) } ?? -1 }
        }
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 16)
        return read(descriptor, &header, 16) == 16 && Data(header) == Files.sqliteHeader
    }

    /// The store a file is a backup of (`<store>.backup-<version>…`, as `--keep-backup` names it,
    /// beside that store), or nil.
    static func backupOwner(_ file: String) -> String? {
        let name = (file as NSString).lastPathComponent
        guard let backup = name.range(of: ".backup-"), backup.lowerBound > name.startIndex else { return nil }
        let owner = Files.sibling(named: name[..<backup.lowerBound], of: file)
        return Files.kind(of: Files.realPath(owner)) == .regularFile ? owner : nil
    }

    /// Why a store is not migrated in place: it is a backup `--keep-backup` kept, the store's way
    /// back (a run over it would leave nothing to restore). With `--output` it is only read.
    static func backupRefusal(_ file: String) -> String? {
        guard let owner = backupOwner(file) else { return nil }
        return "\(file) is a backup of \(owner) kept by --keep-backup, the store's way back: mapc does not migrate a backup in place. "
            + "To restore it, move it over the store (mv); to migrate it, give --output NEW (the backup is only read) or copy it to a name of its own"
    }

    /// A file's device and inode: equal for every name of one file.
    struct FileIdentity: Hashable {
        let device: UInt64
        let inode: UInt64

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// Whether a file starts with SQLite's header.
    static func isSQLiteFile(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return header == Files.sqliteHeader
    }
}

/// What happened to one store of a batch.
struct BatchOutcome: Sendable {
    enum Result: String, Sendable {
        case migrated, current, failed, wouldMigrate = "would migrate"
        /// Left as it was because the run was stopped (a signal) before it was done: not failed.
        case stopped
    }
    var store: String
    var result: Result
    var from: String?
    var to: String?
    var steps = 0
    var seconds = 0.0
    var error: String?
    /// The file written with `--output` (a current store is copied there); shown only when set.
    var output: String?
    /// The original kept with `--keep-backup`; shown only when set.
    var backup: String?
    /// Where a failed migration stopped: its step's number (from 1), the number of steps, and
    /// the step ("v2 -> v3"); shown only when set.
    var failedStep: (index: Int, of: Int, step: String)?
    /// Whether it failed once every step was done: the new store could not replace the old one.
    var failedWhenReplacing = false
    /// The exit status this store alone would give.
    var exitCode: Int32 = MapcExitCode.success
    /// What the migration left out besides the objects (`MigrationOutcome.notes`); shown only when some.
    var notes: [String] = []

    var json: JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("store", .string(store)), ("result", .string(result.rawValue)), ("from", from.map(JSONValue.string) ?? .null),
            ("to", to.map(JSONValue.string) ?? .null), ("steps", .integer(Int64(steps))), ("seconds", .double((seconds * 1000).rounded() / 1000)),
            ("error", error.map(JSONValue.string) ?? .null), ("exitCode", .integer(Int64(exitCode))),
        ]
        if let output { pairs.append(("output", .string(output))) }
        if let backup { pairs.append(("backup", .string(backup))) }
        if !notes.isEmpty { pairs.append(("notes", .array(notes.map(JSONValue.string)))) }
        if failedWhenReplacing { pairs.append(("failedWhenReplacing", .bool(true))) }
        if let failedStep {
            pairs.append(("failedStep", .object([("number", .integer(Int64(failedStep.index))), ("of", .integer(Int64(failedStep.of))), ("step", .string(failedStep.step))])))
        }
        return .object(pairs)
    }

    /// The exit status of an error, as the single-store commands give it.
    static func exitCode(of error: Error) -> Int32 {
        switch error {
        case is DiagnosticsError, is DataValidationError: return MapcExitCode.invalidInput
        case let error as MigrationError:
            switch error {
            case .setup, .dataLoss, .foreignTables, .cancelled, .storeChanged: return MapcExitCode.storeError
            default: return MapcExitCode.migrationFailed
            }
        case let error as MapcError:
            switch error {
            case .input, .data: return MapcExitCode.invalidInput
            default: return MapcExitCode.storeError
            }
        default: return MapcExitCode.storeError
        }
    }

    /// The message with the store's path in front, unless it names it already.
    static func message(of error: Error, naming store: String) -> String {
        let text = message(of: error)
        return text.hasPrefix(store) ? text : "\(store): \(text)"
    }

    /// An error in words, on one line (its first), for the summary table.
    static func message(of error: Error) -> String {
        if let sqlite = MapcError(sqlite: error) { return sqlite.description }
        return "\(error)"
    }
}

/// Runs work on many items with at most `jobs` at a time, keeping the results in order.
final class ParallelRunner<Item: Sendable, Output: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private var results: [Output?]
    private let items: [Item]

    init(_ items: [Item]) {
        self.items = items
        results = Array(repeating: nil, count: items.count)
    }

    func run(jobs: Int, _ work: @escaping @Sendable (Item) -> Output) -> [Output] {
        let group = DispatchGroup()
        let drain: @Sendable () -> Void = {
            while let index = self.take() {
                let output = work(self.items[index])
                self.lock.withLock { self.results[index] = output }
            }
        }
        var started = 0
        for _ in 0..<max(1, min(jobs, items.count)) {
            group.enter()
            if DetachedThread.start({ drain(); group.leave() }) { started += 1 } else { group.leave() }
        }
        // Without a thread of its own (the system's limit), the items are worked on here.
        if started == 0 { drain() }
        group.wait()
        return results.compactMap { $0 }
    }

    private func take() -> Int? {
        lock.withLock {
            guard next < items.count else { return nil }
            defer { next += 1 }
            return next
        }
    }
}
