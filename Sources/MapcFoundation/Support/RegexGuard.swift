import Foundation
import Synchronization

/// Screens regular expressions before they run, since NSRegularExpression has no time limit:
/// patterns whose matching can take exponential time are refused with an explanation.
package enum RegexGuard {
    /// The longest pattern accepted.
    static let maxPatternLength = 1_000
    /// The longest text `MATCHES` runs on.
    package static let maxSubjectLength = 100_000

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

    /// Whether the whole text matches the pattern (compiled once and kept in a bounded cache).
    /// Callers check `problem(with:)` first.
    package static func matchesWhole(_ text: String, _ pattern: String, caseInsensitive: Bool = false) -> Bool {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        let cached = compiled.withLock { $0[key] }
        let regex: NSRegularExpression
        if let cached { regex = cached } else {
            guard let made = try? NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : []) else { return false }
            compiled.withLock { $0[key] = made }
            regex = made
        }
        let range = NSRange(text.startIndex..., in: text)
        guard let match = regex.firstMatch(in: text, options: [.anchored], range: range) else { return false }
        return match.range == range
    }

    private static let compiled = Mutex(BoundedCache<String, NSRegularExpression>(capacity: 64))
}

