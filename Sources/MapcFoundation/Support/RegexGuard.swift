import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
        // Free spacing (`(?x)`) makes whitespace and `#…` no characters: a delimiter read as one
        // may not be there.
        let freeSpacing = pattern.range(of: #"\(\?[a-zA-Z-]*x"#, options: .regularExpression) != nil
        // Track, for each open group, whether it contains a quantifier or an alternation.
        var stack: [(quantified: Bool, alternation: Bool, start: Int)] = []
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
            case "(": stack.append((false, false, index))
            case "|": if let last = stack.indices.last { stack[last].alternation = true }
            case ")":
                guard let group = stack.popLast() else { break }
                let repeated = index + 1 < scalars.count && (scalars[index + 1] == "*" || scalars[index + 1] == "+" || scalars[index + 1] == "{")
                if repeated && (group.alternation || (group.quantified && (freeSpacing || !splitsByDelimiter(scalars[(group.start + 1)..<index])))) {
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

    /// Whether a group's body, repeated, splits a text one way only: a plain sequence of atoms
    /// (no group, no alternation), each matching one character, of which exactly one repeats,
    /// and one taken once (the delimiter) matches only characters no other atom of the body can
    /// match, none of them with a case. Each repetition then holds exactly one of those
    /// characters, and the repeated atom's extent is fixed by it: `([a-z0-9-]+\.)+` and
    /// `(\d+\.)*` match in linear time. Two repeated atoms (`([a-z]+ [a-z]+)+`, `(a*a*,)+`), an
    /// atom besides the delimiter that matches its characters (`([a-z]+.,)+`), or anything not
    /// understood here (a class it cannot read, a flag, a nested group) is not.
    static func splitsByDelimiter(_ body: ArraySlice<Unicode.Scalar>) -> Bool {
        // Each atom: what it matches, the characters themselves when they are few (a literal, a
        // bracketed list, `\s`), and whether it repeats.
        var atoms: [(matches: (Unicode.Scalar) -> Bool, members: [ClosedRange<UInt32>]?, repeated: Bool)] = []
        var index = body.startIndex
        if index < body.endIndex, body[index] == "?" {
            // A non-capturing group's `?:` only.
            guard index + 1 < body.endIndex, body[index + 1] == ":" else { return false }
            index += 2
        }
        while index < body.endIndex {
            let scalar = body[index]
            var matches: (Unicode.Scalar) -> Bool
            var members: [ClosedRange<UInt32>]?
            switch scalar {
            case "(", ")", "|", "^", "$", "*", "+", "?", "{", "#": return false
            case ".": matches = { _ in true }
            case "\\":
                guard index + 1 < body.endIndex else { return false }
                let escaped = body[index + 1]
                index += 1
                switch escaped {
                case "d": matches = isICUDigit
                case "D": matches = { !isICUDigit($0) }
                case "w": matches = isICUWordCharacter
                case "W": matches = { !isICUWordCharacter($0) }
                case "s": matches = { $0.properties.isWhitespace }; members = whitespace
                case "S": matches = { !$0.properties.isWhitespace }
                // An escaped punctuation character is itself; any other escape is not read here.
                case _ where escaped.isASCII && !escaped.properties.isAlphabetic && !("0"..."9").contains(escaped):
                    matches = { $0 == escaped }
                    members = [escaped.value...escaped.value]
                default: return false
                }
            case "[":
                guard let (set, listed, end) = characterClass(body, from: index) else { return false }
                matches = set
                members = listed
                index = end
            default:
                matches = { $0 == scalar }
                members = [scalar.value...scalar.value]
            }
            index += 1
            // Its quantifier, with a lazy or possessive mark after it.
            var repeated = false
            if index < body.endIndex, ["*", "+", "?", "{"].contains(body[index]) {
                repeated = true
                if body[index] == "{" {
                    guard let close = body[index...].firstIndex(of: "}") else { return false }
                    index = close
                }
                index += 1
                if index < body.endIndex, body[index] == "?" || body[index] == "+" { index += 1 }
            }
            atoms.append((matches, members, repeated))
        }
        guard atoms.filter(\.repeated).count == 1 else { return false }
        return atoms.indices.contains { candidate in
            // A delimiter of few characters (a literal, `[.,;]`, `\s`), none with a case (a
            // pattern may be matched without regard to case), none matched by another atom.
            let delimiter = atoms[candidate]
            guard !delimiter.repeated, let members = delimiter.members, members.reduce(0, { $0 + $1.count }) <= 4_096 else { return false }
            return !members.contains { range in
                range.contains { value in
                    guard let scalar = Unicode.Scalar(value) else { return false }
                    if String(scalar).lowercased() != String(scalar) || String(scalar).uppercased() != String(scalar) { return true }
                    return atoms.indices.contains { $0 != candidate && atoms[$0].matches(scalar) }
                }
            }
        }
    }

    /// ICU's `\d`: a decimal digit of any script (general category Nd).
    private static func isICUDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .decimalNumber
    }

    /// ICU's `\w`: alphabetic, a mark, a decimal digit, connector punctuation, or a zero-width
    /// (non-)joiner.
    private static func isICUWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .connectorPunctuation: return true
        default: return scalar.properties.isAlphabetic || scalar.value == 0x200C || scalar.value == 0x200D
        }
    }

    /// The characters `\s` matches (Unicode's White_Space, as ICU's `\s`).
    private static let whitespace: [ClosedRange<UInt32>] = [0x9...0xD, 0x20...0x20, 0x85...0x85, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A,
                                                              0x2028...0x2029, 0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000]

    /// A bracketed class starting at `start`, read when it holds only characters, ranges and the
    /// escapes `\d \w \s` and escaped punctuation (negated or not): what it matches, its
    /// characters when it lists them (not negated, no `\d`, `\w`, `\s`), and where it ends; nil for
    /// anything else (nested sets, properties, POSIX names).
    private static func characterClass(_ body: ArraySlice<Unicode.Scalar>, from start: Int) -> ((Unicode.Scalar) -> Bool, [ClosedRange<UInt32>]?, Int)? {
        var index = start + 1
        var negated = false
        if index < body.endIndex, body[index] == "^" { negated = true; index += 1 }
        var members: [(Unicode.Scalar) -> Bool] = []
        var listed: [ClosedRange<UInt32>]? = []
        var first = true
        while index < body.endIndex {
            var scalar = body[index]
            if scalar == "]" && !first { break }
            first = false
            if scalar == "[" { return nil }
            if scalar == "\\" {
                guard index + 1 < body.endIndex else { return nil }
                let escaped = body[index + 1]
                index += 2
                switch escaped {
                case "d": members.append(isICUDigit); listed = nil; continue
                case "w": members.append(isICUWordCharacter); listed = nil; continue
                case "s": members.append { $0.properties.isWhitespace }; listed = nil; continue
                case _ where escaped.isASCII && !escaped.properties.isAlphabetic && !("0"..."9").contains(escaped): scalar = escaped; index -= 1
                default: return nil
                }
            }
            // A range `a-z` (a `-` first or last is itself).
            if index + 2 < body.endIndex, body[index + 1] == "-", body[index + 2] != "]", body[index + 2] != "\\", body[index + 2] != "[" {
                let low = scalar, high = body[index + 2]
                guard low.value <= high.value else { return nil }
                members.append { $0.value >= low.value && $0.value <= high.value }
                listed?.append(low.value...high.value)
                index += 3
                continue
            }
            let member = scalar
            members.append { $0 == member }
            listed?.append(member.value...member.value)
            index += 1
        }
        guard index < body.endIndex, body[index] == "]" else { return nil }
        let all = members
        return ({ scalar in all.contains { $0(scalar) } != negated }, negated ? nil : listed, index)
    }

    /// What matching a text against a pattern found.
    package enum Outcome: Sendable {
        case matches, doesNotMatch
        /// No answer to trust: the match worked long without finding one, and ICU stops a match
        /// after a budget of work (half a second to a second here, by pattern) and then reports
        /// no match, without saying it stopped (on Linux).
        case gaveUp
    }

    /// The work (this thread's CPU seconds) after which a "no match" is not trusted: below the
    /// earliest point ICU was seen to stop (0.46 s), far beyond any match of a screened pattern
    /// on usual text. A pattern that needs this long is one to simplify, whatever its answer.
    static let untrustedSeconds = 0.25

    /// The work after which a "no match" is not trusted on this machine: half of what ICU takes
    /// to stop on a match known to need more than its budget (0.46 s of CPU here, so 0.23 s),
    /// measured once, the first time a match takes long; never more than `untrustedSeconds`.
    private static func untrustedLine() -> Double {
        if let known = calibrated.withLock({ $0 }) { return known }
        var line = untrustedSeconds
        if let regex = try? NSRegularExpression(pattern: "(a|a)*b") {
            let text = String(repeating: "a", count: 40)
            let started = threadSeconds()
            _ = regex.firstMatch(in: text, options: [.anchored], range: NSRange(text.startIndex..., in: text))
            line = min(untrustedSeconds, max(quickSeconds, (threadSeconds() - started) / 2))
        }
        calibrated.withLock { $0 = line }
        return line
    }

    private static let calibrated = Mutex<Double?>(nil)

    /// A match shorter than this is never doubted (nor is the line measured for it).
    static let quickSeconds = 0.02

    /// The outcome of matching the whole text against the pattern (compiled once and kept in a
    /// bounded cache). Callers check `problem(with:)` first. A pattern with no answer on a text
    /// has none at once afterwards on texts at least half as long (of the same power of two or
    /// longer), so that a store of such values costs one wait, not one per value, while shorter
    /// texts are still matched.
    package static func match(_ text: String, _ pattern: String, caseInsensitive: Bool = false) -> Outcome {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        let length = text.utf16.count
        let lengthClass = length == 0 ? 0 : Int.bitWidth - length.leadingZeroBitCount
        if let known = gaveUpOn.withLock({ $0[key] }), known <= lengthClass { return .gaveUp }
        // Each pattern pays ICU's budget once; a file of many patterns (one per attribute, each
        // a little different) would pay it for each: minutes. Once the process has spent
        // `totalGiveUpSeconds` on patterns that gave up, a text as long as the shortest they gave
        // up on is not tried under any other pattern either.
        if let spentOn = exhausted.withLock({ $0.seconds >= totalGiveUpSeconds ? $0.shortestClass : nil }), spentOn <= lengthClass { return .gaveUp }
        let cached = compiled.withLock { $0[key] }
        let regex: NSRegularExpression
        if let cached { regex = cached } else {
            // The whole text must match (NSPredicate's MATCHES): anchored at its start and, by
            // `\z`, at its end, so that ICU backtracks into a later alternative ("ab" against
            // "a|ab") rather than stopping at a shorter first match.
            // With ICU's DOTALL and MULTILINE flags, as NSPredicate opens every pattern (`uregex_open`
            // with 0x28): `.` matches a line break, `^` and `$` match at each line.
            let flags: NSRegularExpression.Options = [.dotMatchesLineSeparators, .anchorsMatchLines]
            guard let made = try? NSRegularExpression(pattern: "(?:" + pattern + ")\\z", options: caseInsensitive ? flags.union(.caseInsensitive) : flags) else { return .doesNotMatch }
            compiled.withLock { $0[key] = made }
            regex = made
        }
        let range = NSRange(text.startIndex..., in: text)
        let started = threadSeconds()
        // Anchored at both ends, a match found is a match of the whole text.
        guard regex.firstMatch(in: text, options: [.anchored], range: range) != nil else {
            let worked = threadSeconds() - started
            // Most matches end in microseconds; only a long one is measured against the line.
            guard worked < quickSeconds || worked < untrustedLine() else {
                gaveUpOn.withLock { known in
                    if known.count >= 1_000 { known.removeAll() }
                    known[key] = min(known[key] ?? lengthClass, lengthClass)
                }
                exhausted.withLock { spent in
                    spent.seconds += worked
                    spent.shortestClass = min(spent.shortestClass, lengthClass)
                }
                return .gaveUp
            }
            return .doesNotMatch
        }
        return .matches
    }

    /// This thread's CPU time in seconds (a pause of the process is not work).
    private static func threadSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Why a pattern's outcome is unknown, for messages.
    package static func gaveUpMessage(_ pattern: String) -> String {
        "matching '\(pattern)' on such text works long without finding a match, and the regular expression engine stops after a budget of work and then reports none "
            + "(once patterns have spent \(Int(totalGiveUpSeconds)) s so, texts as long are not tried), "
            + "so whether the text matches is not known; simplify the pattern (fewer repetitions that can match the same characters, such as [a-z]*[a-z]*)"
    }

    /// The CPU time all patterns together may spend giving up before long texts are no longer
    /// tried (`match`): a few patterns' budgets.
    static let totalGiveUpSeconds = 2.0

    /// The time spent on matches that gave up, and the shortest length class they gave up on.
    private static let exhausted = Mutex((seconds: 0.0, shortestClass: Int.max))

    /// Starts the shared budget anew: a long-lived process (the language server) does so for
    /// each check, so that patterns mended since are tried again.
    package static func renewBudget() {
        exhausted.withLock { $0 = (0, Int.max) }
        gaveUpOn.withLock { $0.removeAll() }
    }

    /// Patterns with no answer, by the smallest length class (the bit length of a text's length)
    /// they had none on.
    private static let gaveUpOn = Mutex([String: Int]())
    private static let compiled = Mutex(BoundedCache<String, NSRegularExpression>(capacity: 64))
}

