import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

@Suite("Keeping writers out during a migration")
struct StoreSafetyTests {
    private func store() throws -> (URL, String) {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("notes.db").path
        let store = try Store.create(at: path, schema: try uncloudNotes("v2"))
        try store.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("t"), "body": .string("b"), "dateCreated": .date(Date()), "displayIndex": .integer(0)])])
        try store.database.close()
        return (folder, path)
    }

    /// Who holds a store open is read from the system's table of locks: another process's lock
    /// on SQLite's shared bytes of that file counts; its waiting locks, other files' locks, locks
    /// elsewhere in the file and this process's own do not.
    @Test func theLockTableNamesOtherProcessesHoldingTheSharedBytes() throws {
        let table = """
            1: POSIX  ADVISORY  READ 4242 fe:00:16646827 1073741826 1073742335
            2: POSIX  ADVISORY  READ 4243 fe:00:16646851 1073741826 1073742335
            3: POSIX  ADVISORY  WRITE 4244 fe:00:16646827 1073741824 1073741824
            4: -> POSIX  ADVISORY  WRITE 4245 fe:00:16646827 1073741826 1073742335
            5: POSIX  ADVISORY  WRITE 4246 fe:00:16646827 0 EOF
            6: POSIX  ADVISORY  READ 99 fe:00:16646827 1073741900 1073741900
            7: FLOCK  ADVISORY  WRITE 4247 fe:00:16646827 0 EOF
            8: POSIX  ADVISORY  READ 4242 fe:00:16646827 1073741826 1073742335
            """
        // Device 0xfe00 (major fe, minor 00) as stat gives it; this process is 99.
        #expect(LockHolders.holders(in: table, device: 0xfe00, inode: 16646827, excluding: 99) == [4242, 4246])
        #expect(LockHolders.holders(in: table, device: 0xfe01, inode: 16646827, excluding: 99) == [])
        // A store nobody has open (RunCommandTests has an app holding one, in another process).
        let (folder, path) = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(LockHolders.processesSharing(path) == [], "nobody holds it")
    }

    /// The source's checks on their own thread: they pass on a sound store, report a damaged
    /// one's findings whenever they are asked, and a cancelled step interrupts them.
    @Test func theSourceChecksRunBesideTheStepAndReportWhatTheyFound() throws {
        let (folder, path) = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v2 = try uncloudNotes("v2")
        let sound = SourceChecks(path: path, schema: v2)
        try sound.wait()
        try sound.wait()
        #expect(!sound.hasFailed)
        #expect(sound.failure(after: MigrationError.cancelled) == nil)
        // A page no b-tree uses: reads work, quick_check does not pass.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pages = bytes[28..<32].reduce(0) { $0 << 8 | Int($1) }
        bytes.replaceSubrange(28..<32, with: withUnsafeBytes(of: UInt32(pages + 1).bigEndian) { Data($0) })
        bytes.append(Data(count: pageSize))
        try bytes.write(to: URL(fileURLWithPath: path))
        let damaged = SourceChecks(path: path, schema: v2)
        let error = #expect(throws: MapcError.self) { try damaged.wait() }
        #expect(error?.description.contains("is damaged (SQLite's integrity check: ") == true, "\(String(describing: error))")
        #expect(damaged.hasFailed)
        // After any failure of the step, the damage is what is reported.
        #expect((damaged.failure(after: MigrationError.cancelled) as? MapcError)?.description.contains("is damaged") == true)
        #expect((damaged.failure(after: MigrationError.setup("x")) as? MapcError)?.description.contains("is damaged") == true)
    }

    /// A dry run (or a run that fails) leaves a WAL store's files as they were, byte for byte:
    /// the exclusion's connection does not fold the log into the file when it closes.
    @Test func aDryRunLeavesAWALStoresFilesByteForByte() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v2 = try uncloudNotes("v2")
        let live = folder.appendingPathComponent("live.db").path
        let writer = try Store.create(at: live, schema: v2)
        _ = try writer.database.writeWithoutTransaction { try String.fetchOne($0, sql: "PRAGMA journal_mode=WAL") }
        try writer.database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint=0") }
        try writer.insert([ObjectData(id: "n1", entity: "Note", attributes: ["title": .string("t"), "body": .string("b"), "dateCreated": .date(Date()), "displayIndex": .integer(0)])])
        // Copy the files while the writer holds them: the note is only in the -wal file.
        let path = folder.appendingPathComponent("notes.db").path
        for suffix in ["", "-wal", "-shm"] { try FileManager.default.copyItem(atPath: live + suffix, toPath: path + suffix) }
        try writer.database.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path)), beforeWAL = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        var options = MigrationOptions()
        options.dryRun = true
        let mapping = try #require(MappingLoader.parse(source: SourceFile(path: "m.yaml", text: try String(contentsOf: packageRoot.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"), encoding: .utf8))).mapping)
        _ = try StoreMigration.run(store: path, source: v2, destination: try uncloudNotes("v3"), mapping: mapping, options: options)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the store file is untouched")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")) == beforeWAL, "its log too")
        #expect(try Store.open(at: path, schema: v2, readOnly: true).count(of: "Note") == 1)
    }

    @Test(arguments: ["delete", "wal"])
    func whileTheExclusionIsHeldNoConnectionCommitsAndReadersGoOn(journalMode: String) throws {
        let (folder, path) = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        try DatabaseQueue(path: path).writeWithoutTransaction { _ = try String.fetchOne($0, sql: "PRAGMA journal_mode = \(journalMode)") }
        let exclusion = try WriterExclusion(realPath: path, name: "notes.db")
        #expect(exclusion.wasWAL == (journalMode == "wal"))
        var configuration = Configuration()
        configuration.busyMode = .immediateError
        let app = try DatabaseQueue(path: path, configuration: configuration)
        #expect(throws: DatabaseError.self) { try app.write { try $0.execute(sql: "DELETE FROM Note") } }
        #expect(try app.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM Note") } == 1, "readers are still let in")
        try app.close()
        try exclusion.prepareReplacement()
        exclusion.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "a WAL store is folded into its file before it is replaced")
    }

    @Test func anOpenWALConnectionInAnotherProcessStopsTheReplacement() throws {
        let (folder, path) = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        try DatabaseQueue(path: path).writeWithoutTransaction { _ = try String.fetchOne($0, sql: "PRAGMA journal_mode = wal") }
        let app = Process()
        app.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        app.arguments = ["python3", "-c", "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.execute('SELECT count(*) FROM Note').fetchone()\nprint('open', flush=True)\nsys.stdin.read()", path]
        let input = Pipe(), output = Pipe()
        app.standardInput = input
        app.standardOutput = output
        try app.run()
        defer { try? input.fileHandleForWriting.close(); app.waitUntilExit() }
        _ = output.fileHandleForReading.availableData
        let exclusion = try WriterExclusion(realPath: path, name: "notes.db")
        let error = #expect(throws: MapcError.self) { try exclusion.prepareReplacement() }
        #expect(error?.description.contains("notes.db is in use") == true, "\(String(describing: error))")
        exclusion.restoreJournalMode()
        exclusion.close()
    }
}

/// A private store's data never sits in a file others can read: every file a migration writes
/// (each step's, the output) is created readable by its owner alone, and takes the store's
/// permissions (never more) at the end.
@Suite("Permissions of the files a migration writes", .serialized)
struct MigrationFilePermissionTests {
    /// The permission bits of every temporary file beside the store, seen during the run.
    @Test func everyStepsFileOfAPrivateStoreIsPrivate() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        chmod(app.storeURL.path, 0o600)
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        nonisolated(unsafe) var modes: [String: mode_t] = [:]
        let folder = app.folder.path
        _ = try migrator.migrate(storeAt: app.storeURL) { _ in
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".tmp") {
                var info = stat()
                if stat(folder + "/" + name, &info) == 0 { modes[name] = info.st_mode & 0o777 }
            }
        }
        #expect(modes.count >= 2, "the run's step files were seen: \(modes)")
        #expect(modes.values.allSatisfy { $0 & 0o077 == 0 }, "\(modes.mapValues { String($0, radix: 8) })")
        var info = stat()
        #expect(stat(app.storeURL.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    /// A migration written to another file keeps the store's permissions (cp's rule: the store's
    /// bits, less the umask), where it was readable by all.
    @Test func anOutputOfAPrivateStoreIsPrivate() throws {
        let app = try LibraryGuideTests.App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        chmod(app.storeURL.path, 0o600)
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"), mappingsFolder: app.resources.appendingPathComponent("mappings"))
        let output = app.folder.appendingPathComponent("out.sqlite")
        var options = MigrationOptions()
        options.output = output
        _ = try migrator.migrate(storeAt: app.storeURL, options: options)
        var info = stat()
        #expect(stat(output.path, &info) == 0 && info.st_mode & 0o077 == 0, "\(String(info.st_mode & 0o777, radix: 8))")
        // And a store at the version already, copied there.
        let copy = app.folder.appendingPathComponent("copy.sqlite")
        options.output = copy
        _ = try migrator.migrate(storeAt: output, options: options)
        #expect(stat(copy.path, &info) == 0 && info.st_mode & 0o077 == 0, "\(String(info.st_mode & 0o777, radix: 8))")
    }
}
