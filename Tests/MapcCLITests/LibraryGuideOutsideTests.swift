import Foundation
import Testing
@testable import MapcCLI

/// docs/library.md's code compiled as an app's would be: against the built modules from outside
/// the package, where `package` declarations are invisible. LibraryGuideTests runs the same code
/// inside the package, which proves it works but not that the public API suffices for it.
@Suite("The library guide, compiled from outside the package")
struct LibraryGuideOutsideTests {
    /// The guide's Swift blocks, each the body of a function whose parameters stand for what the
    /// guide's prose provides (a resources folder, a store, schema texts, a fixture).
    static func guideSource() throws -> (source: String, blocks: Int) {
        let guide = try String(contentsOf: CLI.packageRoot.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let regex = try NSRegularExpression(pattern: "```swift\\n([\\s\\S]*?)```")
        let blocks = regex.matches(in: guide, range: NSRange(guide.startIndex..., in: guide)).compactMap { match in
            Range(match.range(at: 1), in: guide).map { String(guide[$0]) }
        }.filter { block in
            // The package manifest's lines and the import are not code of an app's function.
            !block.hasPrefix("// Package.swift") && block.trimmingCharacters(in: .whitespacesAndNewlines) != "import MapcKit"
        }
        var source = "import Foundation\nimport MapcKit\n\n"
        for (index, block) in blocks.enumerated() {
            // Synchronous where the guide is: in an async function `migrate` would be the async one.
            let effects = block.contains("await ") ? "async throws" : "throws"
            source += """
            func guideBlock\(index)(resources: URL, storeURL: URL, folder: URL, v1Text: String, v2Text: String, v3Text: String,
                                  fixture: String, migrator: Migrator) \(effects) {
            \(block)
            }

            """
        }
        return (source, blocks.count)
    }

    @Test func theGuidesCodeNeedsOnlyThePublicAPI() throws {
        let (source, blocks) = try Self.guideSource()
        #expect(blocks >= 6, "the guide's blocks are found")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-guide-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Guide.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        // The kit mapc compiles policy files against: the same modules and module maps, no package name.
        let kit = try PolicyKit(buildFolder: CLI.executable.deletingLastPathComponent())
        var arguments = ["swiftc", "-typecheck", "-module-cache-path", folder.appendingPathComponent("module-cache").path, "-I", kit.modules.path]
        for map in kit.moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        arguments.append(file.path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the guide's code does not compile from outside the package:\n\(output)\n\(source)")
    }
}
