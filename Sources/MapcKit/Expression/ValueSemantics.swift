import Foundation

/// Equality, ordering and arithmetic across values, as documented in docs/expressions.md.
///
/// - Numbers compare by numeric value whatever their type (integer, double, decimal); booleans
///   compare as 0 and 1 with numbers, as NSNumber does.
/// - Strings compare by Unicode scalars, after folding case (`[c]`) and diacritics (`[d]`).
/// - nil equals only nil; ordering comparisons with nil are false.
/// - Values of unrelated kinds are unequal and unordered (the checker reports such comparisons).
enum ValueSemantics {
    enum Number {
        case integer(Int64)
        case double(Double)
        case decimal(Decimal)

        var double: Double {
            switch self {
            case .integer(let n): return Double(n)
            case .double(let d): return d
            case .decimal(let d): return NSDecimalNumber(decimal: d).doubleValue
            }
        }

        var decimal: Decimal {
            switch self {
            case .integer(let n): return Decimal(n)
            case .double(let d): return Decimal(d)
            case .decimal(let d): return d
            }
        }

        var value: Value {
            switch self {
            case .integer(let n): return .integer(n)
            case .double(let d): return .double(d)
            case .decimal(let d): return .decimal(d)
            }
        }
    }

    static func number(_ value: EvalValue) -> Number? {
        guard case .scalar(let scalar) = value else { return nil }
        switch scalar {
        case .integer(let n): return .integer(n)
        case .double(let d): return .double(d)
        case .decimal(let d): return .decimal(d)
        case .bool(let flag): return .integer(flag ? 1 : 0)
        default: return nil
        }
    }

    static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return folding.isEmpty ? text : text.folding(options: folding, locale: nil)
    }

    /// Orders two values; nil when they cannot be ordered.
    static func compare(_ lhs: EvalValue, _ rhs: EvalValue, options: ComparisonOptions = []) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
        }
        switch (lhs, rhs) {
        case let (.scalar(.string(a)), .scalar(.string(b))):
            let left = fold(a, options), right = fold(b, options)
            if left == right { return .orderedSame }
            return left.unicodeScalars.lexicographicallyPrecedes(right.unicodeScalars) ? .orderedAscending : .orderedDescending
        case let (.scalar(.date(a)), .scalar(.date(b))): return order(a, b)
        case let (.scalar(.uuid(a)), .scalar(.uuid(b))): return order(a.uuidString, b.uuidString)
        case let (.scalar(.uri(a)), .scalar(.uri(b))): return order(a, b)
        case let (.scalar(.binary(a)), .scalar(.binary(b))):
            return a == b ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
        default:
            guard let a = number(lhs), let b = number(rhs) else { return nil }
            switch (a, b) {
            case let (.integer(x), .integer(y)): return order(x, y)
            // Exactly, as SQLite compares integers with reals: through Double, 2^53 + 1 would equal 2^53.
            case let (.integer(x), .double(y)): return exactOrder(x, y)
            case let (.double(x), .integer(y)): return exactOrder(y, x).map(\.reversed)
            case (.decimal, _), (_, .decimal):
                if case .double = a { return order(a.double, b.double) }
                if case .double = b { return order(a.double, b.double) }
                return order(a.decimal, b.decimal)
            default:
                return order(a.double, b.double)
            }
        }
    }

    /// Orders an integer and a double exactly; nil when the double is NaN.
    static func exactOrder(_ integer: Int64, _ double: Double) -> ComparisonResult? {
        if double.isNaN { return nil }
        if double >= 9_223_372_036_854_775_808.0 { return .orderedAscending }   // 2^63: above every Int64
        if double < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = double.rounded(.down)
        let truncated = Int64(whole)
        if integer != truncated { return integer < truncated ? .orderedAscending : .orderedDescending }
        return double > whole ? .orderedAscending : .orderedSame
    }

    /// Equality under the rules above; collections compare element-wise when both are ordered,
    /// as sets otherwise.
    static func equal(_ lhs: EvalValue, _ rhs: EvalValue, options: ComparisonOptions = []) -> Bool {
        switch (lhs, rhs) {
        case (.scalar(.null), .scalar(.null)): return true
        case (.scalar(.null), _), (_, .scalar(.null)): return false
        case let (.object(a), .object(b)): return a == b
        case let (.handle(a), .handle(b)): return a == b
        case let (.collection(a, orderedA), .collection(b, orderedB)):
            if orderedA && orderedB { return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1, options: options) } }
            return a.allSatisfy { x in b.contains { equal(x, $0, options: options) } } && b.allSatisfy { y in a.contains { equal(y, $0, options: options) } }
        case let (.scalar(.bool(a)), .scalar(.bool(b))): return a == b
        case let (.scalar(.string(a)), .scalar(.string(b))): return fold(a, options) == fold(b, options)
        default:
            return compare(lhs, rhs, options: options) == .orderedSame
        }
    }

    // MARK: Strings

    /// LIKE: `*` matches any run of characters, `?` exactly one; everything else literally.
    /// Linear-time greedy matching with one backtrack point: no pattern can make it run away.
    static func like(_ text: String, _ pattern: String, options: ComparisonOptions) -> Bool {
        let s = Array(fold(text, options)), p = Array(fold(pattern, options))
        var i = 0, j = 0
        var star = -1, mark = 0
        while i < s.count {
            if j < p.count && (p[j] == "?" || (p[j] != "*" && p[j] == s[i])) {
                i += 1; j += 1
            } else if j < p.count && p[j] == "*" {
                star = j; mark = i; j += 1
            } else if star >= 0 {
                j = star + 1; mark += 1; i = mark
            } else {
                return false
            }
        }
        while j < p.count && p[j] == "*" { j += 1 }
        return j == p.count
    }

    // MARK: Arithmetic

    static func arithmetic(_ op: BinaryOperator, _ lhs: EvalValue, _ rhs: EvalValue) -> Result<EvalValue, SemanticError> {
        if lhs.isNull || rhs.isNull { return .success(.null) }
        // Dates: date ± seconds, date - date.
        switch (op, lhs, rhs) {
        case let (.add, .scalar(.date(date)), other), let (.add, other, .scalar(.date(date))):
            guard let seconds = number(other)?.double else { break }
            return .success(.scalar(.date(date.addingTimeInterval(seconds))))
        case let (.subtract, .scalar(.date(a)), .scalar(.date(b))):
            return .success(.scalar(.double(a.timeIntervalSince(b))))
        case let (.subtract, .scalar(.date(date)), other):
            guard let seconds = number(other)?.double else { break }
            return .success(.scalar(.date(date.addingTimeInterval(-seconds))))
        case let (.add, .scalar(.string(a)), .scalar(.string(b))):
            return .success(.scalar(.string(a + b)))
        default: break
        }
        guard let a = number(lhs), let b = number(rhs) else {
            return .failure(SemanticError("cannot apply '\(op.rawValue)' to \(lhs.kindName) and \(rhs.kindName)"))
        }
        switch (a, b) {
        case let (.integer(x), .integer(y)) where op != .divide && op != .power:
            let (result, overflow): (Int64, Bool)
            switch op {
            case .add: (result, overflow) = x.addingReportingOverflow(y)
            case .subtract: (result, overflow) = x.subtractingReportingOverflow(y)
            default: (result, overflow) = x.multipliedReportingOverflow(by: y)
            }
            return overflow ? .failure(SemanticError("integer overflow in \(x) \(op.rawValue) \(y)")) : .success(.scalar(.integer(result)))
        case (.decimal, _), (_, .decimal):
            if case .double = a { break }
            if case .double = b { break }
            let x = a.decimal, y = b.decimal
            switch op {
            case .add: return .success(.scalar(.decimal(x + y)))
            case .subtract: return .success(.scalar(.decimal(x - y)))
            case .multiply: return .success(.scalar(.decimal(x * y)))
            case .divide:
                guard y != 0 else { return .failure(SemanticError("division by zero")) }
                return .success(.scalar(.decimal(x / y)))
            default: break
            }
        default: break
        }
        let x = a.double, y = b.double
        let result: Double
        switch op {
        case .add: result = x + y
        case .subtract: result = x - y
        case .multiply: result = x * y
        case .divide:
            guard y != 0 else { return .failure(SemanticError("division by zero")) }
            result = x / y
        case .power: result = pow(x, y)
        default: return .failure(SemanticError("'\(op.rawValue)' needs collections"))
        }
        guard result.isFinite else { return .failure(SemanticError("the result of \(x) \(op.rawValue) \(y) is not a finite number")) }
        return .success(.scalar(.double(result)))
    }

    static func negate(_ value: EvalValue) -> Result<EvalValue, SemanticError> {
        if value.isNull { return .success(.null) }
        switch number(value) {
        case .integer(let n)?:
            guard n != .min else { return .failure(SemanticError("integer overflow negating \(n)")) }
            return .success(.scalar(.integer(-n)))
        case .double(let d)?: return .success(.scalar(.double(-d)))
        case .decimal(let d)?: return .success(.scalar(.decimal(-d)))
        case nil: return .failure(SemanticError("cannot negate \(value.kindName)"))
        }
    }
}

/// A value-level failure (overflow, division by zero, wrong kinds); the evaluator adds the position.
struct SemanticError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Screens regular expressions before they run, since NSRegularExpression has no time limit:
/// patterns whose matching can take exponential time are refused with an explanation.
public enum RegexGuard {
    /// The longest pattern accepted.
    public static let maxPatternLength = 1_000
    /// The longest text `MATCHES` runs on.
    public static let maxSubjectLength = 100_000

    /// Nil when the pattern is safe to run; otherwise why it is refused.
    public static func problem(with pattern: String) -> String? {
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

    /// Whether the whole text matches the pattern. Callers check `problem(with:)` first.
    static func matches(_ text: String, _ pattern: String, options: ComparisonOptions) -> Bool {
        var regexOptions: NSRegularExpression.Options = []
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        let subject = options.contains(.diacriticInsensitive) ? ValueSemantics.fold(text, [.diacriticInsensitive]) : text
        guard let regex = try? NSRegularExpression(pattern: pattern, options: regexOptions) else { return false }
        let range = NSRange(subject.startIndex..., in: subject)
        guard let match = regex.firstMatch(in: subject, options: [.anchored], range: range) else { return false }
        return match.range == range
    }
}

extension ComparisonResult {
    /// The order seen from the other side.
    var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}
