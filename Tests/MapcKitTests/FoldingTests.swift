import Foundation
@testable import MapcModel
import Testing

/// Case- and diacritic-insensitive comparison folds both strings. Foundation's folding takes time
/// quadratic in the length of text whose characters expand (`ß` to `ss`), so a long text is
/// folded in pieces cut between characters; the result must be the one folding gives whole.
@Suite("Folding long strings")
struct FoldingTests {
    @Test func foldingInPiecesGivesWhatFoldingWholeGives() {
        // Characters that expand, combine, or stand for two scalars, around every piece's edge.
        let alphabet: [String] = ["ß", "ẞ", "É", "e\u{301}", "ﬁ", "İ", "ς", "Σ", "a", "Z", "🇫🇷", "👍🏽", "\u{0130}", "ǅ", " "]
        var generator = SystemRandomNumberGenerator()
        for options: ComparisonOptions in [[.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]] {
            for _ in 0..<5 {
                let text = (0..<(ValueSemantics.foldPiece * 6 + 7)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }.joined()
                var folding: String.CompareOptions = []
                if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
                if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
                #expect(ValueSemantics.fold(text, options) == text.folding(options: folding, locale: nil))
            }
        }
    }
}
