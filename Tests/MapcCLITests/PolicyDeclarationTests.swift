import Foundation
import Testing
@testable import MapcCLI
import MapcKit

/// Where policy classes are declared, for the editor's definitions, and which classes a policy
/// file has when its lines end in CRLF (as files saved on Windows do).
@Suite("Policy declarations")
struct PolicyDeclarationTests {
    static let policies = """
    import MapcKit

    // Tags: split into their own objects.
    final class TagSplitPolicy: EntityMigrationPolicy {
        override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {}
    }

    /* The base of the others. */
    class BasePolicy:
        EntityMigrationPolicy
    {
        final class Nested: EntityMigrationPolicy {}
    }
    final class  DerivedPolicy: BasePolicy {}

    """

    /// A `//` comment never ended on a CRLF line (`"\\r\\n"` is one Character, not `"\\n"`): every
    /// class after it was taken for commented out.
    @Test func classesAfterACommentOnCRLFLinesAreFound() {
        let crlf = Self.policies.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(PolicyLoader.policyClasses(in: [crlf]) == ["TagSplitPolicy", "BasePolicy", "DerivedPolicy"], "\(PolicyLoader.policyClasses(in: [crlf]))")
        #expect(PolicyLoader.nestedPolicyClasses(in: PolicyLoader.code(of: crlf), policies: ["EntityMigrationPolicy"]).map(\.line) == [12])
    }

    @Test(arguments: ["\n", "\r\n"])
    func eachPolicyClassIsFoundWhereItsNameIs(lineEnd: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-policy-declarations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("Policies.swift").path
        try Self.policies.replacingOccurrences(of: "\n", with: lineEnd).write(toFile: path, atomically: true, encoding: .utf8)
        try "not a policy".write(toFile: folder.appendingPathComponent("notes.txt").path, atomically: true, encoding: .utf8)
        let found = PolicyLoader.declarations(inFolder: folder.path)
        #expect(found["TagSplitPolicy"] == FileLocation(path: path, line: 4, column: 13), "\(found)")
        // The `class` line, not the brace's.
        #expect(found["BasePolicy"] == FileLocation(path: path, line: 9, column: 7), "\(found)")
        #expect(found["BasePolicy.Nested"] == FileLocation(path: path, line: 12, column: 17), "\(found)")
        #expect(found["DerivedPolicy"] == FileLocation(path: path, line: 14, column: 14), "\(found)")
        #expect(found.count == 4)
        #expect(PolicyLoader.declarations(inFolder: folder.appendingPathComponent("missing").path).isEmpty)
    }
}

extension PolicyDeclarationTests {
    /// `mapc run --help` (and the help of every command that loads policies) compiled the
    /// project's policies first: a policy that did not compile left the user without the help.
    @Test func helpNeverCompilesThePolicies() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("policies"), withIntermediateDirectories: true)
        try folder.write("import MapcKit\nfinal class Broken: EntityMigrationPolicy {}\nthis is not swift\n", to: "policies/Broken.swift")
        let environment = ["MAPC_CACHE": folder.appendingPathComponent("cache").path]
        for arguments in [["run", "--help"], ["check", "-h"], ["test", "--help"], ["plan", "--help"], ["graph", "--help"], ["import", "--help"]] {
            let help = try CLI.run(arguments, in: folder, environment: environment)
            #expect(help.status == 0 && help.stdout.contains("USAGE: mapc \(arguments[0])") && help.stderr.isEmpty, "\(arguments): \(help.stderr)")
        }
        #expect(try CLI.run(["run", "nothing.db"], in: folder, environment: environment).stderr.contains("the policies do not compile"))
    }

    /// `mapc check` of a schema file compiled the project's policies (and failed with their
    /// errors): a schema names no policy. A mapping among the files still needs them.
    @Test func checkingASchemaDoesNotCompileThePolicies() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        try folder.write("import MapcKit\nfinal class Broken: EntityMigrationPolicy { func f() -> Int { \"not a number\" } }\n", to: "policies/Broken.swift")
        let environment = ["MAPC_CACHE": folder.appendingPathComponent("cache").path]
        let schema = try CLI.run(["check", "schemas/v2.yaml"], in: folder, environment: environment)
        // A folder named with --policies is still one that must exist.
        let named = try CLI.run(["check", "schemas/v2.yaml", "--policies", "nowhere"], in: folder, environment: environment)
        #expect(named.status == 2 && named.stderr.contains("the policies folder nowhere does not exist"), "\(named.stderr)")
        #expect(schema.status == 0 && !schema.stderr.contains("do not compile"), "\(schema.stderr)")
        let mapping = try CLI.run(["check", "schemas/v2.yaml", "mappings/mapping_v2_to_v3.yaml"], in: folder, environment: environment)
        #expect(mapping.status == 1 && mapping.stderr.contains("the policies do not compile"), "\(mapping.stderr)")
        let project = try CLI.run(["check"], in: folder, environment: environment)
        #expect(project.status == 1 && project.stderr.contains("the policies do not compile"), "\(project.stderr)")
    }
}
