import Dispatch
import Foundation
import Synchronization

/// Screens regular expressions before they run, since NSRegularExpression has no time limit:
/// patterns whose matching can take exponential time are refused with an explanation.
package enum RegexGuard {
    /// The longest pattern accepted.
    static let maxPatternLength = 1_000
    /// The longest text `MATCHES` runs on.
    package static let maxSubjectLength = 100_000

    /// What to do about a pattern `problem(with:)` refused, by what it said.
    package static func fix(for problem: String) -> String {
        if problem.contains("not a valid regular expression") { return "check its brackets, parentheses and escapes (ICU's regular expression syntax)" }
        if problem.contains("longer than") { return "shorten the pattern" }
        if problem.contains("back-references") { return "match without back-references (\\1, \\k<name>)" }
        return "write a pattern without nested repetition, such as [ab]+ for (a|b)+"
    }

    /// Nil when the pattern is safe to run; otherwise why it is refused.
    package static func problem(with pattern: String) -> String? {
        if pattern.count > maxPatternLength { return "the pattern is longer than \(maxPatternLength) characters" }
        if (try? NSRegularExpression(pattern: pattern)) == nil { return "'\(pattern)' is not a valid regular expression" }
        let scalars = Array(pattern.unicodeScalars)
        // Track, for each open group, whether it contains a quantifier or an alternation.
        var stack: [(quantified: Bool, alternation: Bool)] = []
        var index = 0
        var inClass = false
        func isQuantifier(_ at: Int) -> Bool {
            guard at < scalars.count else { return false }
            return scalars[at] == "*" || scalars[at] == "+" || scalars[at] == "{" || scalars[at] == "?"
        }
        while index < scalars.count {
            let scalar = scalars[index]
            // \Q…\E quotes its contents: one literal run, whatever it holds.
            if scalar == "\\", index + 1 < scalars.count, scalars[index + 1] == "Q", !inClass {
                index += 2
                while index < scalars.count, !(scalars[index] == "\\" && index + 1 < scalars.count && scalars[index + 1] == "E") { index += 1 }
                index += 2
                if isQuantifier(index), let last = stack.indices.last { stack[last].quantified = true }
                continue
            }
            if scalar == "\\" {
                if index + 1 < scalars.count, ("1"..."9").contains(scalars[index + 1]) || scalars[index + 1] == "k" {
                    return "back-references can make matching take exponential time"
                }
                index += 2
                if isQuantifier(index), let last = stack.indices.last { stack[last].quantified = true }
                continue
            }
            if inClass { if scalar == "]" { inClass = false; if isQuantifier(index + 1), let last = stack.indices.last { stack[last].quantified = true } }; index += 1; continue }
            switch scalar {
            case "[": inClass = true
            case "(": stack.append((false, false))
            case "|": if let last = stack.indices.last { stack[last].alternation = true }
            case ")":
                guard let group = stack.popLast() else { break }
                let repeated = index + 1 < scalars.count && (scalars[index + 1] == "*" || scalars[index + 1] == "+" || scalars[index + 1] == "{")
                if repeated && (group.quantified || group.alternation) {
                    return "a repeated group that itself repeats or alternates, such as (a+)+ or (a|aa)*, can make matching take exponential time"
                }
                if (repeated || group.quantified), let last = stack.indices.last { stack[last].quantified = true }
            case "*", "+", "{", "?":
                if scalar != "?" || (index > 0 && scalars[index - 1] != "(") {
                    if let last = stack.indices.last { stack[last].quantified = true }
                }
            default: break
            }
            index += 1
        }
        return nil
    }

    /// What matching a text against a pattern found.
    package enum Outcome: Sendable {
        case matches, doesNotMatch
        /// The engine gave up (ICU stops a match after about a second and reports no match, on
        /// Linux without saying it stopped): neither answer is known.
        case gaveUp
    }

    /// How long a match may take before a "no match" is taken for the engine giving up: far
    /// beyond any match of a screened pattern on a subject of `maxSubjectLength`, below ICU's limit.
    static let givingUpSeconds = 0.25

    /// The outcome of matching the whole text against the pattern (compiled once and kept in a
    /// bounded cache). Callers check `problem(with:)` first. A pattern the engine gave up on once
    /// gives up at once afterwards, so that a store of such values costs one wait, not one per value.
    package static func match(_ text: String, _ pattern: String, caseInsensitive: Bool = false) -> Outcome {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        if gaveUpOn.withLock({ $0.contains(key) }) { return .gaveUp }
        let cached = compiled.withLock { $0[key] }
        let regex: NSRegularExpression
        if let cached { regex = cached } else {
            guard let made = try? NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : []) else { return .doesNotMatch }
            compiled.withLock { $0[key] = made }
            regex = made
        }
        let range = NSRange(text.startIndex..., in: text)
        let started = DispatchTime.now().uptimeNanoseconds
        guard let match = regex.firstMatch(in: text, options: [.anchored], range: range) else {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            guard seconds < givingUpSeconds else {
                gaveUpOn.withLock { if $0.count < 1_000 { $0.insert(key) } }
                return .gaveUp
            }
            return .doesNotMatch
        }
        return match.range == range ? .matches : .doesNotMatch
    }

    /// Why a pattern's outcome is unknown, for messages.
    package static func gaveUpMessage(_ pattern: String) -> String {
        "the regular expression engine gave up matching '\(pattern)' (it backtracks too much on such text), so whether the text matches is not known; "
            + "simplify the pattern (fewer repetitions that can match the same characters, such as [a-z]*[a-z]*)"
    }

    private static let gaveUpOn = Mutex(Set<String>())
    private static let compiled = Mutex(BoundedCache<String, NSRegularExpression>(capacity: 64))
}

