import Foundation
import Testing

/// Defects a second hostile-input probe found: answers that were wrong rather than refused, and
/// work without a bound.
@Suite("Defects found by a second hostile-input probe", .serialized)
struct HostileProbeDefectTests {
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// ICU gives up on a pattern that backtracks polynomially (the screen passes it) and reports
    /// no match: MATCHES said false, and a filter dropped the object. Now it has no answer, said.
    @Test func aRegexTheEngineGivesUpOnIsAnErrorNotFalse() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let subject = String(repeating: "a", count: 5_000) + "!"
        try folder.write(#"{"s": "\#(subject)"}"#, to: "object.json")
        let pattern = "[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[0-9]|a*!"
        let eval = try CLI.run(["eval", "s MATCHES '\(pattern)'", "--predicate", "--object", "@object.json"], in: folder)
        #expect(eval.status != 0 && eval.stderr.contains("MATCHES has no answer") && !eval.stdout.contains("false"), "\(eval.stdout)\(eval.stderr)")
        // A schema's regex rule: the value cannot be checked, said once per value and quickly
        // (the engine's wait is paid once per pattern, not once per value).
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        try folder.write("model: P\nversion: v1\nentities:\n  Item:\n    attributes:\n      code: { type: string, regex: '\(pattern)' }\n", to: "schemas/v1.yaml")
        let items = (0..<30).map { #"{"id": "i\#($0)", "code": "\#(subject)"}"# }.joined(separator: ",")
        try folder.write(#"{"version": "v1", "objects": {"Item": [\#(items)]}}"#, to: "items.json")
        let started = Date()
        let load = try CLI.run(["load", "items.json", "items.db"], in: folder)
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(load.status == 1 && load.stderr.contains("cannot be checked against regex") && !load.stderr.contains("does not match regex"), "\(load.stderr.prefix(2_000))")
        // Each value is named by its first characters and its length, not written out 30 times.
        #expect(load.stderr.contains("… (5003 characters)") && load.stderr.utf8.count < 30_000, "\(load.stderr.utf8.count) bytes")
    }
}
