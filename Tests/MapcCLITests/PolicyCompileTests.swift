import Foundation
import Testing

/// How mapc compiles and loads a project's policy files: the folder it looks in, the compiler's
/// messages, the cache's checks, and an install that works without the checkout.
@Suite("Compiling and loading policy files", .serialized)
struct PolicyCompileTests {
    /// A project one folder down (`scenario/`) with the shipped example's files.
    private func scenario() throws -> URL {
        let folder = try CLI.project()
        let inner = folder.appendingPathComponent("scenario")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("schemas"), to: inner.appendingPathComponent("schemas"))
        try CLI.addMappingsAndPolicies(to: inner)
        return folder
    }

    @Test func policiesAreFoundBesideTheSchemasFolder() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check", "--schemas", "scenario/schemas", "--mappings", "scenario/mappings"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(!check.stderr.contains("unknown policy"), "\(check.stderr)")
        // The schemas folder named as '.', './' or 'schemas/' (Foundation traps on some of these).
        let inside = folder.appendingPathComponent("scenario/schemas")
        for schemas in [".", "./"] {
            let here = try CLI.run(["check", "--schemas", schemas, "--mappings", "../mappings"], in: inside)
            #expect(here.status == 0 && !here.stderr.contains("unknown policy"), "\(schemas): \(here.stderr)")
        }
        let trailing = try CLI.run(["check", "--schemas", "schemas/", "--mappings", "mappings"], in: folder.appendingPathComponent("scenario"))
        #expect(trailing.status == 0, "\(trailing.stderr)")
    }

    /// A policy's compiler warnings are shown, as a build would show them.
    @Test func aPolicysWarningsAreShown() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("import MapcKit\n\nfinal class Quiet: EntityMigrationPolicy {\n    func unused() { let neverRead = 5 }\n}\n", to: "scenario/policies/Quiet.swift")
        let check = try CLI.run(["check", "--schemas", "scenario/schemas", "--mappings", "scenario/mappings"], in: folder, environment: ["MAPC_CACHE": folder.appendingPathComponent("cache").path])
        #expect(check.status == 0 && check.stderr.contains("Quiet.swift:4:25: warning: initialization of immutable value 'neverRead' was never used"), "\(check.stderr)")
    }

    /// A wrong command line is said before anything is compiled; help compiles nothing.
    @Test func theCommandLineIsCheckedBeforePoliciesAreCompiled() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = ["MAPC_CACHE": folder.appendingPathComponent("cache").path]
        let wrong = try CLI.run(["run", "--jobs", "x", "--schemas", "scenario/schemas", "notes.db"], in: folder, environment: cache)
        #expect(wrong.status == 64 && !wrong.stderr.contains("compiling"), "\(wrong.stderr)")
        let help = try CLI.run(["help", "run"], in: folder, environment: cache)
        #expect(help.status == 0 && !help.stderr.contains("compiling"), "\(help.stderr)")
        #expect(help.stdout.contains("(default: the number of cores).") && !help.stdout.contains("(default: 2)"), "\(help.stdout)")
    }

    @Test func aCompilerErrorKeepsItsSourceLines() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lines = ["import MapcKit", ""] + (3...10).map { "// line \($0)" } + ["final class Broken: EntityMigrationPolicy {", "    let wrong: Int = \"text on line 12\"", "}"]
        try folder.write(lines.joined(separator: "\n") + "\n", to: "scenario/policies/Broken.swift")
        let check = try CLI.run(["check", "--schemas", "scenario/schemas", "--mappings", "scenario/mappings"], in: folder)
        #expect(check.status == 1, "\(check.stderr)")
        #expect(check.stderr.contains("scenario/policies/Broken.swift:12:22: error:"), "\(check.stderr)")
        #expect(check.stderr.contains("12 |     let wrong: Int = \"text on line 12\""), "the line itself is shown: \(check.stderr)")
        #expect(check.stderr.contains("compiling the policies in") && check.stderr.contains("failed after"), "\(check.stderr)")
    }

    @Test func aChangedCachedLibraryIsCompiledAgainAndASharedCacheIsRefused() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = folder.appendingPathComponent("cache")
        let arguments = ["check", "--schemas", "scenario/schemas", "--mappings", "scenario/mappings"]
        let first = try CLI.run(arguments, in: folder, environment: ["MAPC_CACHE": cache.path])
        #expect(first.status == 0 && first.stderr.contains("compiled the policies"), "\(first.stderr)")
        var info = stat()
        #expect(stat(cache.path, &info) == 0 && info.st_mode & 0o777 == 0o700, "the cache is private")
        let entries = try FileManager.default.contentsOfDirectory(atPath: cache.appendingPathComponent("policies").path).filter { !$0.hasPrefix(".") }
        #expect(entries.count == 1)
        // Unchanged: loaded, not compiled.
        let again = try CLI.run(arguments, in: folder, environment: ["MAPC_CACHE": cache.path])
        #expect(again.status == 0 && !again.stderr.contains("compil"), "\(again.stderr)")
        // Another library put in its place is not loaded: it is compiled again.
        let library = cache.appendingPathComponent("policies").appendingPathComponent(entries[0]).appendingPathComponent("libpolicies.so")
        try Data("#!/bin/sh\nexit 0\n".utf8).write(to: library)
        let replaced = try CLI.run(arguments, in: folder, environment: ["MAPC_CACHE": cache.path])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stderr.contains("are not what mapc compiled") && replaced.stderr.contains("compiled the policies"), "\(replaced.stderr)")
        // A cache others may write to is refused, saying how to fix it.
        chmod(cache.path, 0o777)
        let shared = try CLI.run(arguments, in: folder, environment: ["MAPC_CACHE": cache.path])
        #expect(shared.status == 2 && shared.stderr.contains("may be written by other users") && shared.stderr.contains("chmod go-w"), "\(shared.stderr)")
    }

    @Test func anotherCompilerIsNamedWithWhatToDo() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("#!/bin/sh\necho 'Swift version 5.9 (swift-5.9-RELEASE)'\n", to: "swiftc")
        chmod(folder.appendingPathComponent("swiftc").path, 0o755)
        let check = try CLI.run(["check", "--schemas", "scenario/schemas", "--mappings", "scenario/mappings"], in: folder,
                                environment: ["MAPC_SWIFTC": folder.appendingPathComponent("swiftc").path, "MAPC_CACHE": folder.appendingPathComponent("cache").path])
        #expect(check.status == 2, "\(check.stderr)")
        #expect(check.stderr.contains("is Swift version 5.9") && check.stderr.contains("MAPC_SWIFTC"), "\(check.stderr)")
    }

    /// Installed into a prefix, mapc runs a project with a policy from another folder, compiling
    /// with the prefix's modules and module maps only (the compiler is given nothing of the checkout).
    @Test func anInstalledMapcCompilesPoliciesFromItsPrefix() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        let prefix = folder.appendingPathComponent("prefix")
        let install = try CLI.run(["install", "--prefix", prefix.path], in: folder)
        #expect(install.status == 0, "\(install.stderr)")
        let installed = prefix.appendingPathComponent("bin/mapc")
        #expect(FileManager.default.isExecutableFile(atPath: installed.path))
        #expect(prefix.exists("lib/mapc/example/schemas/versions.yaml") && prefix.exists("lib/mapc/example/mappings/mapping_v3_to_v4.yaml"), "the demo's example")
        // A compiler that records what it is given.
        let log = folder.appendingPathComponent("swiftc.log")
        try folder.write("#!/bin/sh\necho \"$@\" >> '\(log.path)'\nexec swiftc \"$@\"\n", to: "swiftc")
        chmod(folder.appendingPathComponent("swiftc").path, 0o755)
        let project = folder.appendingPathComponent("scenario")
        #expect(try CLI.run(["load", CLI.packageRoot.appendingPathComponent("Tests/MapcCLITests/Fixtures/uncloudnotes-v2.json").path, "notes.db"], in: project, program: installed).status == 0)
        let run = try CLI.run(["run", "--quiet", "notes.db"], in: project, environment: ["MAPC_SWIFTC": folder.appendingPathComponent("swiftc").path, "MAPC_CACHE": folder.appendingPathComponent("cache").path], program: installed)
        #expect(run.status == 0, "\(run.stderr)")
        let status = try CLI.run(["status", "notes.db"], in: project, program: installed)
        #expect(status.stdout.contains("v4"), "\(status.stdout)")
        let given = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(given.contains(prefix.path) && !given.contains(CLI.packageRoot.path), "\(given)")
        // The demo reads the install's own example, not the checkout it was built from.
        let demo = try CLI.run(["demo", "--notes", "3", "--directory", folder.appendingPathComponent("demo").path], in: folder, program: installed)
        #expect(demo.status == 0 && demo.stdout.contains(prefix.appendingPathComponent("lib/mapc/example/schemas").path) && !demo.stdout.contains(CLI.packageRoot.path), "\(demo.stdout)")
        // A copy of the installed example is the README tour's whole project: its policy files
        // (files, where the checkout's are links into Sources/), fixtures and expected data.
        // The tour's `check` of the policy's mapping failed there with "unknown policy" (the
        // finance-app probe), and its `mapc test` found no fixtures.
        let tour = folder.appendingPathComponent("tour")
        try FileManager.default.copyItem(at: prefix.appendingPathComponent("lib/mapc/example"), to: tour)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: tour.appendingPathComponent("policies/UnCloudNotesPolicies.swift").path)) == nil)
        let environment = ["MAPC_CACHE": folder.appendingPathComponent("cache").path]
        let check = try CLI.run(["check", "mappings/mapping_v3_to_v4.yaml"], in: tour, environment: environment, program: installed)
        #expect(check.status == 0, "\(check.stderr)")
        let test = try CLI.run(["test"], in: tour, environment: environment, program: installed)
        #expect(test.status == 0 && test.stdout.contains("passed, 0 failed"), "\(test.stdout)\(test.stderr)")
    }
}

extension PolicyCompileTests {
    /// A policy cannot reach the stores the migration holds (a call into one would re-enter the
    /// migration's connection): it is a compile error naming the member, not a crash at run time.
    @Test func aPolicyCannotReachTheMigrationsStores() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try folder.write("""
        import MapcKit

        final class Counting: EntityMigrationPolicy {
            override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
                _ = try manager.destinationStore.count(of: "Note")
            }
        }

        """, to: "policies/Counting.swift")
        let check = try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": folder.appendingPathComponent("cache").path])
        #expect(check.status == 1 && check.stderr.contains("value of type 'MigrationManager' has no member 'destinationStore'"), "\(check.stderr)")
    }
}

extension PolicyCompileTests {
    /// The classes registered are the code's: not one in a comment, a string or `#if false`, not a
    /// nested or private one; a class inheriting from another policy class of the files is one.
    @Test func policyClassesAreFoundInTheCodeNotTheText() throws {
        let project = try Self.projectCheckingPolicies("""
        import MapcKit

        // final class OldPolicy: EntityMigrationPolicy {}
        /* class Commented: EntityMigrationPolicy {} */
        let text = "class InAString: EntityMigrationPolicy {}"
        #if false
        final class Disabled: EntityMigrationPolicy {}
        #endif
        private final class Helper: EntityMigrationPolicy {}

        class BasePolicy: EntityMigrationPolicy {
            final class Nested: EntityMigrationPolicy {}
        }

        final class DerivedPolicy: BasePolicy {}

        """, mappingPolicy: "DerivedPolicy")
        defer { try? FileManager.default.removeItem(at: project.url) }
        let check = project.check
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stderr.contains("(BasePolicy, DerivedPolicy)"), "the two policies registered: \(check.stderr)")
    }
}

extension PolicyCompileTests {
    /// A cache reached through a link is the user's only when the link is too.
    @Test(.enabled(if: getuid() == 0, "changing a link's owner needs root"))
    func aCacheLinkAnotherUserMadeIsRefused() throws {
        let folder = try scenario()
        defer { try? FileManager.default.removeItem(at: folder) }
        let real = folder.appendingPathComponent("real-cache")
        #expect(mkdir(real.path, 0o700) == 0)
        let link = folder.appendingPathComponent("cache-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let arguments = ["check", "--schemas", "scenario/schemas", "--mappings", "scenario/mappings"]
        #expect(try CLI.run(arguments, in: folder, environment: ["MAPC_CACHE": link.path]).status == 0, "the user's own link is accepted")
        #expect(lchown(link.path, 65534, 65534) == 0)
        let refused = try CLI.run(arguments, in: folder, environment: ["MAPC_CACHE": link.path])
        #expect(refused.status == 2 && refused.stderr.contains("is a link another user made"), "\(refused.stderr)")
    }
}

extension PolicyCompileTests {
    /// A policy's `print` went to standard output, after `run --format json`'s JSON, which a
    /// script then could not parse; it goes to standard error, and the results stay whole.
    @Test func aPolicysPrintsStayOutOfTheResults() throws {
        let folder = try Self.exampleWithPolicy(#"public override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws { print("hello from the policy") }"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "--format", "json", "notes.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) != nil && !run.stdout.contains("hello"), "\(run.stdout)")
        #expect(run.stderr.contains("hello from the policy"), "\(run.stderr)")
    }
}

extension PolicyCompileTests {
    /// A policy calling `exit(0)` ended mapc with status 0 and nothing said, the store not migrated:
    /// a script took it for a success. The status is 3 now, with a line naming the policy.
    @Test func aPolicyCallingExitIsAFailure() throws {
        let folder = try Self.exampleWithPolicy(#"public override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws { print("leaving now"); exit(0) }"#, imports: "import Foundation\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: folder.appendingPathComponent("notes.db"))
        let run = try CLI.run(["run", "notes.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 3 && run.stderr.contains("of mapping 'AttachmentToImageAttachment' ended the process (it called exit)"), "\(run.stderr)")
        // What it printed first is not lost (exit flushes after the handler that ends the process).
        #expect(run.stderr.contains("leaving now"), "\(run.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("notes.db")) == before)
    }
}

extension PolicyCompileTests {
    /// An override of `createRelationships` that does not call `super` (Core Data's habit of
    /// setting a value there) leaves every relationship the mapping declares unset: the run
    /// succeeded without a word. It says so now, naming the mapping and its expressions.
    @Test func relationshipExpressionsAPolicyNeverRunsAreSaid() throws {
        let folder = try Self.exampleWithPolicy("public override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager) throws {}", keeping: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "notes.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.stderr.contains("mapping 'AttachmentToImageAttachment' (policy UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4) declares relationship expressions (note) that set nothing"), "\(run.stderr)")
    }
}

extension PolicyCompileTests {
    /// A copy of the example project whose v3 -> v4 policy has `member` in place of its
    /// `keepsDefaultRelationships` line (or after it, `keeping` it), with a v2 store `notes.db`.
    static func exampleWithPolicy(_ member: String, keeping: Bool = true, imports: String = "") throws -> URL {
        let folder = try CLI.project()
        try CLI.addMappingsAndPolicies(to: folder)
        let policy = try folder.read("policies/UnCloudNotesPolicies.swift")
        let anchor = "    public override class var keepsDefaultRelationships: Bool { true }\n"
        #expect(policy.contains(anchor))
        try folder.write(imports + policy.replacingOccurrences(of: anchor, with: (keeping ? anchor : "") + "    " + member + "\n"), to: "policies/UnCloudNotesPolicies.swift")
        #expect(try CLI.run(["load", CLI.packageRoot.appendingPathComponent("Tests/MapcCLITests/Fixtures/uncloudnotes-v2.json").path, "notes.db"], in: folder).status == 0)
        return folder
    }
}

extension PolicyCompileTests {
    /// A stop asked while a policy works waits for its hook to return, which an endless one never
    /// does: the message said only "stopping at the next safe point", then nothing. It names the
    /// policy now. The signal is the policy's own, sent from its hook, not a timer's.
    @Test func aStopWhileAPolicyWorksNamesIt() throws {
        let folder = try Self.exampleWithPolicy("public override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws { kill(getpid(), SIGTERM); Thread.sleep(forTimeInterval: 1) }",
                                                imports: "import Foundation\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: folder.appendingPathComponent("notes.db"))
        let run = try CLI.run(["run", "notes.db"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(run.status == 143 && run.stderr.contains("the custom policy AttachmentToImageAttachmentMigrationPolicyV3toV4 of mapping 'AttachmentToImageAttachment'")
                && run.stderr.contains("is working: a hook of it that does not return keeps the run from stopping"), "\(run.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("notes.db")) == before)
    }
}

extension PolicyCompileTests {
    /// The registration mapc generates wrote each class's name bare: a class named `` `default` ``
    /// (a keyword, backquoted) gave `register(default.self, …)`, and one named `PolicyRegistry`
    /// hid MapcKit's, whose `shared` the registration calls: both failed to compile, at a file
    /// the user never wrote. Names are backquoted, and the registry named by its module.
    @Test func policyClassesNamedLikeKeywordsOrMapcsTypesAreRegistered() throws {
        let project = try Self.projectCheckingPolicies("""
        import MapcKit

        final class `default`: EntityMigrationPolicy {}
        final class PolicyRegistry: EntityMigrationPolicy {}

        """, mappingPolicy: "default")
        defer { try? FileManager.default.removeItem(at: project.url) }
        let check = project.check
        #expect(check.status == 0 && check.stderr.contains("(default, PolicyRegistry)"), "\(check.stdout)\(check.stderr)")
    }
}

extension PolicyCompileTests {
    /// A project whose policies folder holds `policies` (one file) and whose v1 -> v2 mapping gives
    /// NoteToNote the policy named, checked with a cache of its own: the folder and `check`'s result.
    static func projectCheckingPolicies(_ policies: String, mappingPolicy policy: String) throws -> (url: URL, check: CLIResult) {
        let folder = try CLI.project()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("policies"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write(policies, to: "policies/Policies.swift")
        try folder.write("""
        source: v1
        destination: v2
        entityMappings:
          - name: NoteToNote
            source: Note
            destination: Note
            policy: \(policy)
            attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }

        """, to: "mappings/mapping_v1_to_v2.yaml")
        return (folder, try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": folder.appendingPathComponent("cache").path]))
    }
}
