import Foundation
import Testing

/// Defects a probe of the contract a script relies on found (exit statuses, what goes to
/// standard output, messages), run through the CLI as a script runs it.
@Suite("Defects found by a probe of the CLI's contract", .serialized)
struct CLIContractProbeDefectTests {
    /// A file where a command makes a folder (`editor-schemas --output`, `import --output`,
    /// `demo --directory`, `install --prefix`) gave Foundation's dump ("Error Domain=
    /// NSCocoaErrorDomain Code=516 … UserInfo={…}") with exit 1: said as such now, exit 2.
    @Test func aFileWhereAFolderGoesIsSaidAsSuch() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("not a folder\n", to: "FILE")
        for command in [["editor-schemas", "--output", "FILE"], ["editor-schemas", "--output", "FILE/sub"], ["demo", "--directory", "FILE"], ["install", "--prefix", "FILE"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 2 && result.stderr.contains("is a file, not a folder") && !result.stderr.contains("Error Domain"), "\(command): \(result.status) \(result.stderr)")
        }
    }
    /// `graph ./nofile.yaml` and `diff ./nofile.yaml v2` said "unknown version './nofile.yaml'",
    /// exit 2, where a missing schema file is exit 1 (as `hash` says it).
    @Test func aMissingSchemaFileIsMissingForGraphAndDiff() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        for command in [["graph", "./nofile.yaml"], ["diff", "./nofile.yaml", "v2"], ["graph", "sub/nofile"], ["hash", "sub/nofile"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 1 && result.stderr.contains("no such file"), "\(command): \(result.status) \(result.stderr)")
        }
        let version = try CLI.run(["diff", "v1", "v9"], in: folder)
        #expect(version.status == 2 && version.stderr.contains("unknown version 'v9'"), "\(version.stderr)")
    }
    /// `dump --output package.json` replaced a package.json (any JSON naming a "version" was
    /// taken for an earlier dump). A dump's first key is "version" and it has "objects".
    @Test func dumpReplacesAnEarlierDumpOnly() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "s.db"], in: folder).status == 0)
        try folder.write(#"{"name": "pkg", "version": "1.2.3"}"#, to: "package.json")
        try folder.write(#"{"settings": {"a": 1}, "version": "2", "objects": []}"#, to: "config.json")
        for file in ["package.json", "config.json"] {
            let before = try folder.read(file)
            let dump = try CLI.run(["dump", "s.db", "--output", file], in: folder)
            #expect(dump.status == 2 && dump.stderr.contains("already exists and is not a data file"), "\(file): \(dump.stderr)")
            #expect(try folder.read(file) == before)
        }
        #expect(try CLI.run(["dump", "s.db", "--output", "d.json"], in: folder).status == 0)
        #expect(try CLI.run(["dump", "s.db", "--output", "d.json"], in: folder).status == 0, "an earlier dump is replaced")
        try folder.write(#"{"version": "v1", "objects": {}}"#, to: "hand.json")
        #expect(try CLI.run(["dump", "s.db", "--output", "hand.json"], in: folder).status == 0, "a data file written by hand too")
    }
    /// A store named with a right-to-left override (U+202E) reordered `run`'s summary, its
    /// batch table and `plan`'s text on standard output, which `status` and standard error show
    /// as `<U+202E>`: shown so on every text for people.
    @Test func aBidirectionalControlInAStoresNameIsShown() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = "a\u{202E}b.db"
        #expect(try CLI.run(["init", "--schema", "v1", name], in: folder).status == 0)
        #expect(try CLI.run(["init", "--schema", "v1", "plain.db"], in: folder).status == 0)
        for command in [["plan", name], ["run", "--dry-run", "--accept-data-loss", name], ["run", "--dry-run", "--accept-data-loss", name, "plain.db"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.stdout.contains("a<U+202E>b.db") && !result.stdout.contains("\u{202E}"), "\(command): \(result.stdout)\(result.stderr)")
        }
    }
    /// `cat d.json | mapc load /dev/stdin s.db` said /dev/stdin was "a symbolic link to
    /// /proc/self/fd/0, which does not exist" and to copy with `cp -rL`: it is a pipe.
    @Test func aPipeNamedAsAFileIsSaidToBeOne() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {}}"#, to: "d.json")
        let load = try CLI.run(["load", "/dev/stdin", "s.db"], in: folder, input: folder.appendingPathComponent("d.json"))
        // A file given as standard input is a file; through a pipe (the shell's `cat … |`) it is not.
        let piped = Process()
        piped.executableURL = URL(fileURLWithPath: "/bin/sh")
        piped.arguments = ["-c", "cat d.json | '\(CLI.executable.path)' load /dev/stdin p.db"]
        piped.currentDirectoryURL = folder
        let errors = Pipe()
        piped.standardError = errors
        piped.standardOutput = FileHandle.nullDevice
        try piped.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        piped.waitUntilExit()
        #expect(piped.terminationStatus == 1 && said.contains("/dev/stdin is a pipe (standard input, say), which mapc does not read") && !said.contains("cp -rL"), "\(said)")
        #expect(load.status == 0, "a file given as standard input is read: \(load.stderr)")
    }
    /// `init --schema v1 FILE/s.db` named a temporary file inside FILE ("cannot open as a
    /// SQLite store"); `test --junit FILE/j.xml` said "No such file or directory", after every
    /// case had run. Each says FILE is a file, before any work.
    @Test func aFileWhereAStoresFolderGoesIsSaidBeforeTheWork() throws {
        let folder = try CLI.projectWithFixtures()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("not a folder\n", to: "FILE")
        let initialized = try CLI.run(["init", "--schema", "v1", "FILE/s.db"], in: folder)
        #expect(initialized.status == 2 && initialized.stderr.contains("FILE/s.db: FILE is a file, not a folder") && !initialized.stderr.contains(".tmp"), "\(initialized.stderr)")
        let test = try CLI.run(["test", "--junit", "FILE/j.xml"], in: folder)
        #expect(test.status == 2 && test.stderr.contains("FILE/j.xml: FILE is a file, not a folder") && !test.stdout.contains("PASS"), "\(test.stdout)\(test.stderr)")
    }
    /// `hash v1`, `graph v1` and `diff v1 v2` failed (exit 1) on a typo in v3.yaml, without
    /// saying why v1 was affected: the versions whose files load are read, said in a note;
    /// the version in error still fails with its errors.
    @Test func aVersionIsReadWhenAnotherVersionsFileHasErrors() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(try folder.read("schemas/v3.yaml").replacingOccurrences(of: "type: string", with: "type: strng"), to: "schemas/v3.yaml")
        for command in [["hash", "v1"], ["graph", "v1"], ["diff", "v1", "v2"]] {
            let result = try CLI.run(command, in: folder)
            #expect(result.status == 0 && result.stderr.contains("the files of v3 in ./schemas have errors") && !result.stdout.isEmpty, "\(command): \(result.stderr)")
        }
        let broken = try CLI.run(["hash", "v3"], in: folder)
        #expect(broken.status == 1 && broken.stderr.contains("unknown type 'strng'"), "\(broken.stderr)")
        // Two files declaring v1 (which is it?): the errors, not one of them picked.
        try folder.write(try folder.read("schemas/v1.yaml"), to: "schemas/v1-copy.yaml")
        let twice = try CLI.run(["hash", "v1"], in: folder)
        #expect(twice.status == 1 && twice.stderr.contains("is also declared by"), "\(twice.stderr)")
    }
    /// `hash mappings/mapping_v2_to_v3.yaml` read the mapping as a schema and reported six
    /// schema errors; it says the file is a mapping.
    @Test func hashOfAMappingFileSaysItIsOne() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let hash = try CLI.run(["hash", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(hash.status == 1 && hash.stderr.contains("is a mapping file, not a schema") && !hash.stderr.contains("unknown key"), "\(hash.stderr)")
    }
    /// `init` in a folder whose versions have no order printed that problem on standard output
    /// as its result's second line, exit 0: it is a warning on standard error (the store is made).
    @Test func initSaysAnUndeterminedOrderAsAWarning() throws {
        let folder = try CLI.project(versions: [("alpha", "  A: { attributes: { x: string? } }\n"), ("beta", "  A: { attributes: { x: string?, y: string? } }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("schemas/versions.yaml"))
        let result = try CLI.run(["init", "--schema", "alpha", "s.db"], in: folder)
        #expect(result.status == 0 && result.stdout == "created s.db: S alpha, 1 entity\n" && result.stderr.contains("warning: the order of the versions alpha, beta cannot be told"), "\(result.stdout)\(result.stderr)")
    }
    /// A review's findings: the quoting hint for text with a backslash led to another text
    /// (`'"50\50"'` is "50(", an octal escape); `check`'s summary named no version ("next to ,")
    /// when the errors were not in a version's file (two files declaring one version).
    @Test func theQuotingHintAndTheSkippedStepsSayOnlyWhatIsTrue() throws {
        let folder = try CLI.project(versions: [("v1", "  A: { attributes: { x: string } }\n"), ("v2", "  A: { attributes: { x: string, note: string? } }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: AToA\n    source: A\n    destination: A\n    attributes:\n      x: $source.x\n      note: '50\\50'\n", to: "mappings/v1_to_v2.yaml")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && !check.stderr.contains("YAML removed the quotes"), "\(check.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings/v1_to_v2.yaml"))
        try folder.write(try folder.read("schemas/v2.yaml"), to: "schemas/v2-copy.yaml")
        let duplicate = try CLI.run(["check"], in: folder)
        #expect(duplicate.status == 1 && duplicate.stderr.contains("is also declared by") && !duplicate.stdout.contains("next to ,"), "\(duplicate.stdout)\(duplicate.stderr)")
    }
}
