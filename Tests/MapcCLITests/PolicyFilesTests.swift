import Foundation
import Testing
@testable import MapcCLI

/// Policy files kept with the project, compiled by mapc itself: docs/policies.md's complete example
/// (its files and commands, exactly as the page shows them), the cache, and a compiler error
/// shown at the project's own file. The first build compiles mapc's dependencies once (about a
/// minute); the cache lives in the package's `.build`, so later runs reuse it.
@Suite("Policy files", .serialized)
struct PolicyFilesTests {
    static let cache = CLI.policyCache.path

    /// The page's example project: every block whose first line names a file.
    static func exampleProject(into folder: URL) throws -> String {
        let page = try CLI.packageRoot.read("docs/policies.md")
        var block: [Substring]?
        var commands = ""
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") && block == nil && line.count > 3 { block = []; continue }
            guard line == "```", let lines = block else { block?.append(line); continue }
            block = nil
            guard let first = lines.first else { continue }
            if lines.contains(where: { $0.hasPrefix("mapc ") }) { commands = lines.joined(separator: "\n") }
            for prefix in ["# ", "// "] where first.hasPrefix(prefix) {
                let name = String(first.dropFirst(prefix.count))
                guard name.hasPrefix("schemas/") || name.hasPrefix("mappings/") || name.hasPrefix("policies/") else { continue }
                let url = folder.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data((lines.dropFirst().joined(separator: "\n") + "\n").utf8).write(to: url)
            }
        }
        return commands
    }

    @Test func thePolicyGuidesExampleCompilesAndRunsWithTheShippedMapc() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let commands = try Self.exampleProject(into: folder)
        #expect(folder.exists("policies/TagSplitPolicy.swift") && folder.exists("mappings/mapping_v1_to_v2.yaml"))
        let script = commands.split(separator: "\n").map { line in line.hasPrefix("mapc ") ? "'\(CLI.executable.path)' " + line.dropFirst(5) : String(line) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-e", "-o", "pipefail", "-c", script.joined(separator: "\n")]
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(["MAPC_CACHE": Self.cache]) { _, new in new }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("1 entity mapping") && output.contains("0 errors"), "check knows the policy: \(output)")
        #expect(output.contains(#""name": "migrations""#) && output.contains(#""tags": ["tag-swift", "tag-migrations"]"#), "\(output)")
        #expect(output.contains(#""email": "ada@example.com""#) && output.contains(#""wordCount": 6"#))
        #expect(output.contains(#"s_Post -.->|"PostToPost<br/>created by TagSplitPolicy"| d_Tag"#), "graph draws what the policy creates: \(output)")
        // A second run starts from the cache: no compiling.
        #expect(try CLI.run(["load", "posts.json", "again.db"], in: folder).status == 0)
        let again = try CLI.run(["run", "--quiet", "again.db"], in: folder, environment: ["MAPC_CACHE": Self.cache])
        #expect(again.status == 0 && !again.stderr.contains("compiling"), "\(again.stderr)")
    }

    @Test func aPolicyThatDoesNotCompileIsReportedAtTheProjectsFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.exampleProject(into: folder)
        try folder.write("import MapcKit\n\nfinal class TagSplitPolicy: EntityMigrationPolicy {\n    let wrong: Int = \"text\"\n}\n", to: "policies/TagSplitPolicy.swift")
        let check = try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": Self.cache])
        #expect(check.status == 1, "\(check.stderr)")
        #expect(check.stderr.contains("policies/TagSplitPolicy.swift:4:22: error:"), "\(check.stderr)")
        #expect(check.stderr.contains("4 |     let wrong: Int = \"text\""), "with its source line: \(check.stderr)")
        // Files that define no policy, and a named folder without files, are errors too.
        try folder.write("// nothing here\n", to: "policies/TagSplitPolicy.swift")
        let none = try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": Self.cache])
        #expect(none.status == 1 && none.stderr.contains("define no class inheriting from EntityMigrationPolicy"), "\(none.stderr)")
        let missing = try CLI.run(["check", "--policies", "nowhere"], in: folder)
        #expect(missing.status == 2 && missing.stderr.contains("the policies folder nowhere does not exist"), "\(missing.stderr)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("empty"), withIntermediateDirectories: true)
        let empty = try CLI.run(["check", "--policies", "empty"], in: folder)
        #expect(empty.status == 1 && empty.stderr.contains("empty holds no .swift policy files"), "\(empty.stderr)")
    }

    /// A value a policy set that its attribute cannot hold was shown under the mapping's
    /// expression for that attribute, with a caret, as if the expression gave it (a policy probe):
    /// the mapping's custom policy is named as a source of it.
    @Test func aBadValueAPolicySetIsNotPinnedOnTheExpression() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.exampleProject(into: folder)
        let policy = try folder.read("policies/TagSplitPolicy.swift")
        let made = "let post = try manager.insert(try manager.makeDestination(for: source, mapping: mapping), associatedWith: source, mapping: mapping)"
        #expect(policy.contains(made))
        try folder.write(policy.replacingOccurrences(of: made, with: "var made = try manager.makeDestination(for: source, mapping: mapping)\n        made[\"wordCount\"] = .string(\"many\")\n        let post = try manager.insert(made, associatedWith: source, mapping: mapping)"),
                         to: "policies/TagSplitPolicy.swift")
        try folder.write(#"{"version": "v1", "objects": {"Post": [{"id": "p1", "title": "Hello", "body": "First post", "tags": "a", "authorEmail": "a@b.c"}]}}"#, to: "posts.json")
        #expect(try CLI.run(["load", "posts.json", "blog.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "blog.db"], in: folder, environment: ["MAPC_CACHE": Self.cache])
        #expect(run.status == 3 && run.stderr.contains("wordCount") && run.stderr.contains("note: mapping 'PostToPost' has the custom policy TagSplitPolicy"), "\(run.stderr)")
        #expect(!run.stderr.contains("while mapping 'PostToPost', property 'wordCount'"), "\(run.stderr)")
    }

    /// A policy class nested in a type is not registered, and a mapping naming it
    /// `Other.TagSplitPolicy` silently ran the top-level `TagSplitPolicy` (the name after a
    /// module's is the class's): it is unknown now, told where the nested class is and why.
    @Test func aMappingNamingAPolicyClassNestedInATypeIsToldWhy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.exampleProject(into: folder)
        try folder.write("import MapcKit\n\nenum Other {\n    final class TagSplitPolicy: EntityMigrationPolicy {\n    }\n    private final class Helper: EntityMigrationPolicy {}\n}\n", to: "policies/Other.swift")
        let mapping = try folder.read("mappings/mapping_v1_to_v2.yaml")
        #expect(mapping.contains("policy: TagSplitPolicy"))
        try folder.write(mapping.replacingOccurrences(of: "policy: TagSplitPolicy", with: "policy: Other.TagSplitPolicy"), to: "mappings/mapping_v1_to_v2.yaml")
        let check = try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": Self.cache])
        #expect(check.status == 1 && check.stderr.contains("unknown policy 'Other.TagSplitPolicy'")
                && check.stderr.contains("Other.TagSplitPolicy is declared inside another type (./policies/Other.swift:4)"), "\(check.stderr)")
        // Named by a module's name, the top-level class is found as before.
        try folder.write(mapping.replacingOccurrences(of: "policy: TagSplitPolicy", with: "policy: MyApp.TagSplitPolicy"), to: "mappings/mapping_v1_to_v2.yaml")
        #expect(try CLI.run(["check"], in: folder, environment: ["MAPC_CACHE": Self.cache]).status == 0)
        #expect(PolicyLoader.nestedPolicyClasses(in: "final class A: EntityMigrationPolicy {\n  func f() {\n    class B: EntityMigrationPolicy {}\n  }\n}\n", policies: ["EntityMigrationPolicy"]).isEmpty)
    }
}

extension PolicyFilesTests {
    /// A policy class mapc does not register was "unknown", with advice to write it (a policy
    /// author's probe): one in a subfolder of `policies/` (not compiled), one declared `private`
    /// (the file registering the classes cannot see it), one not inheriting from
    /// `EntityMigrationPolicy`. Each is said where it is, with why and what to change.
    @Test func aPolicyClassMapcDoesNotRegisterIsToldWhy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.exampleProject(into: folder)
        let policy = try folder.read("policies/TagSplitPolicy.swift")
        let environment = ["MAPC_CACHE": Self.cache]
        // In a subfolder, with no file directly in the folder.
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("policies/Old"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("policies/TagSplitPolicy.swift"), to: folder.appendingPathComponent("policies/Old/TagSplitPolicy.swift"))
        let sub = try CLI.run(["check"], in: folder, environment: environment)
        #expect(sub.status == 1 && sub.stderr.contains("unknown policy 'TagSplitPolicy'") && sub.stderr.contains("policies/Old/TagSplitPolicy.swift:")
                && sub.stderr.contains("in a subfolder") && sub.stderr.contains("move the file"), "\(sub.stderr)")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("policies/Old"))
        // Files whose classes are all private, or inherit from something else, say so in the error.
        let declaration = "final class TagSplitPolicy: EntityMigrationPolicy"
        #expect(policy.contains(declaration))
        for (written, expected) in [("private " + declaration, "is declared private"), ("final class TagSplitPolicy: NSObject", "inherits from NSObject, not EntityMigrationPolicy"),
                                    ("final class TagSplitPolicy", "inherits from nothing")] {
            try folder.write(policy.replacingOccurrences(of: declaration, with: written), to: "policies/TagSplitPolicy.swift")
            let check = try CLI.run(["check"], in: folder, environment: environment)
            #expect(check.status == 1 && check.stderr.contains("define no class inheriting from EntityMigrationPolicy") && check.stderr.contains(expected)
                    && check.stderr.contains("TagSplitPolicy.swift:"), "\(written): \(check.stderr)")
        }
        // A private class beside registered ones: a mapping naming it is told why it is unknown.
        try folder.write(policy, to: "policies/TagSplitPolicy.swift")
        try folder.write("import MapcKit\n\nprivate final class HiddenPolicy: EntityMigrationPolicy {}\n", to: "policies/Hidden.swift")
        let mapping = try folder.read("mappings/mapping_v1_to_v2.yaml")
        try folder.write(mapping.replacingOccurrences(of: "policy: TagSplitPolicy", with: "policy: HiddenPolicy"), to: "mappings/mapping_v1_to_v2.yaml")
        let hidden = try CLI.run(["check"], in: folder, environment: environment)
        #expect(hidden.status == 1 && hidden.stderr.contains("unknown policy 'HiddenPolicy'") && hidden.stderr.contains("policies/Hidden.swift:3")
                && hidden.stderr.contains("is declared private"), "\(hidden.stderr)")
    }
}
