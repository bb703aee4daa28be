import Foundation
import Testing

/// Defects a probe of the environments mapc runs in found (descriptors, permissions, users,
/// files in the way), run through the CLI as a user does.
@Suite("Defects found by a probe of environments", .serialized)
struct EnvironmentProbeDefectTests {
    /// Runs a shell command line with `$MAPC` the executable, in `folder`.
    private func shell(_ line: String, in folder: URL) throws -> CLIResult {
        try CLI.run(["-c", line], in: folder, environment: ["MAPC": CLI.executable.path], program: URL(fileURLWithPath: "/bin/sh"))
    }

    /// A project with a store at v2 (`s.db`).
    private func project() throws -> URL {
        let folder = try CLI.project()
        try CLI.addMappingsAndPolicies(to: folder)
        #expect(try CLI.run(["init", "--schema", "v2", "s.db"], in: folder).status == 0)
        return folder
    }

    /// Standard error that cannot be written (a full device, a closed descriptor) crashed the run
    /// at its first progress line (SIGILL, 132: Foundation's write traps), and a mistyped command;
    /// the run completes now, and the statuses are the documented ones.
    @Test func anUnwritableStandardErrorEndsNothing() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let full = try shell(#""$MAPC" run --to v3 s.db 2>/dev/full; echo "rc=$?""#, in: folder)
        #expect(full.stdout.contains("rc=0"), "\(full.stdout)")
        let closed = try shell(#""$MAPC" run s.db 2>&-; echo "rc=$?""#, in: folder)
        #expect(closed.stdout.contains("rc=0"), "\(closed.stdout)")
        #expect(try CLI.run(["status", "s.db"], in: folder).stdout.contains("v4"))
        #expect(try shell(#""$MAPC" runn 2>/dev/full; echo "rc=$?""#, in: folder).stdout.contains("rc=64"))
    }

    /// Standard input closed or a folder: `--stores-from -` and `lsp` crashed (132).
    @Test func anUnreadableStandardInputIsSaid() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let closed = try shell(#""$MAPC" status --stores-from - <&-; echo "rc=$?""#, in: folder)
        #expect(closed.stdout.contains("rc=2") && closed.stderr.contains("cannot read the list of stores from standard input"), "\(closed.stdout)\(closed.stderr)")
        let folderInput = try shell(#""$MAPC" plan --stores-from - < /; echo "rc=$?""#, in: folder)
        #expect(folderInput.stdout.contains("rc=2"), "\(folderInput.stdout)\(folderInput.stderr)")
        let lsp = try shell(#""$MAPC" lsp < /; echo "rc=$?""#, in: folder)
        #expect(lsp.stdout.contains("rc=1") && lsp.stderr.contains("standard input cannot be read"), "\(lsp.stdout)\(lsp.stderr)")
    }

    /// `dump --output` named the store it reads (or its write-ahead log): it replaced the store
    /// with its JSON, or a committed change in the log was lost. Refused now, the store as it was.
    @Test func aDumpIsNeverWrittenOverItsStore() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: folder.appendingPathComponent("s.db"))
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("link.db").path, withDestinationPath: "s.db")
        for output in ["s.db", "./s.db", "link.db", "s.db-wal", "s.db-journal", "s.db.mapc-lock"] {
            let dump = try CLI.run(["dump", "s.db", "--output", output], in: folder)
            #expect(dump.status == 2 && dump.stderr.contains("is the store being dumped"), "\(output): \(dump.stderr)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("s.db")) == before)
        #expect(!folder.exists("s.db-wal") && !folder.exists("s.db-journal"))
    }

    /// `graph --output` and `test --junit` replaced any file, the schema they drew or a fixture
    /// included, where the documented rule is exit 2 for an existing file.
    @Test func graphAndJUnitOutputsReplaceOnlyEarlierOnes() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = try folder.read("schemas/v1.yaml")
        let graph = try CLI.run(["graph", "v1", "--output", "schemas/v1.yaml"], in: folder)
        #expect(graph.status == 2 && graph.stderr.contains("already exists"), "\(graph.stderr)")
        #expect(try folder.read("schemas/v1.yaml") == schema)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("fixtures/v2.sqlite"))
        #expect(try CLI.run(["test", "--record"], in: folder).status == 0)
        let fixture = try Data(contentsOf: folder.appendingPathComponent("fixtures/v2.sqlite"))
        let junit = try CLI.run(["test", "--junit", "fixtures/v2.sqlite"], in: folder)
        #expect(junit.status == 2 && junit.stderr.contains("already exists") && !junit.stdout.contains("passed"), "refused before the cases run: \(junit.stdout)\(junit.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("fixtures/v2.sqlite")) == fixture)
        // An earlier report is replaced, as exports are made again at will.
        #expect(try CLI.run(["test", "--junit", "report.xml"], in: folder).status == 0)
        #expect(try CLI.run(["test", "--junit", "report.xml"], in: folder).status == 0)
        #expect(try CLI.run(["graph", "v1", "--output", "v1.md"], in: folder).status == 0)
        #expect(try CLI.run(["graph", "v2", "--output", "v1.md"], in: folder).status == 0)
    }

    /// A run by root left `STORE.mapc-lock` owned by root, which the store's owner then could not
    /// open ("Invalid argument", where the cause was a denied permission): every later write of
    /// theirs failed. A lock another user made is taken through a read-only descriptor now.
    @Test(.enabled(if: CLI.canRunUnprivileged, "needs root and setpriv to run mapc as nobody"))
    func aLockLeftByRootDoesNotLockTheOwnerOut() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o755)
        chown(folder.path, 65534, 65534)
        chown(folder.appendingPathComponent("s.db").path, 65534, 65534)
        #expect(try CLI.run(["run", "--dry-run", "s.db"], in: folder).status == 0)
        #expect(folder.exists("s.db.mapc-lock"))
        let owner = try CLI.runUnprivileged(["run", "--quiet", "--to", "v3", "s.db"], in: folder)
        #expect(owner.status == 0, "\(owner.stderr)")
    }

    /// The lock was opened through a symbolic link at its name: a run created (as root, anywhere)
    /// the file the link named. Refused now, nothing created.
    @Test func aLinkAtTheLocksNameIsNotFollowed() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("planted-target")
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("s.db.mapc-lock").path, withDestinationPath: target.path)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("symbolic link"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    /// A path that is not UTF-8 (a folder named in Latin-1) was decoded with replacement
    /// characters: a store there was "no such store", and from such a working folder a run
    /// migrated the store of the folder whose name is that decoding, reporting success. Both are
    /// refused now, saying why, and the other folder's store is never touched.
    @Test func aPathThatIsNotUTF8NeverNamesAnotherFile() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let setup = try shell(#"""
            latin=$(printf 'dir\351'); decoded=$(printf 'dir\357\277\275')
            mkdir "$latin" "$decoded" && cp s.db "$latin/s.db" && cp s.db "$decoded/s.db" && cp -r schemas mappings policies "$latin/"
            (cd "$latin" && "$MAPC" run --quiet s.db; echo "rc=$?")
            "$MAPC" status "$decoded/s.db" | grep '^version'
            cp s.db "$(printf 'lat\351.db')"
            "$MAPC" status "$(printf 'lat\351.db')"; echo "named=$?"
            """#, in: folder)
        #expect(setup.stdout.contains("rc=2") && setup.stderr.contains("the working folder's path") && setup.stderr.contains("is not UTF-8 text"), "\(setup.stdout)\(setup.stderr)")
        #expect(setup.stdout.contains("version     v2"), "the other folder's store is untouched: \(setup.stdout)")
        #expect(setup.stdout.contains("named=2") && setup.stderr.contains("argument 2"), "\(setup.stdout)\(setup.stderr)")
    }

    /// A store whose name is long (over about 229 bytes) could not be migrated: its temporary
    /// file's name passed the system's limit ("unable to open database file", naming that file).
    @Test func aStoreWithALongNameIsMigrated() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = String(repeating: "é", count: 110) + "-notes.db"
        try FileManager.default.moveItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent(name))
        let run = try CLI.run(["run", "--quiet", name], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try CLI.run(["status", name], in: folder).stdout.contains("version     v4"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.hasSuffix(".tmp") })
    }

    /// A temporary folder that cannot be used (TMPDIR naming nothing) failed every `mapc test`
    /// case as a failed migration (exit 1), with a raw NSError; as root it was created. It is the
    /// run's problem, said once (exit 2), and nothing is created.
    @Test func anUnusableTemporaryFolderIsSaidOnce() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("fixtures/v2.sqlite"))
        let missing = folder.appendingPathComponent("no-such-folder").path
        let test = try CLI.run(["test", "--record"], in: folder, environment: ["TMPDIR": missing])
        #expect(test.status == 2 && test.stderr.contains("the temporary folder \(missing) cannot be used") && test.stderr.contains("set TMPDIR"), "\(test.stdout)\(test.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// A user whose home folder does not exist (a service user, `nobody`) got a raw NSError
    /// ("You don't have permission") when the policies were to be compiled into the cache.
    @Test(.enabled(if: CLI.canRunUnprivileged, "needs root and setpriv to run mapc as nobody"))
    func aPolicyCacheThatCannotBeMadeIsSaid() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o755)
        let check = try CLI.run(["--reuid=65534", "--regid=65534", "--clear-groups", CLI.executable.path, "check"], in: folder,
                                environment: ["MAPC_CACHE": "", "XDG_CACHE_HOME": "", "HOME": "/nonexistent"], program: URL(fileURLWithPath: "/usr/bin/setpriv"))
        #expect(check.status == 2 && check.stderr.contains("cannot make the policy cache folder") && check.stderr.contains("set MAPC_CACHE"), "\(check.stderr)")
    }

    /// The default cache followed the password file's home, not `$HOME` (as the XDG rules say):
    /// a user of a container, whose home there is `/nonexistent`, could not compile policies
    /// with HOME set to a folder of its own (the upgrade probe).
    @Test(.enabled(if: CLI.canRunUnprivileged, "needs root and setpriv to run mapc as nobody"))
    func theDefaultCacheIsUnderHome() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o777)
        let home = folder.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chown(home.path, 65534, 65534)
        let check = try CLI.run(["--reuid=65534", "--regid=65534", "--clear-groups", CLI.executable.path, "check"], in: folder,
                                environment: ["MAPC_CACHE": "", "XDG_CACHE_HOME": "", "HOME": home.path], program: URL(fileURLWithPath: "/usr/bin/setpriv"))
        #expect(check.status == 0, "\(check.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent(".cache/mapc").path))
    }

    /// A pipe given as a store (`/dev/stdin` of a pipeline, process substitution's `/dev/fd/N`)
    /// was "a symbolic link to pipe:[N] … that does not exist": it is a pipe, which mapc cannot read.
    @Test func aPipeGivenAsAStoreIsSaidToBeOne() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        for command in ["status", "dump", "run"] {
            let piped = try shell(#"cat s.db | "$MAPC" \#(command) /dev/stdin; echo "rc=$?""#, in: folder)
            #expect(piped.stdout.contains("rc=2") && piped.stderr.contains("/dev/stdin is a pipe") && piped.stderr.contains("regular files only")
                    && !piped.stderr.contains("does not exist"), "\(command): \(piped.stderr)")
        }
    }

    /// A full disk under `--output` said to free space "where the store is", which was not full.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs root to mount a small tmpfs"))
    func aFullOutputDiskIsNotCalledTheStoresDisk() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v2.sqlite"), to: folder.appendingPathComponent("s.db"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("small"), withIntermediateDirectories: true)
        #expect(try CLI.run(["check"], in: folder).status == 0)
        let run = try CLI.run(["-m", "sh", "-c", #"mount -t tmpfs -o size=12k tmpfs small && "$MAPC" run --quiet --to v4 --output small/new.db s.db"#], in: folder,
                              environment: ["MAPC": CLI.executable.path], program: URL(fileURLWithPath: "/usr/bin/unshare"))
        #expect(run.status == 2 && run.stderr.contains("the disk is full") && run.stderr.contains("--output") && !run.stderr.contains("where the store is"), "\(run.stderr)")
    }

    /// Help that could not be written (`mapc --help > /dev/full`) exited 0, a reader told it was
    /// there; `mapc help run extra` printed run's help and exited 0, the extra word unread.
    @Test func helpIsWrittenOrSaidAndReadsEveryWord() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        for line in [#""$MAPC" --help"#, #""$MAPC" run --help"#, #""$MAPC" help run"#, #""$MAPC" --version"#] {
            let full = try shell(line + " > /dev/full", in: folder)
            #expect(full.status == 2 && full.stderr.contains("cannot write to standard output"), "\(line): \(full.status) \(full.stderr)")
        }
        let help = try CLI.run(["help", "run"], in: folder)
        #expect(help.status == 0 && help.stdout.contains("USAGE: mapc run"), "\(help.stdout)")
        #expect(try CLI.run(["run", "--help"], in: folder).stdout == help.stdout)
        let extra = try CLI.run(["help", "run", "extra"], in: folder)
        #expect(extra.status == 64 && extra.stderr.contains("'extra'") && extra.stdout.isEmpty, "\(extra.status) \(extra.stderr)")
    }
}
