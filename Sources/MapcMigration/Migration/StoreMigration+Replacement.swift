import Foundation
import MapcFoundation
import MapcModel
import MapcStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a migrated store takes the original's place: read back, moved or swapped in atomically with
/// Core Data's external data beside it, the backup named, and what a killed run left removed.
extension StoreMigration {
    /// Opens the migrated store as a reader would, its layout read from the file, and reads a
    /// batch of each entity's objects: what was validated with the layout it was written with is
    /// then known to read back (a column named otherwise than its reader looks for fails here,
    /// before anything is replaced, instead of in the app).
    static func readBack(_ path: String, schema: Schema) throws {
        struct Enough: Error {}
        do {
            let store = try Store.open(at: path, schema: schema, readOnly: true)
            defer { try? store.close() }
            for entity in schema.entities where !entity.isAbstract {
                do { try store.forEachBatch(ofExactEntity: entity.name, batchSize: 100) { _ in throw Enough() } } catch is Enough {}
            }
        } catch {
            throw MigrationError.setup("the migrated store could not be read back as written (\((error as? MapcError)?.description ?? "\(error)")); nothing was replaced. This is mapc's fault: please report it with the store's model")
        }
    }

    /// Core Data's external values beside the store (`CoreDataExternalData`) and how many, to
    /// take beside an output; nil when it has none, or when the run converts the store to another
    /// format (whose store keeps each value's bytes: a copy reads them out of their files, as
    /// expressions and policies do). An output's support folder must be free, checked before
    /// anything is read. A killed run's unfinished copy beside the output goes first, whatever
    /// this store holds.
    static func externalData(of store: String, output: String?, options: MigrationOptions) throws -> (CoreDataExternalData, (files: Int, bytes: Int64))? {
        let copies = output != nil && !options.dryRun
        if let output, copies {
            let moved = CoreDataExternalData(store: output)
            if moved.exists, Files.kind(of: output) == .missing, moved.isUnfinishedCopy { moved.remove() }
        }
        let external = CoreDataExternalData.beside(store: store)
        guard external.exists else { return nil }
        let format = try Store.metadata(at: store).format
        guard format.identifier == StoreFormat.coreData.identifier else { return nil }
        if let destination = options.destinationFormat, destination.identifier != format.identifier { return nil }
        // Where the values are copied, a folder that cannot be walked (a FIFO, a link to nothing,
        // a loop) is said, not taken for one without values.
        guard let values = try copies ? external.countedValues() : external.values() else { return nil }
        if let output, copies {
            let moved = CoreDataExternalData(store: output)
            if moved.isSameFolder(as: external) {
                throw MapcError.file("\(output) and \(store) would share \(Files.fileURL(external.supportFolder).lastPathComponent), where Core Data keeps the store's "
                                     + "external values (\(external.describe(values))): choose an output name with another stem, or another folder")
            }
            if moved.exists {
                throw MapcError.file("\(moved.supportFolder) already exists: the migrated store's copy of the external values (\(external.describe(values))) "
                                     + "goes there. Move or delete it, or choose another output name")
            }
        }
        return (external, values)
    }

    /// Puts the store's external values beside a new store at `output` before `moveStore` puts
    /// the store there (so that the store never appears without them; if the move fails they
    /// are removed again), and returns the note saying so. Without external values, just moves.
    static func carry(_ found: (CoreDataExternalData, (files: Int, bytes: Int64))?, to output: String, options: MigrationOptions, moveStore: () throws -> Void) throws -> [String] {
        guard let (external, values) = found else {
            try moveStore()
            return []
        }
        let moved = CoreDataExternalData(store: output)
        do { try external.copy(to: moved, isCancelled: options.isCancelled) } catch is CancellationError { throw MigrationError.cancelled }
        do { try moveStore() } catch {
            // A move that failed after the store was in place (flushing its folder) leaves it
            // there, complete: its values stay beside it.
            if Files.kind(of: output) == .missing { moved.remove() } else { moved.finish() }
            throw error
        }
        moved.finish()
        return ["copied the store's external values (\(external.describe(values))) to \(Files.fileURL(moved.supportFolder).lastPathComponent) beside the new store"]
    }

    /// Moves the migrated store at `temporary` to the new file `output` the user asked for
    /// (removing it if that fails or the run was cancelled).
    static func moveIntoPlace(_ temporary: String, at output: String, options: MigrationOptions) throws {
        do {
            // The last moment a cancellation can be honoured: nothing is in place yet.
            if options.isCancelled() { throw MigrationError.cancelled }
            try Files.moveIntoPlace(temporary, output)
        } catch {
            AtomicFile.removeStoreFiles(temporary)
            throw error
        }
    }

    /// Replaces the store at `real` with the migrated store at `temporary` under the exclusive
    /// lock (its attributes copied, the original hard-linked as a backup when asked): the path
    /// of the backup, or nil. If anything fails, the store is as it was and nothing is left.
    static func replace(_ real: String, with temporary: String, exclusion: WriterExclusion, options: MigrationOptions,
                                sourceVersion: String) throws -> String? {
        var backup: String?
        do {
            try exclusion.prepareReplacement()
            // The last moment a cancellation can be honoured (the exclusive lock may have waited).
            if options.isCancelled() { throw MigrationError.cancelled }
            try Files.copyAttributes(from: real, to: temporary)
            if options.keepBackup {
                let name = backupName(real, version: sourceVersion)
                try Files.hardLink(real, as: name)
                backup = name
            }
            try Files.replace(real, with: temporary)
        } catch {
            exclusion.restoreJournalMode()
            if let backup { unlink(backup) }
            AtomicFile.removeStoreFiles(temporary)
            throw error
        }
        return backup
    }

    /// The name `--keep-backup` keeps the original under: `STORE.backup-<version>-<time>`.
    static func backupName(_ real: String, version: String, at time: Date = Date()) -> String {
        "\(real).backup-\(version)-\(ISO8601.milliseconds(time).replacingOccurrences(of: ":", with: ""))"
    }

    /// Why the backup cannot be kept under its name (longer than the system's 255 bytes), said
    /// before the run rather than once every step is done; nil when it can.
    static func backupNameProblem(_ real: String, version: String) -> String? {
        let name = Files.fileURL(backupName(real, version: version)).lastPathComponent
        guard name.utf8.count > 255 else { return nil }
        return "\(real)'s backup would be named \(name.utf8.count) bytes long (the store's name, .backup-, the version and the time), more than the 255 a file name may have; "
            + "nothing was changed. Give the store a shorter name, or keep a copy yourself and run without --keep-backup"
    }

    /// Removes temporary files a killed run left beside the store (only ever called under the lock).
    static func removeLeftovers(besides path: String) {
        for path in leftovers(besides: path) {
            // A folder is a copy of Core Data's external data made for an output (CoreDataExternalData).
            if Files.kind(of: path) == .directory { try? FileManager.default.removeItem(atPath: path) } else { unlink(path) }
        }
    }

    /// The temporary files (and folders) a killed run left beside the store, which its next run
    /// removes: `status` names them, since a run that is going on has such files too. Among
    /// them, a `--keep-backup` name (`STORE.backup-…`) that is the store itself: a run keeps the
    /// original under it, then puts the migrated file in the store's place; killed between the
    /// two, it left the unchanged store with two names, which every later run refused as a hard
    /// link (`killedRunBackups`).
    package static func leftovers(besides path: String) -> [String] {
        let url = Files.fileURL(path)
        let folder = url.deletingLastPathComponent().path
        let prefix = AtomicFile.temporaryPrefix(for: url.lastPathComponent)
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            // `.tmp` after the prefix, where the run's own part is (`<pid>-<n>.tmp`): a store's name
            // may hold `.tmp` itself, and a long name's lock begins with the same prefix.
            .filter { $0.hasPrefix(prefix) && $0.dropFirst(prefix.count).contains(".tmp") }
            .map { (folder as NSString).appendingPathComponent($0) } + killedRunBackups(of: path)
    }

    /// The `--keep-backup` names beside the store that are the store itself (the same file, not
    /// a copy): what a run killed between keeping the backup and replacing the store left. A
    /// backup of a run that finished is the old file, another than the store.
    package static func killedRunBackups(of path: String) -> [String] {
        let url = Files.fileURL(path)
        let folder = url.deletingLastPathComponent().path, prefix = url.lastPathComponent + ".backup-"
        var store = stat()
        guard lstat(path, &store) == 0, store.st_nlink > 1 else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().filter { $0.hasPrefix(prefix) }.compactMap { name in
            let other = (folder as NSString).appendingPathComponent(name)
            var info = stat()
            guard lstat(other, &info) == 0, info.st_dev == store.st_dev, info.st_ino == store.st_ino else { return nil }
            return other
        }
    }
}
