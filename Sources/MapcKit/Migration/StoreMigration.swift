import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How `StoreMigration.run` treats the store.
public struct MigrationOptions: Sendable {
    /// Migrate and validate into a temporary file, report, and leave the store untouched.
    public var dryRun = false
    /// Write the migrated store here (a new file) instead of replacing the store.
    public var outputPath: String?
    /// Keep the original store as `STORE.backup-<version>-<timestamp>` next to it.
    public var keepBackup = false
    /// Source objects read per batch.
    public var batchSize = 2_000
    /// Compile what SQLite can run with the same results into SQL; off, every object goes
    /// through the interpreter (slower; for comparing results).
    public var allowsSQL = true
    /// Creates default options: replace the store in place, no backup.
    public init() {}
}

/// What a run did.
public struct MigrationOutcome: Sendable {
    /// The per-mapping and per-phase summary.
    public var summary: MigrationSummary
    /// Where the migrated store is (the store itself, `--output`, or nil for a dry run).
    public var resultPath: String?
    /// The backup of the original, when kept.
    public var backupPath: String?
}

/// Runs a migration on a store file safely: the store is either untouched at its old version or
/// fully migrated and validated, whatever fails, and whenever the process is killed.
///
/// 1. An exclusive lock (`STORE.mapc-lock`, released by the kernel if the process dies) keeps two
///    migrations of one store apart; under it, files left by an earlier killed run are removed.
/// 2. The destination is built in a temporary file beside the store, validated, flushed to disk.
/// 3. The original's write-ahead log is checkpointed and removed (a new file must never meet an
///    old `-wal`), an optional backup is hard-linked, and the temporary file is renamed over the
///    store: one atomic step. The folder is then synced.
public enum StoreMigration {
    /// The lock file's path for a store.
    public static func lockPath(for store: String) -> String { store + ".mapc-lock" }

    /// Migrates `store` with `mapping` from its schema to `destination`.
    public static func run(store path: String, source: Schema, destination: Schema, mapping: MappingModel, options: MigrationOptions = MigrationOptions(),
                           policies: PolicyRegistry = .shared, progress: ((MigrationProgress) -> Void)? = nil) throws -> MigrationOutcome {
        let lock = try StoreLock(path: lockPath(for: path))
        defer { lock.release() }
        removeLeftovers(besides: path)
        let sourceStore = try Store.open(at: path, schema: source, readOnly: true)
        let target = options.outputPath ?? path
        if let output = options.outputPath, FileManager.default.fileExists(atPath: output) {
            throw MigrationError.setup("\(output) already exists; --output writes a new file")
        }
        let temporary = AtomicFile.temporaryPath(besides: target)
        var summary: MigrationSummary
        do {
            let destinationStore = try Store.create(at: temporary, schema: destination)
            // The temporary file is thrown away on any failure, so it needs no journal while it is built.
            try destinationStore.database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA synchronous = OFF")
            }
            let manager = try MigrationManager(source: sourceStore, mapping: mapping, destinationSchema: destination, policies: policies)
            manager.batchSize = options.batchSize
            manager.allowsSQL = options.allowsSQL
            manager.progress = progress
            summary = try manager.migrate(into: destinationStore)
            try destinationStore.database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            try destinationStore.database.close()
            try sourceStore.database.close()
            try syncFile(temporary)
        } catch {
            AtomicFile.removeStoreFiles(temporary)
            throw error
        }
        if options.dryRun {
            AtomicFile.removeStoreFiles(temporary)
            return MigrationOutcome(summary: summary, resultPath: nil, backupPath: nil)
        }
        if let output = options.outputPath {
            do { try AtomicFile.moveIntoPlace(temporary, output) } catch {
                AtomicFile.removeStoreFiles(temporary)
                throw error
            }
            return MigrationOutcome(summary: summary, resultPath: output, backupPath: nil)
        }
        var backup: String?
        do {
            try retireWriteAheadLog(of: path)
            if options.keepBackup {
                let stamp = ISO8601.format(Date()).replacingOccurrences(of: ":", with: "")
                let name = "\(path).backup-\(source.version)-\(stamp)"
                guard link(path, name) == 0 else { throw MigrationError.setup("cannot create backup \(name): \(String(cString: strerror(errno)))") }
                backup = name
            }
            guard rename(temporary, path) == 0 else { throw MigrationError.setup("cannot replace \(path): \(String(cString: strerror(errno)))") }
            AtomicFile.syncDirectory(of: path)
        } catch {
            AtomicFile.removeStoreFiles(temporary)
            throw error
        }
        return MigrationOutcome(summary: summary, resultPath: path, backupPath: backup)
    }

    /// Removes temporary files a killed run left beside the store (only ever called under the lock).
    static func removeLeftovers(besides path: String) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let prefix = ".\(url.lastPathComponent).mapc-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix(prefix) && name.contains(".tmp") {
            unlink((folder as NSString).appendingPathComponent(name))
        }
    }

    /// Folds the store's `-wal` into the main file and removes it and `-shm`, so the renamed new
    /// file cannot be read with the old log. The data is unchanged.
    static func retireWriteAheadLog(of path: String) throws {
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: path + "-wal") || fileManager.fileExists(atPath: path + "-shm") else { return }
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(2)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
            }
            try queue.close()
        } catch let error as DatabaseError {
            throw MigrationError.setup("\(path) is open in another process (\(error.message ?? "locked")); close the app using it and run again")
        }
        if fileManager.fileExists(atPath: path + "-wal") {
            throw MigrationError.setup("\(path) is open in another process (its -wal file could not be folded in); close the app using it and run again")
        }
    }

    static func syncFile(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw MigrationError.setup("cannot open \(path) to flush it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw MigrationError.setup("cannot flush \(path): \(String(cString: strerror(errno)))") }
    }
}

/// An exclusive, non-blocking advisory lock on a file; the kernel drops it if the process dies.
final class StoreLock {
    private var descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw MigrationError.setup("cannot create lock file \(path): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            descriptor = -1
            throw MigrationError.setup("another migration of this store is running (\(path) is locked); wait for it to finish")
        }
    }

    func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
