import Foundation
import MapcKit
#if canImport(Glibc)
import Glibc
#endif

/// Where compiled policies are kept: `$MAPC_CACHE`, else `$XDG_CACHE_HOME/mapc`, else
/// `~/.cache/mapc`, under `policies/<key>/`, the key a digest of mapc's build identity, the
/// compiler, and the policy files' names and contents.
///
/// A library in the cache is code this process will run, so the cache is the user's alone: it is
/// created private (0700), and a folder or file in it that another user owns or may write to is
/// refused. Each entry records the SHA-256 of its library, checked before it is loaded: an entry
/// that does not match (changed, cut short, replaced) is discarded and compiled again. The cache
/// keeps the `limit` entries used last.
struct PolicyCache {
    /// The cache's root folder.
    var root: URL
    /// How many compiled sets of policies are kept.
    var limit = 32

    /// The library's and its digest's names in an entry.
    static let libraryName = "libpolicies.so", digestName = "sha256"

    /// The cache of this user and environment.
    static var current: PolicyCache {
        let environment = ProcessInfo.processInfo.environment
        if let cache = environment["MAPC_CACHE"], !cache.isEmpty { return PolicyCache(root: Files.fileURL(cache)) }
        // `$HOME`, as the XDG rules say, before the password file's (a container's arbitrary user
        // has `/nonexistent` there, and a redirected HOME was not followed).
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : Files.fileURL($0) } ?? FileManager.default.homeDirectoryForCurrentUser
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : Files.fileURL($0) } ?? home.appendingPathComponent(".cache")
        return PolicyCache(root: base.appendingPathComponent("mapc"))
    }

    /// The folder of compiled policies, created private when missing, checked to be the user's alone.
    func entries() throws -> URL {
        let folder = root.appendingPathComponent("policies")
        for url in [root, folder] {
            if !FileManager.default.fileExists(atPath: url.path) {
                // A missing parent (`~/.cache`) is made as any program makes it; the folder itself private.
                if mkdir(url.path, 0o700) != 0 && errno == ENOENT {
                    do { try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true) } catch {
                        // A home folder that does not exist (a service user's): said, with where else to keep it.
                        throw PolicyError("cannot make the policy cache folder \(url.path) (\(url.deletingLastPathComponent().path) cannot be made: \(Files.reason(of: error))); "
                                          + "set MAPC_CACHE (or XDG_CACHE_HOME) to a folder of your own", status: MapcExitCode.storeError)
                    }
                    _ = mkdir(url.path, 0o700)
                }
            }
            // Whoever made it (this process, or another in the meantime), it must be the user's alone.
            try Self.requireOwnedAndPrivate(url, what: "the policy cache folder")
        }
        return folder
    }

    /// Refuses a path another user owns or may write to (or that is not what it should be). A
    /// cache folder may be a link (a cache kept on another disk) when the link is the user's (or
    /// the system's) and leads to a folder that passes the same checks.
    static func requireOwnedAndPrivate(_ url: URL, what: String, regularFile: Bool = false) throws {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            throw PolicyError("cannot read \(what) \(url.path): \(String(cString: strerror(errno)))", status: MapcExitCode.storeError)
        }
        let kind = info.st_mode & S_IFMT
        if regularFile ? kind != S_IFREG : (kind != S_IFDIR && kind != S_IFLNK) {
            throw PolicyError("\(what) \(url.path) is not a \(regularFile ? "regular file" : "folder"); remove it, or set MAPC_CACHE to another folder", status: MapcExitCode.storeError)
        }
        if kind == S_IFLNK {
            guard info.st_uid == geteuid() || info.st_uid == 0 else {
                throw PolicyError("\(what) \(url.path) is a link another user made (uid \(info.st_uid)): mapc runs only code from a cache that is yours alone; set MAPC_CACHE to a folder of your own", status: MapcExitCode.storeError)
            }
            guard stat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw PolicyError("\(what) \(url.path) is a link that does not lead to a folder; remove it, or set MAPC_CACHE to another folder", status: MapcExitCode.storeError)
            }
        }
        try requireOwnedAndPrivate(info, path: url.path, what: what)
    }

    /// The owner and mode checks, on what `stat` says of a file or an open descriptor.
    static func requireOwnedAndPrivate(_ info: stat, path: String, what: String) throws {
        if info.st_uid != geteuid() {
            throw PolicyError("\(what) \(path) belongs to another user (uid \(info.st_uid)): mapc runs only code from a cache that is yours alone; set MAPC_CACHE to a folder of your own", status: MapcExitCode.storeError)
        }
        if info.st_mode & 0o022 != 0 {
            throw PolicyError("\(what) \(path) may be written by other users (mode \(String(info.st_mode & 0o777, radix: 8))): mapc runs only code from a cache that is yours alone; `chmod go-w \(path)`, or set MAPC_CACHE to a folder of your own", status: MapcExitCode.storeError)
        }
    }

    /// The library of an entry, opened and checked, when it is there and is what mapc compiled:
    /// an open descriptor (loaded as `/proc/self/fd/N`, so that what was checked is what is
    /// loaded, whatever happens to the paths meanwhile). Each folder below the cache's root is
    /// opened without following links, each checked on its descriptor, and the library's digest
    /// is taken from the descriptor. An entry that does not pass is removed and nil returned, so
    /// that it is compiled again.
    func verifiedLibrary(key: String) throws -> OpenLibrary? {
        let folder = try entries()
        let entry = folder.appendingPathComponent(key)
        guard FileManager.default.fileExists(atPath: entry.path) else { return nil }
        func checked(_ fd: Int32, _ path: String, _ what: String) throws -> Int32 {
            var info = stat()
            guard fd >= 0, fstat(fd, &info) == 0 else { throw PolicyError("cannot open \(what) \(path): \(String(cString: strerror(errno)))", status: MapcExitCode.storeError) }
            try Self.requireOwnedAndPrivate(info, path: path, what: what)
            return fd
        }
        let policies = try checked(open(folder.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), folder.path, "the policy cache folder")
        defer { close(policies) }
        let entryFD = openat(policies, key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard entryFD >= 0 else { return nil }
        defer { close(entryFD) }
        _ = try checked(entryFD, entry.path, "the policy cache entry")
        let libraryFD = openat(entryFD, Self.libraryName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        var library: OpenLibrary?
        if libraryFD >= 0 {
            var info = stat()
            if fstat(libraryFD, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                try Self.requireOwnedAndPrivate(info, path: entry.appendingPathComponent(Self.libraryName).path, what: "the compiled policies")
                let data = FileHandle(fileDescriptor: libraryFD, closeOnDealloc: false).readDataToEndOfFile()
                let recordFD = openat(entryFD, Self.digestName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                let recorded = recordFD >= 0 ? String(decoding: FileHandle(fileDescriptor: recordFD, closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines) : nil
                if recorded == VersionHash.sha256(data) { library = OpenLibrary(descriptor: libraryFD, path: entry.appendingPathComponent(Self.libraryName).path) }
            }
            if library == nil { close(libraryFD) }
        }
        guard let library else {
            Console.err("warning: the compiled policies in \(entry.path) are not what mapc compiled (changed, cut short or replaced); compiling them again")
            try? FileManager.default.removeItem(at: entry)
            return nil
        }
        // Used now: the newest to keep.
        utimes(entry.path, nil)
        return library
    }

    /// Moves a freshly compiled library into the cache as the entry `key`, with its digest, then
    /// removes the entries used longest ago beyond the limit. Returns it, opened and checked.
    func store(_ library: URL, key: String) throws -> OpenLibrary {
        let folder = try entries()
        let temporary = folder.appendingPathComponent(".\(key).\(getpid())")
        try? FileManager.default.removeItem(at: temporary)
        guard mkdir(temporary.path, 0o700) == 0 else {
            throw PolicyError("cannot write to the policy cache \(folder.path): \(String(cString: strerror(errno)))", status: MapcExitCode.storeError)
        }
        let data = try Data(contentsOf: library)
        try data.write(to: temporary.appendingPathComponent(Self.libraryName))
        chmod(temporary.appendingPathComponent(Self.libraryName).path, 0o700)
        try Data((VersionHash.sha256(data) + "\n").utf8).write(to: temporary.appendingPathComponent(Self.digestName))
        let entry = folder.appendingPathComponent(key)
        try? FileManager.default.removeItem(at: entry)
        guard rename(temporary.path, entry.path) == 0 else {
            throw PolicyError("cannot write to the policy cache \(folder.path): \(String(cString: strerror(errno)))", status: MapcExitCode.storeError)
        }
        prune(folder)
        guard let opened = try verifiedLibrary(key: key) else {
            throw PolicyError("the policies compiled into \(entry.path) could not be read back; set MAPC_CACHE to a folder of your own", status: MapcExitCode.storeError)
        }
        return opened
    }

    /// Keeps the `limit` entries used last.
    private func prune(_ folder: URL) {
        let keys: [URLResourceKey] = [.contentModificationDateKey]
        let entries = ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: keys)) ?? [])
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .map { ($0, (try? $0.resourceValues(forKeys: Set(keys)).contentModificationDate) ?? .distantPast) }
            .sorted { $0.1 > $1.1 }
        for (old, _) in entries.dropFirst(limit) { try? FileManager.default.removeItem(at: old) }
    }
}

/// A compiled library held open: what was checked is what gets loaded.
struct OpenLibrary {
    /// The open descriptor.
    var descriptor: Int32
    /// Its path in the cache, for messages.
    var path: String

    /// The name `dlopen` loads it by: the descriptor's (Linux), else the path.
    var loadName: String {
        let name = "/proc/self/fd/\(descriptor)"
        return FileManager.default.fileExists(atPath: name) ? name : path
    }
}

