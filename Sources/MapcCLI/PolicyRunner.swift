import Crypto
import Foundation
import MapcKit
#if canImport(Glibc)
import Glibc
#endif

/// Custom policies written as Swift files kept with the project (`./policies/*.swift`, or
/// `--policies DIR`), compiled by mapc itself: the files and a generated `main.swift` become a
/// `mapc` with the policies registered (a small package depending on mapc's own sources, built with
/// `swift build`), cached by the files' content, and the command runs in it. The first build also
/// compiles mapc's dependencies once per mapc version and build configuration; after that a
/// change of the policies rebuilds in seconds, and an unchanged set starts at once.
enum PolicyRunner {
    /// Set in the runner's environment, so it does not look for policies again.
    static let runnerVariable = "MAPC_POLICY_RUNNER"
    /// The commands whose work may call policies.
    static let commands: Set<String> = ["run", "check", "plan"]

    /// Where mapc's own sources are (the checkout it was built from), found from this file's path.
    static let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Re-runs the command in a `mapc` with the project's policies compiled in, when it has any;
    /// returns when there are none (or when this already is that `mapc`).
    static func runWithPoliciesIfAny(_ arguments: [String]) {
        guard ProcessInfo.processInfo.environment[runnerVariable] == nil, let command = arguments.first, commands.contains(command) else { return }
        let folder = policiesFolder(arguments)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { $0.hasSuffix(".swift") }.sorted() ?? []
        guard !files.isEmpty else {
            if arguments.contains(where: { $0 == "--policies" || $0.hasPrefix("--policies=") }) {
                fail("\(folder) holds no .swift policy files", status: MapcExitCode.invalidInput)
            }
            return
        }
        do {
            let runner = try build(files.map { (folder as NSString).appendingPathComponent($0) })
            var environment = ProcessInfo.processInfo.environment
            environment[runnerVariable] = "1"
            let argv = [runner] + arguments
            let cArguments = argv.map { strdup($0) } + [nil]
            let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            execve(runner, cArguments, cEnvironment)
            fail("cannot start \(runner): \(String(cString: strerror(errno)))", status: MapcExitCode.storeError)
        } catch let error as PolicyBuildError {
            fail(error.message, status: error.status)
        } catch {
            fail("\(error)", status: MapcExitCode.storeError)
        }
    }

    /// `--policies DIR` (or `--policies=DIR`) from the arguments, else `./policies`.
    static func policiesFolder(_ arguments: [String]) -> String {
        for (index, argument) in arguments.enumerated() {
            if argument == "--policies", index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--policies=") { return String(argument.dropFirst("--policies=".count)) }
        }
        return "./policies"
    }

    struct PolicyBuildError: Error {
        var message: String
        var status: Int32
    }

    private static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        exit(status)
    }

    /// The policy classes a file defines: `class Name: EntityMigrationPolicy`.
    static func policyClasses(in text: String) -> [String] {
        let pattern = #"class\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(?:MapcKit\.)?EntityMigrationPolicy\b"#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// The build configuration this mapc was built with, which the runner uses too.
    static var configuration: String {
        (CommandLine.arguments.first ?? "").contains("/debug/") ? "debug" : "release"
    }

    /// The cache folder: `$XDG_CACHE_HOME/mapc` or `~/.cache/mapc`.
    static var cacheFolder: URL {
        let environment = ProcessInfo.processInfo.environment
        if let cache = environment["MAPC_CACHE"] { return URL(fileURLWithPath: cache) }
        let base = environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("mapc")
    }

    private static func sha256(_ parts: [String]) -> String {
        var hasher = SHA256()
        for part in parts {
            hasher.update(data: Data(part.utf8))
            hasher.update(data: Data([0]))
        }
        return Hex.lowercase(hasher.finalize())
    }

    /// The runner for a set of policy files: cached by their names and contents, built when missing.
    static func build(_ paths: [String]) throws -> String {
        var sources: [(name: String, path: String, text: String)] = []
        for path in paths {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw PolicyBuildError(message: "cannot read the policy file \(path)", status: MapcExitCode.invalidInput)
            }
            sources.append((URL(fileURLWithPath: path).lastPathComponent, path, text))
        }
        let classes = sources.flatMap { policyClasses(in: $0.text) }
        guard !classes.isEmpty else {
            throw PolicyBuildError(message: "the policy files (\(sources.map(\.path).joined(separator: ", "))) define no class inheriting from EntityMigrationPolicy", status: MapcExitCode.invalidInput)
        }
        let toolchain = configuration + " " + MapcVersion.current + " " + sourceRoot.path
        let key = sha256([toolchain] + sources.flatMap { [$0.name, $0.text] })
        let runners = cacheFolder.appendingPathComponent("runners")
        let runner = runners.appendingPathComponent(key).appendingPathComponent("mapc")
        if FileManager.default.isExecutableFile(atPath: runner.path) { return runner.path }

        guard FileManager.default.fileExists(atPath: sourceRoot.appendingPathComponent("Package.swift").path) else {
            throw PolicyBuildError(message: "mapc compiles policy files against its own sources, which are no longer at \(sourceRoot.path); build mapc from a checkout, or build your own mapc with the policies (docs/policies.md)", status: MapcExitCode.storeError)
        }
        // One package per mapc checkout and configuration: its dependencies are compiled once.
        let package = cacheFolder.appendingPathComponent("build").appendingPathComponent(String(sha256([toolchain]).prefix(16)))
        let target = package.appendingPathComponent("Sources/mapc-policies")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: runners, withIntermediateDirectories: true)
        // Two mapc processes building at once take turns.
        let lock = open(package.appendingPathComponent(".lock").path, O_CREAT | O_RDWR, 0o644)
        defer { if lock >= 0 { close(lock) } }
        if lock >= 0 { flock(lock, LOCK_EX) }
        if FileManager.default.isExecutableFile(atPath: runner.path) { return runner.path }

        let manifest = """
        // swift-tools-version: 6.0
        // Generated by mapc to compile a project's policy files; see docs/policies.md.
        import PackageDescription

        let package = Package(
            name: "mapc-policies",
            platforms: [.macOS(.v13)],
            dependencies: [.package(name: "mapc", path: \(String(reflecting: sourceRoot.path)))],
            targets: [
                .executableTarget(name: "mapc-policies", dependencies: [
                    .product(name: "MapcCLI", package: "mapc"), .product(name: "MapcKit", package: "mapc"), .product(name: "MapcExamples", package: "mapc"),
                ]),
            ]
        )

        """
        try Data(manifest.utf8).write(to: package.appendingPathComponent("Package.swift"))
        for old in (try? FileManager.default.contentsOfDirectory(atPath: target.path)) ?? [] {
            try? FileManager.default.removeItem(at: target.appendingPathComponent(old))
        }
        var copies: [String: String] = [:]
        for source in sources {
            let copy = target.appendingPathComponent("Policy_" + source.name)
            try Data(source.text.utf8).write(to: copy)
            copies[copy.path] = source.path
        }
        let main = """
        // Generated by mapc: the shipped mapc with the project's policies registered.
        import MapcCLI
        import MapcExamples
        import MapcKit

        Migrator.disableSQLiteMemoryStatistics()
        FaultInjection.installFromEnvironment()
        registerUnCloudNotesPolicies()
        \(classes.map { "PolicyRegistry.shared.register(\($0).self, as: \(String(reflecting: $0)))" }.joined(separator: "\n"))
        MapcCommand.runMain()

        """
        try Data(main.utf8).write(to: target.appendingPathComponent("main.swift"))

        FileHandle.standardError.write(Data("compiling the policies in \(sources.map(\.path).joined(separator: ", ")) (\(classes.joined(separator: ", ")))…\n".utf8))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "build", "-c", configuration, "--package-path", package.path, "--product", "mapc-policies"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch {
            throw PolicyBuildError(message: "cannot run `swift build` to compile the policies (\(error.localizedDescription)); is the Swift toolchain on PATH?", status: MapcExitCode.storeError)
        }
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            // The compiler's diagnostics, pointing at the project's files rather than the copies.
            var shown = log.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.contains(": error:") || $0.contains(": warning:") || $0.hasPrefix(" ") }.joined(separator: "\n")
            for (copy, original) in copies { shown = shown.replacingOccurrences(of: copy, with: original) }
            throw PolicyBuildError(message: "the policies do not compile:\n\(shown.isEmpty ? log : shown)", status: MapcExitCode.invalidInput)
        }
        let built = package.appendingPathComponent(".build/\(configuration)/mapc-policies")
        let temporary = runners.appendingPathComponent(key + ".tmp-\(getpid())")
        try? FileManager.default.removeItem(at: temporary)
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: built, to: temporary.appendingPathComponent("mapc"))
        try? FileManager.default.removeItem(at: runner.deletingLastPathComponent())
        try FileManager.default.moveItem(at: temporary, to: runner.deletingLastPathComponent())
        return runner.path
    }
}
