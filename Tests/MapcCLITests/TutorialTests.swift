import Foundation
import Testing

/// docs/tutorial.md's commands, run as written (in a folder of their own instead of
/// /tmp/uncloudnotes): every one must succeed, and every output the page shows in a comment
/// (`#   …` under a command) must be what the command printed.
@Suite("The tutorial", .serialized)
struct TutorialTests {
    @Test func everyCommandOfTheTutorialRunsAndPrintsWhatThePageSays() throws {
        let page = try CLI.packageRoot.read("docs/tutorial.md")
        var script: [String] = []
        var inBlock = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```sh" { inBlock = true; continue }
            if line == "```" { inBlock = false; continue }
            if inBlock { script.append(String(line)) }
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-tutorial-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let commands = script.map { line -> String in
            var line = line.replacingOccurrences(of: "/tmp/uncloudnotes", with: folder.path)
            if line.hasPrefix("mapc ") { line = "'\(CLI.executable.path)' " + line.dropFirst(5) }
            return line
        }
        #expect(commands.count > 20)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-e", "-o", "pipefail", "-c", commands.joined(separator: "\n")]
        process.currentDirectoryURL = CLI.packageRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        // The outputs the page shows, as comments under the commands.
        let shown = script.filter { $0.hasPrefix("#   ") }.map { String($0.dropFirst(4)).replacingOccurrences(of: "/tmp/uncloudnotes", with: folder.path) }
        #expect(shown.count >= 6)
        for line in shown { #expect(output.contains(line), "the page shows '\(line)' but the command printed:\n\(output)") }
        #expect(output.contains("\"caption\": \"The temple gardens open at nine.\"") && output.contains("\"width\": 640"), "\(output)")
    }
}
