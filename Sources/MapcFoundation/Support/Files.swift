internal import CMapcSystem
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system rules every command follows for the paths a user names: stores are regular
/// files reached through their real path (a symbolic link is followed once, and the link kept);
/// outputs are written only as new files or over regular files; a replaced file keeps its mode,
/// owner, group and extended attributes. Renames, links and flushes go through here, where the
/// fault-injection harness can stop or fail them.
package enum Files {
    /// What is at a path, without following a final symbolic link.
    package enum Kind: Equatable, Sendable {
        case missing, regularFile, directory, symbolicLink, other(String)
    }

    /// The path a file URL names: as written when it is relative to the current folder (what
    /// `Files.fileURL("notes.db")` makes, so messages show the name the user typed),
    /// otherwise the full path. A URL relative to another folder names a file in that folder,
    /// which its relative part alone would look for here.
    package static func path(of url: URL) -> String {
        // A base without a trailing slash is a file, whose last component the relative part
        // replaces: only a folder's base makes the relative part name the same file from here.
        guard let base = url.baseURL, base.hasDirectoryPath else { return url.path }
        let here = Files.fileURL(FileManager.default.currentDirectoryPath, isDirectory: true).standardizedFileURL.path
        return base.standardizedFileURL.path == here ? url.relativePath : url.path
    }

    /// A path absolute and standardized (`.` and `..` resolved, no links followed): two names of
    /// one file as the project keys files.
    package static func standardized(_ path: String) -> String {
        Files.fileURL(path).standardizedFileURL.path
    }

    /// A new folder of the process's own in the system's temporary folder (`TMPDIR`, else /tmp),
    /// which is never created itself: one that does not exist or cannot be written is said.
    package static func newTemporaryFolder(prefix: String) throws -> URL {
        let base = FileManager.default.temporaryDirectory
        let folder = base.appendingPathComponent("\(prefix)\(getpid())-\(UUID().uuidString)")
        guard mkdir(folder.path, 0o700) == 0 else {
            let failure = errno
            throw MapcError.file("the temporary folder \(base.path) cannot be used (\(String(cString: strerror(failure)))): "
                                 + "set TMPDIR to a folder you can write, or unset it to use /tmp")
        }
        return folder
    }

    /// How many names (hard links) the file at `path` has; nil when there is none.
    package static func linkCount(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_nlink)
    }

    /// Which file `path` names (its device and inode, links followed): two paths, or one path at
    /// two moments, name the same file when these are equal. Nil when there is none.
    package static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// A file's device and inode (`identity(of:)`).
    package struct FileIdentity: Equatable, Sendable {
        package var device: UInt64
        package var inode: UInt64
    }

    /// The bytes of a file a user names (`what` says which, for messages), or a `MapcError.input`
    /// saying what is wrong in words: missing, a directory, a FIFO or device (never opened: a
    /// FIFO would block), larger than `maxBytes`, or unreadable, with why.
    package static func read(_ path: String, what: String = "the file", maxBytes: Int = 256 * 1024 * 1024) throws -> Data {
        switch kind(of: realPath(path)) {
        case .other(let thing): throw MapcError.input("\(path) is \(thing), not a file mapc can read; give a regular file")
        case .directory: throw MapcError.input("\(path) is a directory; give \(what)")
        case .missing:
            let from = path.hasPrefix("/") ? "" : " (relative paths start from \(FileManager.default.currentDirectoryPath))"
            throw MapcError.input("\(path): no such file; check the path\(from)")
        case .symbolicLink:
            if let pipe = pipeDescription(path) { throw MapcError.input(pipe) }
            throw MapcError.input("\(danglingLinkDescription(path)); give \(what) itself, or a link to one that exists (a copy made with `cp -r` keeps relative links that no longer lead anywhere: copy with `cp -rL`)")
        default: break
        }
        var info = stat()
        if stat(path, &info) == 0, Int(info.st_size) > maxBytes {
            throw MapcError.input("\(path): \(what) is \(info.st_size) bytes; the limit is \(maxBytes) bytes")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = access(path, R_OK) == 0 ? String(cString: strerror(errno)) : "permission denied; check the file's permissions"
            throw MapcError.input("\(path): cannot read \(what): \(reason)")
        }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.readToEnd() ?? Data() } catch {
            throw MapcError.input("\(path): cannot read \(what): \(String(cString: strerror(errno)))")
        }
        guard data.count <= maxBytes else { throw MapcError.input("\(path): \(what) is \(data.count) bytes; the limit is \(maxBytes) bytes") }
        return data
    }

    /// What is at `path` (a final symbolic link is reported as such).
    package static func kind(of path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        return kind(ofMode: info.st_mode)
    }

    /// What a symbolic link leads to when followed, for a link `realpath` cannot resolve: the
    /// kernel's links to pipes and sockets (`/dev/stdin` of a pipeline, `/dev/fd/N`) name
    /// `pipe:[N]`, no path. Nil for a link that leads nowhere.
    package static func kind(followingLink path: String) -> Kind? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return kind(ofMode: info.st_mode)
    }

    private static func kind(ofMode mode: mode_t) -> Kind {
        switch mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        case S_IFIFO: return .other("a pipe (FIFO)")
        case S_IFCHR: return .other("a character device")
        case S_IFBLK: return .other("a block device")
        case S_IFSOCK: return .other("a socket")
        default: return .other("not a regular file")
        }
    }

    /// The path with every symbolic link resolved; the path itself when it does not exist.
    package static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        // A real path that is not UTF-8 (a link into a folder named in Latin-1) decoded with
        // replacement characters would name another file: the path is kept as given instead.
        return String(validatingCString: resolved) ?? path
    }

    /// Why an empty path is refused: it names no file (Foundation takes it for the working
    /// folder), and it is most often a shell variable that was never set.
    package static let emptyPathProblem = "an empty path ('') names no store: give the store's path (an unset shell variable, as in \"$STORE\", gives an empty one)"

    /// Why a store's path that ends in '/' (`n.db/`) is refused, or nil: such a name names a
    /// folder, which a store never is, and Foundation's URLs drop the slash where the system does
    /// not, so one command read the file and another found none. A real folder is left to the
    /// caller (a folder of stores, or "is a directory").
    package static func trailingSlashProblem(_ path: String) -> String? {
        guard path.count > 1, path.hasSuffix("/") else { return nil }
        var bare = Substring(path)
        while bare.count > 1, bare.hasSuffix("/") { bare = bare.dropLast() }
        let kind = kind(of: realPath(String(bare)))
        if kind == .directory { return nil }
        let what = kind == .missing ? "and a store is a file" : "but \(bare) is a file"
        return "\(path) ends with '/', which names a folder, \(what): write \(bare) to name the store"
    }

    /// Why a store's path names no store file whatever is there, or nil: it is empty, or ends in '/'.
    package static func storePathProblem(_ path: String) -> String? {
        path.isEmpty ? emptyPathProblem : trailingSlashProblem(path)
    }

    /// The real path of an existing store file, or an error saying what is there instead.
    package static func existingStore(_ path: String) throws -> String {
        if let problem = storePathProblem(path) { throw MapcError.file(problem) }
        let real = realPath(path)
        switch kind(of: real) {
        case .regularFile:
            if let problem = unreadableFileProblem(of: path) { throw MapcError.store(problem) }
            return real
        case .missing: throw MapcError.notFound("\(path): no such store")
        case .directory: throw MapcError.store("\(path) is a directory, not a store file")
        case .symbolicLink:
            if case .other(let what)? = kind(followingLink: path) {
                throw MapcError.store("\(path) is \(what), not a store file; mapc reads and writes regular files only")
            }
            throw MapcError.store(danglingLinkDescription(path))
        case .other(let what): throw MapcError.store("\(path) is \(what), not a store file; mapc reads and writes regular files only")
        }
    }

    /// The real path of a file to create, checking that nothing is in the way: neither the file
    /// nor SQLite companions (`-wal`, `-shm`, `-journal`) left by another store, which SQLite
    /// would otherwise replay into the new one.
    /// `source`, when given, is the store the new one is made from: naming it is said as such
    /// (told it "already exists; delete the file first", a user was advised to delete their store).
    package static func newStore(_ path: String, from source: String? = nil) throws -> String {
        if let problem = storePathProblem(path) { throw MapcError.file(problem) }
        let real = realPath(path)
        if let source, real == realPath(source) {
            throw MapcError.file("\(path) is the store being migrated itself: the output must be a new file (to migrate the store in place, leave --output out)")
        }
        switch kind(of: real) {
        case .missing: break
        case .regularFile: throw MapcError.file("\(path) already exists; choose another path or delete the file first")
        case .directory: throw MapcError.file("\(path) is a directory")
        case .symbolicLink: throw MapcError.file("\(danglingLinkDescription(path)); give the real path")
        case .other(let what): throw MapcError.file("\(path) is \(what); mapc writes regular files only")
        }
        if let problem = uncreatableFileProblem(of: path) { throw MapcError.file(problem) }
        // `b.db-journal` beside `b.db` is b.db's journal to SQLite: the next to open b.db would
        // take the new store for a hot journal, play it back, and delete it.
        for suffix in ["-journal", "-wal", "-shm"] where real.hasSuffix(suffix) {
            let owner = String(real.dropLast(suffix.count))
            if kind(of: owner) == .regularFile {
                throw MapcError.file("\(path) is the name SQLite gives \((owner as NSString).lastPathComponent)'s \(suffix.dropFirst()) file: whatever opened that store next "
                                     + "would take the new store for it and delete it; choose another name")
            }
        }
        let leftovers = companions(of: real).filter { kind(of: $0) != .missing }
        if !leftovers.isEmpty {
            throw MapcError.file("\(leftovers.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")) beside \(path) belong to another store "
                                 + "(SQLite would replay them into the new one); move or delete them first")
        }
        return real
    }

    /// The real path of an output file to write (or replace): a new name, or an existing regular
    /// file, reached through symbolic links on purpose (the file the link leads to is written, and
    /// the link kept). Never a directory, a device, a pipe, or a link that leads nowhere.
    package static func output(_ path: String) throws -> String {
        let real = realPath(path)
        switch kind(of: real) {
        case .missing, .regularFile: return real
        case .directory: throw MapcError.file("\(path) is a directory; give a file name")
        case .symbolicLink: throw MapcError.file("\(danglingLinkDescription(path)); give a real path")
        case .other(let what): throw MapcError.file("\(path) is \(what); mapc writes its output to regular files only (use standard output for pipes and devices)")
        }
    }

    /// A SQLite store's companion files.
    package static func companions(of path: String) -> [String] {
        ["-wal", "-shm", "-journal"].map { path + $0 }
    }

    /// Gives `target` the mode, owner, group and extended attributes of `original`, before it
    /// replaces it. Throws when the owner cannot be kept (the app owning the store could then no
    /// longer write it).
    package static func copyAttributes(from original: String, to target: String) throws {
        var info = stat()
        guard stat(original, &info) == 0 else { return }
        guard chmod(target, info.st_mode & 0o7777) == 0 else {
            throw MapcError.file("cannot give \(target) the permissions of \(original): \(String(cString: strerror(errno)))")
        }
        var current = stat()
        if stat(target, &current) == 0, current.st_uid != info.st_uid || current.st_gid != info.st_gid {
            guard chown(target, info.st_uid, info.st_gid) == 0 else {
                throw MapcError.file("cannot give the new file the owner of \(original) (user \(info.st_uid), group \(info.st_gid)): \(String(cString: strerror(errno))); "
                                     + "run mapc as that user (or as root) so the app keeps access to its store")
            }
        }
        copyExtendedAttributes(from: original, to: target)
    }

    /// Gives `target`, a new file holding a copy of `original`'s data, the permissions `cp` would:
    /// `original`'s, less the process's umask (a private store's copy stays private).
    package static func givePermissionsOfCopy(from original: String, to target: String) throws {
        var info = stat()
        guard stat(original, &info) == 0 else { return }
        guard chmod(target, info.st_mode & 0o777 & ~processUmask) == 0 else {
            throw MapcError.file("cannot give \(target) the permissions of \(original): \(String(cString: strerror(errno)))")
        }
    }

    /// The process's umask, read where the system says it without changing it (Linux's
    /// /proc/self/status); else 022, the usual one.
    package static var processUmask: mode_t {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
           let value = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) {
            return value
        }
        return 0o022
    }

    private static func copyExtendedAttributes(from original: String, to target: String) {
        _ = mapc_copy_xattrs(original, target)
    }

    /// Renames `source` over `destination` (atomic), then flushes the folder.
    package static func replace(_ destination: String, with source: String) throws {
        try FaultInjection.point(.rename)
        guard rename(source, destination) == 0 else {
            throw MapcError.file("cannot replace \(destination): \(String(cString: strerror(errno)))")
        }
        syncDirectory(of: destination)
    }

    /// Renames `source` to `destination` without replacing an existing file, then syncs the folder.
    package static func moveIntoPlace(_ source: String, _ destination: String) throws {
        try FaultInjection.point(.rename)
        // link + unlink refuses to replace an existing destination, unlike rename.
        if link(source, destination) != 0 {
            throw MapcError.file("cannot create \(destination): \(String(cString: strerror(errno)))")
        }
        unlink(source)
        syncDirectory(of: destination)
    }

    /// Renames the folder `source` to `destination`, then syncs the parent folder. A rename never
    /// replaces a folder that has contents, nor a file.
    package static func moveIntoPlace(folder source: String, _ destination: String) throws {
        try FaultInjection.point(.rename)
        guard rename(source, destination) == 0 else {
            throw MapcError.file("cannot create \(destination): \(String(cString: strerror(errno)))")
        }
        syncDirectory(of: destination)
    }

    /// A second name for a file (a backup costing no copy).
    package static func hardLink(_ source: String, as name: String) throws {
        try FaultInjection.point(.rename)
        guard link(source, name) == 0 else { throw MapcError.file("cannot create \(name): \(String(cString: strerror(errno)))") }
    }

    /// Flushes a file's contents to disk.
    package static func sync(_ path: String) throws {
        try FaultInjection.point(.sync)
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw MapcError.file("cannot open \(path) to flush it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw MapcError.file("cannot flush \(path): \(String(cString: strerror(errno)))") }
    }

    /// The kernel writing a file's changes to disk on a thread of its own (Linux; elsewhere
    /// nothing), so that a later `sync` waits for less and the kernel's work of submitting the
    /// pages runs beside the process's. Advisory: nothing depends on it having run.
    package final class Writeback {
        private var handle: OpaquePointer?

        /// Starts it. The file's descriptor stays open until `end`: closing any descriptor of a
        /// file drops the process's POSIX locks on it, SQLite's included.
        package init(_ path: String) {
            handle = mapc_writeback_begin(path)
        }

        /// Waits for the kernel call to return and closes the descriptor: only once no connection
        /// holds a lock on the file (between transactions, or after it closed).
        package func end() {
            mapc_writeback_end(handle)
            handle = nil
        }

        deinit { end() }
    }

    /// Flushes a folder's entries to disk so a rename survives a crash. A flush that fails is
    /// passed over, injected (`MAPC_FAULT=fail@N`) as fsync's own failure is: the rename it
    /// would make durable has happened, so the file is the new one (a power loss before the
    /// folder reaches the disk may bring back the old one, whole), and said failed it would be
    /// reported unchanged where it has changed.
    package static func syncDirectory(of path: String) {
        do { try FaultInjection.point(.sync) } catch { return }
        let folder = Files.fileURL(path).deletingLastPathComponent().path
        let descriptor = open(folder, O_RDONLY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// The 16 bytes every SQLite database file starts with.
    package static let sqliteHeader = Data("SQLite format 3\u{0}".utf8)

    /// A path with its `.` components dropped and each `..` that can be resolved resolved, by the
    /// text alone (links not followed): `./a/b.db`, `a/./b.db` and `a/c/../b.db` are `a/b.db`.
    package static func lexicallyStandardized(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == "..", let last = parts.last, last != ".." { parts.removeLast() } else if part == "..", absolute { continue } else { parts.append(part) }
        }
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    /// The folder holding a path, by its text: `schemas` → `.`, `./schemas/` → `.`, `.` → `..`,
    /// `/a` → `/`. (Foundation's `deletingLastPathComponent` traps on Linux for `.`, `./`, `a/`
    /// and any path of one character, `s`.)
    package static func parentFolder(of path: String) -> String {
        let standardized = lexicallyStandardized(path)
        if standardized == "/" { return "/" }
        var parts = standardized.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.last == "." || parts.last == ".." || parts.isEmpty { return standardized == "." ? ".." : standardized + "/.." }
        parts.removeLast()
        if standardized.hasPrefix("/") { return parts.count <= 1 ? "/" : parts.joined(separator: "/") }
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }

    /// The path of `name` in the folder holding `path`, by its text: `a/b` → `a/name`, `b` →
    /// `name`, `/b` → `/name`.
    package static func sibling(named name: some StringProtocol, of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return String(name) }
        return String(path[...slash]) + String(name)
    }

    /// The file URL of a path as its text says: Foundation's `URL(fileURLWithPath:)` expands a
    /// leading `~` on Linux, so a quoted `'~/t.db'` (a folder named `~` here) named a store in the
    /// home folder, and `run` migrated that one. A shell expands the `~` it means before mapc sees it.
    package static func fileURL(_ path: String, isDirectory: Bool? = nil) -> URL {
        let literal = path.hasPrefix("~") ? "./" + path : path
        guard let isDirectory else { return URL(fileURLWithPath: literal) }
        return URL(fileURLWithPath: literal, isDirectory: isDirectory)
    }

    /// Whether this process may write the file or folder at `path`.
    package static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    /// Whether the store file at `path` is read-only: this process may not write it, or its mode
    /// lets no one write it (`chmod 444`), which root, who may write anything, must respect too.
    package static func isReadOnlyStore(_ path: String) -> Bool {
        !isWritable(path) || modeForbidsWriting(path)
    }

    /// Whether a file's mode lets no one write it (`chmod 444`), whoever this process is.
    package static func modeForbidsWriting(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return false }
        return status.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH) == 0
    }

    /// Why a store cannot be worked on where it is, when its folder is not writable, for what
    /// the command does there. Nil when the folder is writable.
    package static func unwritableFolderProblem(of store: String, for use: FolderUse = .replacing) -> String? {
        if let missing = missingFolderProblem(of: store) { return missing }
        guard let folder = unwritableFolder(of: store) else { return nil }
        // A hot journal (an interrupted write's `-journal`) is rolled back by the first connection,
        // which deletes it: that needs the folder, whatever the command.
        if holdsUnfinishedWrite(journal: realPath(store) + "-journal") {
            return "\(store) has an unfinished write (\(store)-journal, left by a writer that was stopped) that SQLite must roll back and delete before the store can be used, "
                + "which needs write access to its folder (\(folder)); make the folder writable and run again (any reader then rolls it back), or copy the store and its -journal to a writable folder together"
        }
        let why = switch use {
        // Only a WAL store fails to open there: SQLite makes its -shm file beside it to read it.
        case .reading: "SQLite makes a WAL store's -shm file beside it even to read it"
        case .locking: "mapc takes its lock in a file beside the store (a run with --output too)"
        case .replacing: "mapc writes its lock file and the migrated store there"
        }
        return "\(store) is in a folder this user cannot write to (\(folder)): \(why); copy the store (with its -wal file, if any) to a writable folder, or make the folder writable"
    }

    /// Whether a rollback journal holds a write SQLite must undo (a hot journal): not empty, and
    /// its header not zeroed. A journal in TRUNCATE mode is left empty and one in PERSIST mode
    /// with a zeroed header after every commit: neither needs anything.
    package static func holdsUnfinishedWrite(journal path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path), let header = try? handle.read(upToCount: 8) else { return false }
        try? handle.close()
        return header.count == 8 && header.contains { $0 != 0 }
    }

    /// What a command does in a store's folder (`unwritableFolderProblem`).
    package enum FolderUse: Sendable {
        /// Opens the store (a WAL store's `-shm` file is made beside it).
        case reading
        /// Takes mapc's lock beside the store.
        case locking
        /// Replaces the store with its migrated one (the lock, the new file).
        case replacing
    }

    /// The folder of a file this user cannot write to, as it is best named (as given, unless a
    /// link leads elsewhere); nil when it may. The files go beside the real file (a store reached
    /// through a link is worked on there).
    private static func unwritableFolder(of path: String) -> String? {
        let named = parentFolder(of: path)
        let real = parentFolder(of: realPath(path))
        guard !isWritable(real) else { return nil }
        return realPath(named) == real ? named : real
    }

    /// Why a new file cannot be created at `path` (nil when it can): its folder does not exist,
    /// or this user may not write to it. Said by the name given, never a temporary file's.
    package static func uncreatableFileProblem(of path: String) -> String? {
        if let missing = missingFolderProblem(of: path) { return missing }
        guard let folder = unwritableFolder(of: path) else { return nil }
        return "cannot create \(path): this user cannot write to its folder (\(folder)); give a path in a folder this user may write to, or make the folder writable"
    }

    /// Why this user cannot read the file at `path` (nil when it can, or when there is no file):
    /// its mode and owner, which SQLite's "unable to open database file" leaves out.
    package static func unreadableFileProblem(of path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0, access(path, R_OK) != 0, errno == EACCES else { return nil }
        let mode = String(status.st_mode & 0o7777, radix: 8)
        let owner = getpwuid(status.st_uid).flatMap { String(validatingCString: $0.pointee.pw_name) } ?? "user \(status.st_uid)"
        return "\(path) cannot be read by this user (mode \(String(repeating: "0", count: max(0, 4 - mode.count)) + mode), owned by \(owner)): "
            + "run mapc as a user who may read it, or let this user read it (chmod, chown)"
    }

    /// Why a file cannot be created at `path` because its folder does not exist (nil when it does):
    /// mapc creates stores and outputs, never the folders they go in.
    package static func missingFolderProblem(of path: String) -> String? {
        let folder = parentFolder(of: realPath(path))
        switch kind(of: realPath(folder)) {
        case .missing: return "\(path): the folder \(folder) does not exist; create it first (mkdir -p \(folder)) or give a path in an existing folder"
        case .directory: return nil
        // `init FILE/s.db`: named a temporary file inside it, which meant nothing to the user.
        case .regularFile: return "\(path): \(folder) is a file, not a folder; give a path in a folder"
        default: return "\(path): \(folder) is not a folder; give a path in a folder"
        }
    }

    /// What a symbolic link that leads nowhere is, for messages: the link and where it points.
    package static func danglingLinkDescription(_ path: String) -> String {
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { " to \($0)" } ?? ""
        // realpath says whether the links lead round in a circle rather than to nothing.
        if let resolved = realpath(path, nil) { free(resolved) } else if errno == ELOOP {
            return "\(path) is a symbolic link\(target) in a loop of links that never reaches a file"
        }
        return "\(path) is a symbolic link\(target), which does not exist"
    }

    /// What a link to a pipe or socket is (`/dev/stdin` of `cat d.json | mapc load /dev/stdin`
    /// leads to /proc/self/fd/0, and that to "pipe:[…]", no file at all), or nil for another.
    package static func pipeDescription(_ path: String) -> String? {
        var next = path
        for _ in 0..<8 {
            guard let hop = try? FileManager.default.destinationOfSymbolicLink(atPath: next) else { return nil }
            if hop.hasPrefix("pipe:[") || hop.hasPrefix("socket:[") {
                return "\(path) is a \(hop.hasPrefix("pipe") ? "pipe" : "socket") (standard input, say), which mapc does not read: save what it carries to a file first (`cat > data.json`) and name the file"
            }
            next = hop.hasPrefix("/") ? hop : (parentFolder(of: next) as NSString).appendingPathComponent(hop)
        }
        return nil
    }

    /// Creates a folder and its missing parents; nothing when it exists.
    /// A Foundation error's cause in a few words ("No such file or directory"), never its
    /// dump ("Error Domain=NSCocoaErrorDomain Code=260 … UserInfo={…}").
    package static func reason(of error: any Error) -> String {
        if let code = posixCode(of: error) { return String(cString: strerror(code)) }
        let described = error as NSError
        return described.localizedFailureReason ?? described.localizedDescription
    }

    /// The system's error number behind a Foundation error (Foundation wraps it in a Cocoa
    /// error on Linux), when there is one.
    package static func posixCode(of error: any Error) -> Int32? {
        let described = error as NSError
        if let underlying = described.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain { return Int32(underlying.code) }
        if described.domain == NSPOSIXErrorDomain { return Int32(described.code) }
        // Foundation on Linux gives some file errors no underlying POSIX error (listing a folder
        // without permission is Cocoa's 257 alone, said "The operation could not be completed.
        // You don't have permission."): its codes that name one system error are read as it.
        guard described.domain == NSCocoaErrorDomain else { return nil }
        switch described.code {
        case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return EACCES
        case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return ENOENT
        case NSFileWriteOutOfSpaceError: return ENOSPC
        case NSFileWriteVolumeReadOnlyError: return EROFS
        case NSFileWriteFileExistsError: return EEXIST
        default: return nil
        }
    }

    package static func makeFolder(_ path: String) throws {
        // A file where a folder must be (the path itself or one above it): said as such, with
        // the file, rather than Foundation's "Error Domain=NSCocoaErrorDomain Code=516".
        var above = path
        while !above.isEmpty, above != "/", above != "." {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: above, isDirectory: &isFolder) {
                guard isFolder.boolValue else {
                    throw MapcError.file("\(path): cannot create the folder: \(above) is a file, not a folder; name another folder, or move the file away")
                }
                break
            }
            // (Not Foundation's `deletingLastPathComponent`, which traps for a one-character path.)
            above = parentFolder(of: above)
        }
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            let reason = errno == EACCES || errno == EPERM || errno == EROFS ? "permission denied: choose a folder you can write, or make it writable"
                : reason(of: error)
            throw MapcError.file("\(path): cannot create the folder (\(reason))")
        }
    }

    /// Writes data to a file as a whole: into a temporary file beside it, flushed, then renamed
    /// over it (keeping the attributes of a file it replaces). Refuses to replace an existing
    /// file unless `replace`.
    package static func write(_ data: Data, to path: String, replace: Bool) throws {
        try writeAll([(path, data, replace)])
    }

    /// Writes a file whole or not at all, as `write(_:to:replace:)` does, from text made piece by
    /// piece (`body` calls its writer with each): the pieces go to a temporary file beside it, so
    /// that a file of any size is never held in memory, which is then flushed and renamed into place.
    package static func writeStreaming(to path: String, replace: Bool, _ body: (_ write: (String) throws -> Void) throws -> Void) throws {
        let target = try output(path)
        let exists = kind(of: target) == .regularFile
        if exists && !replace { throw MapcError.file("\(path) already exists; choose another file or remove it") }
        let temporary = AtomicFile.temporaryPath(besides: target)
        try FaultInjection.point(.write)
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let handle = FileHandle(forWritingAtPath: temporary) else {
            throw MapcError.file("\(path): cannot write (\(String(cString: strerror(errno)))); nothing was written")
        }
        do {
            // A failed write (a full disk) is said as one; any other error of `body` is its own.
            var text = GatheredText { piece in
                do { try writeUTF8(piece, to: handle) } catch {
                    throw MapcError.file("\(path): cannot write (\(reason(of: error))); nothing was written")
                }
            }
            try body { try text.add($0) }
            try text.finish()
            do { try handle.close() } catch { throw MapcError.file("\(path): cannot write (\(reason(of: error))); nothing was written") }
            try sync(temporary)
            if exists {
                try copyAttributes(from: target, to: temporary)
                try self.replace(target, with: temporary)
            } else {
                try moveIntoPlace(temporary, target)
            }
        } catch {
            try? handle.close()
            unlink(temporary)
            throw error
        }
    }

    /// Writes a text's UTF-8 bytes where they are, without a copy when the text is contiguous.
    package static func writeUTF8(_ text: String, to handle: FileHandle) throws {
        var text = text
        try text.withUTF8 { bytes in try handle.write(contentsOf: UnsafeRawBufferPointer(bytes)) }
    }

    /// Writes several files as one: every file in place, or (whatever fails: a full disk, a
    /// file in the way, a rename) none of them, and files replaced are as they were. Each is
    /// written and flushed under a temporary name first; then they are renamed into place, the
    /// ones they replace kept (as a hard link) until all are in place.
    package static func writeAll(_ files: [(path: String, data: Data, replace: Bool)]) throws {
        var targets: [(path: String, target: String, exists: Bool)] = []
        for file in files {
            let target = try output(file.path)
            let exists = kind(of: target) == .regularFile
            if exists && !file.replace { throw MapcError.file("\(file.path) already exists; choose another file or remove it") }
            targets.append((file.path, target, exists))
        }
        var temporaries: [String] = []
        var written: [FileIdentity?] = []
        var kept: [(original: String, copy: String)] = []
        func undo() {
            // A new file is removed only if it is the one written here (a move can fail after
            // its link, or because another file took the name).
            for (target, identity) in zip(targets, written) where !target.exists && identity != nil && Files.identity(of: target.target) == identity { unlink(target.target) }
            // Where the original was not replaced yet, both names are one file and rename does
            // nothing: the extra name goes.
            for (original, copy) in kept { rename(copy, original); unlink(copy) }
            for temporary in temporaries { unlink(temporary) }
        }
        do {
            for (file, target) in zip(files, targets) {
                let temporary = AtomicFile.temporaryPath(besides: target.target)
                temporaries.append(temporary)
                try FaultInjection.point(.write)
                guard FileManager.default.createFile(atPath: temporary, contents: file.data) else {
                    throw MapcError.file("\(file.path): cannot write (\(String(cString: strerror(errno)))); nothing was written")
                }
                try sync(temporary)
                written.append(Files.identity(of: temporary))
                if target.exists { try copyAttributes(from: target.target, to: temporary) }
            }
            for (target, temporary) in zip(targets, temporaries) {
                if target.exists {
                    let copy = AtomicFile.temporaryPath(besides: target.target)
                    try hardLink(target.target, as: copy)
                    kept.append((target.target, copy))
                    try replace(target.target, with: temporary)
                } else {
                    try moveIntoPlace(temporary, target.target)
                }
            }
        } catch {
            undo()
            throw error
        }
        for (_, copy) in kept { unlink(copy) }
    }
}
