import Foundation
import MapcFoundation
import Testing

/// The lines a diagnostic quotes, found by their starts in the text (a file's lines kept as
/// substrings took 32 bytes each with every document the language server holds).
@Suite("A source file's lines")
struct SourceFileLineTests {
    @Test func eachLineIsFoundWhateverItsEnding() {
        let file = SourceFile(path: "f.yaml", text: "a: 1\r\nb: é\rc: 3\n\nlast")
        #expect((1...5).map { file.line($0) } == ["a: 1", "b: é", "c: 3", "", "last"])
        #expect(file.line(0) == nil && file.line(6) == nil)
        let ending = SourceFile(path: "g.yaml", text: "x\n")
        #expect(ending.line(1) == "x" && ending.line(2) == "" && ending.line(3) == nil)
        #expect(SourceFile(path: "e.yaml", text: "").line(1) == "")
        let blank = SourceFile(path: "b.yaml", text: String(repeating: "\n", count: 100_000) + "z")
        #expect(blank.line(100_001) == "z" && blank.line(50_000) == "")
    }
}
