import Foundation
import MapcFoundation
import Testing

/// The screen of regular expressions (NSRegularExpression has no time limit of its own).
@Suite("Regular expressions screened before they run")
struct RegexGuardTests {
    /// A repeated group whose every repetition must take one delimiter its repeated parts cannot
    /// match splits its text one way only: common patterns for host names and version numbers,
    /// in real Core Data models (`regularExpressionString`), were refused as exponential.
    @Test(arguments: [#"^([a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}$"#, #"(\d+\.)*\d+"#, #"(?:\w+\s)+\w*"#, #"([^,]+,)*[^,]*"#, #"([A-Z][a-z]*-)+[A-Z]"#,
                      #"(\d{1,3}\.){3}\d{1,3}"#, #"([a-z]+[.,;])+x"#, #"([a-z]+[.])+x"#])
    func aRepeatedGroupSplitByItsDelimiterIsAccepted(pattern: String) {
        #expect(RegexGuard.problem(with: pattern) == nil, "\(pattern)")
    }

    /// Nested repetition that can split a text many ways is still refused: no delimiter, an
    /// optional one, one its repeated part can match, an alternation, a nested group.
    @Test(arguments: [#"(a+)+b"#, #"(a|aa)*"#, #"(\w+\s?)+$"#, #"([a-z.]+\.)+x"#, #"(.+,)+x"#, #"(\w+\d)+x"#, #"((a+)\.)+x"#, #"([^,]+\,?)*x"#,
                      #"(\S+\s)*(\s+)+x"#,
                      // Found by the review: two repeated atoms, an atom matching the delimiter,
                      // free spacing, and \w's connector punctuation.
                      #"([a-z0-9]+-?[a-z0-9]*\.)+[a-z]{2,}"#, #"(a*a*,)+"#, #"(a*,a*)+"#, #"(\d+\.\d+)+"#, #"([a-z]+ [a-z]+)+"#, #"(a*.a*,)+"#,
                      #"([a-z]+.,)+x"#, #"(?x)(a+ )+"#, #"(\w+‿)+"#, #"([a-z]+[aA.])+x"#])
    func nestedRepetitionThatCanSplitManyWaysIsRefused(pattern: String) {
        #expect(RegexGuard.problem(with: pattern)?.contains("exponential") == true, "\(pattern)")
    }

    /// What the screen accepts runs in bounded time on the texts that break backtracking.
    @Test func anAcceptedPatternAnswersOnAnAdversarialText() {
        let text = String(repeating: "a.", count: 20_000) + "!"
        #expect(RegexGuard.match(text, #"^([a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}$"#) == .doesNotMatch)
        #expect(RegexGuard.match("www.example.com", #"^([a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}$"#) == .matches)
    }
}
