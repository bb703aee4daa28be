import Foundation
import Testing

/// Defects a probe of positions and diagnostics as an editor user meets them found.
@Suite("Defects found by a probe of positions in the editor")
struct EditorProbeDefectTests {
    /// An error inside an expression written in YAML quotes with `''` or escapes, after a tag or
    /// an anchor, or over several lines (folded, or a block scalar) was placed by counting the
    /// value's characters from where the node starts: the caret, and the editor's "did you mean"
    /// fix, landed on other characters (accepting the fix rewrote `$source.body` as
    /// `$sourcbodyyy`). Each is placed on the characters it names now.
    @Test(arguments: [
        // Line 14 of the v2 -> v3 mapping as written.
        #"      body: 'TERNARY($source.title == ''🍣'', $source.bodyy, "x")'"#,
        #"      body: "TERNARY($source.title == \"\u00e9\U0001F363\", $source.bodyy, \"x\")""#,
        "      body: !!str $source.bodyy",
        "      body: &b $source.bodyy",
        "      body: TERNARY($source.title == \"x\",\n          $source.bodyy, \"x\")",
        "      body: |\n        TERNARY($source.title == \"x\",\n                $source.bodyy, \"x\")",
        "      body: >-\n        TERNARY($source.title == \"x\", $source.bodyy, \"x\")",
    ])
    func anErrorInsideAWrittenValueIsPlacedOnItsCharacters(line14: String) throws {
        // Where `bodyy` is in the file: its line, and its column in Unicode scalars.
        let written = line14.components(separatedBy: "\n")
        let offset = written.firstIndex { $0.contains("bodyy") } ?? 0
        let line = 14 + offset
        let column = written[offset].unicodeScalars.count - (written[offset].components(separatedBy: "bodyy").last ?? "").unicodeScalars.count - 5 + 1
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let path = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        var lines = try String(contentsOf: path, encoding: .utf8).components(separatedBy: "\n")
        #expect(lines[13] == "      body: $source.body")
        lines[13] = line14
        try lines.joined(separator: "\n").write(to: path, atomically: true, encoding: .utf8)
        let check = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(check.status == 1)
        #expect(check.stderr.contains("mappings/mapping_v2_to_v3.yaml:\(line):\(column): error: ") && check.stderr.contains("bodyy"), "\(check.stderr)")
        // The caret line underlines `bodyy` (`^~~~~`) under it, in the line quoted.
        let rendered = check.stderr.components(separatedBy: "\n")
        if let quoted = rendered.firstIndex(where: { $0.contains("$source.bodyy") }), quoted + 1 < rendered.count {
            let caret = rendered[quoted + 1]
            let text = rendered[quoted]
            let underlined = zip(text.unicodeScalars, caret.unicodeScalars).filter { $0.1 == "^" || $0.1 == "~" }.map { Character($0.0) }
            #expect(String(underlined) == "bodyy", "\(text)\n\(caret)")
        } else {
            Issue.record("no quoted line: \(check.stderr)")
        }
    }
}
