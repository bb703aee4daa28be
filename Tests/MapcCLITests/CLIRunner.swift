import Foundation
import Testing

/// What one run of the `mapc` executable did.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the `mapc` executable built beside the test bundle, the way a user runs it.
enum CLI {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var executable: URL {
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ].compactMap { $0 }.map { $0.appendingPathComponent("mapc") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? packageRoot.appendingPathComponent(".build/debug/mapc")
    }

    /// Whether `runUnprivileged` can run: permissions mean nothing to root, so tests of read-only
    /// files run mapc as `nobody` through setpriv, which needs root.
    static var canRunUnprivileged: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") }

    /// Runs `mapc` as the user `nobody` (see `canRunUnprivileged`).
    static func runUnprivileged(_ arguments: [String], in directory: URL) throws -> CLIResult {
        // `nobody` compiles policies into a cache of its own: mapc loads code only from the user's.
        try run(["--reuid=65534", "--regid=65534", "--clear-groups", executable.path] + arguments, in: directory,
                environment: ["MAPC_CACHE": "/tmp/mapc-test-policy-cache-65534"], program: URL(fileURLWithPath: "/usr/bin/setpriv"))
    }

    /// Runs `mapc` with the arguments in `directory` (standard input read from `input` when given).
    static func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:], program: URL? = nil, input: URL? = nil) throws -> CLIResult {
        let process = Process()
        if let input { process.standardInput = try FileHandle(forReadingFrom: input) }
        process.executableURL = program ?? executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        // Policies compiled by the runs are kept in the build folder, not the user's cache.
        let defaults = ["MAPC_CACHE": policyCache.path]
        process.environment = ProcessInfo.processInfo.environment.merging(defaults.merging(environment) { _, new in new }) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both read at once, before waiting: a child filling either pipe would otherwise block.
        nonisolated(unsafe) var stderr = Data()
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) { stderr = err.fileHandleForReading.readDataToEndOfFile() }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        reading.wait()
        process.waitUntilExit()
        return CLIResult(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The policy cache of the test runs.
    static let policyCache = packageRoot.appendingPathComponent(".build/test-policy-cache")

    /// Copies the shipped example's mapping files and its policy files (the demo's policy, whose
    /// files in `policies/` are links to its source) into a project folder.
    static func addMappingsAndPolicies(to folder: URL) throws {
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("mappings"), to: folder.appendingPathComponent("mappings"))
        let policies = folder.appendingPathComponent("policies")
        try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("policies").path) {
            let source = packageRoot.appendingPathComponent("policies").appendingPathComponent(name).resolvingSymlinksInPath()
            try Data(contentsOf: source).write(to: policies.appendingPathComponent(name))
        }
    }

    /// Replaces a project's policies with one class standing for the v3 -> v4 mapping's policy
    /// that traps (an index out of range) on its first object; returns the class's name.
    static func replaceV3toV4PolicyWithOneThatTraps(in folder: URL) throws -> String {
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("policies").path) {
            try FileManager.default.removeItem(at: folder.appendingPathComponent("policies").appendingPathComponent(name))
        }
        let mapping = try folder.read("mappings/mapping_v3_to_v4.yaml")
        let policy = try #require(mapping.range(of: #"policy: \S+"#, options: .regularExpression).map { String(mapping[$0].dropFirst("policy: ".count)) })
        let className = policy.split(separator: ".").last.map(String.init) ?? policy
        try folder.write("""
        import MapcKit

        final class \(className): EntityMigrationPolicy {
            override class var providedAttributes: Set<String> { ["caption", "width", "height"] }
            override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
                let none: [Int] = []
                _ = none[Int(source.data.id.count) % 7 + 1]
            }
        }

        """, to: "policies/\(className).swift")
        return className
    }

    /// A temporary project of the versions given (`version: yaml of its entities`, model `S`), in order.
    static func project(versions: [(String, String)]) throws -> URL {
        let folder = try emptyProject()
        for (version, entities) in versions {
            try folder.write("model: S\nversion: \(version)\nentities:\n\(entities)", to: "schemas/\(version).yaml")
        }
        try folder.write("versions: [\(versions.map(\.0).joined(separator: ", "))]\n", to: "schemas/versions.yaml")
        return folder
    }

    /// A temporary project folder with an empty `schemas` folder, for a test's own model.
    static func emptyProject() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        return folder
    }

    /// A copy of the example project with its mappings, policies, fixtures and expected results
    /// (what `mapc test` runs on).
    static func projectWithFixtures() throws -> URL {
        let folder = try project()
        try addMappingsAndPolicies(to: folder)
        for name in ["fixtures", "expected"] {
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        return folder
    }

    /// A temporary project folder holding a copy of the shipped schemas.
    static func project() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("schemas"), to: folder.appendingPathComponent("schemas"))
        return folder
    }
}

extension URL {
    func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: appendingPathComponent(name))
    }

    func read(_ name: String) throws -> String {
        try String(contentsOf: appendingPathComponent(name), encoding: .utf8)
    }

    func exists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: appendingPathComponent(name).path)
    }
}
