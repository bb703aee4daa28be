import Foundation
import MapcFoundation

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
            case .decimal(let d): return ValueRules.double(of: d)
            }
        }

        var isInteger: Bool { if case .integer = self { return true } else { return false } }
        var isDouble: Bool { if case .double = self { return true } else { return false } }
        var isDecimal: Bool { if case .decimal = self { return true } else { return false } }

        var decimal: Decimal {
            switch self {
            case .integer(let n): return Decimal(n)
            // NaN for a double no decimal holds (infinite, or beyond 1e165): `Decimal(d)` traps there.
            case .double(let d): return ValueRules.decimal(of: d) ?? .nan
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

    /// Text in lower case as Foundation's `lowercaseString` gives it (`lowercase:`): Unicode's
    /// full mapping with its one rule that depends on context, a capital sigma that ends a word
    /// becoming the final form (`"ΟΔΟΣ"` is `"οδος"`), which Swift's `lowercased()` leaves out.
    static func lowercased(_ text: String) -> String {
        guard text.unicodeScalars.contains("\u{03A3}") else { return text.lowercased() }
        let scalars = Array(text.unicodeScalars)
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for (index, scalar) in scalars.enumerated() {
            guard scalar == "\u{03A3}" else { result += String(scalar).lowercased(); continue }
            // Unicode's Final_Sigma: a cased letter before it and none after it, case-ignorable
            // characters (accents, apostrophes) passed over on both sides.
            let before = scalars[..<index].reversed().first { !$0.properties.isCaseIgnorable }
            let after = scalars[(index + 1)...].first { !$0.properties.isCaseIgnorable }
            let final = before?.properties.isCased == true && after?.properties.isCased != true
            result += final ? "\u{03C2}" : "\u{03C3}"
        }
        return result
    }

    static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return text }
        // NSPredicate adds width insensitivity to either (`"ｆｕｌｌ" ==[c] "full"` is true): the
        // flags it passes CFStringFold are case | width for `[c]`, diacritics | width for `[d]`.
        folding.insert(.widthInsensitive)
        // Foundation's folding takes time quadratic in the length of text whose characters
        // expand (160,000 "ß" took 0.2 s, 1.28 million 17 s). Folding is character by character,
        // so a long text is folded in pieces cut between characters: linear.
        guard text.utf8.count > foldPiece * 4 else { return text.folding(options: folding, locale: nil) }
        var folded = "", start = text.startIndex
        folded.reserveCapacity(text.utf8.count)
        while start < text.endIndex {
            let end = text.index(start, offsetBy: foldPiece, limitedBy: text.endIndex) ?? text.endIndex
            folded += text[start..<end].folding(options: folding, locale: nil)
            start = end
        }
        return folded
    }

    /// The characters folded at once by `fold`.
    static let foldPiece = 512

    /// Orders two values; nil when they cannot be ordered: mapc's one order (`ValueOrder`), with
    /// strings folded first as the comparison's options say.
    static func compare(_ lhs: EvalValue, _ rhs: EvalValue, options: ComparisonOptions = []) -> ComparisonResult? {
        guard case .scalar(let left) = lhs, case .scalar(let right) = rhs else { return nil }
        if case .string(let a) = left, case .string(let b) = right, !options.isEmpty {
            return ValueOrder.compare(.string(fold(a, options)), .string(fold(b, options)))
        }
        return ValueOrder.compare(left, right)
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
        // By Unicode scalars, as the order: "é" written as one scalar is not "e" and a combining accent.
        case let (.scalar(.string(a)), .scalar(.string(b))): return fold(a, options).unicodeScalars.elementsEqual(fold(b, options).unicodeScalars)
        // Byte for byte: such text has no characters to fold.
        case let (.scalar(.nonUTF8Text(a)), .scalar(.nonUTF8Text(b))): return a == b
        default:
            return compare(lhs, rhs, options: options) == .orderedSame
        }
    }

    // MARK: Strings

    /// A number's text as `NSNumber`'s `description` and `stringValue` write it (what
    /// `CAST(x, "NSString")` and `componentsJoinedByString:` take): a double with `%0.16g`, 16
    /// significant digits (`0.1 + 0.2` is "0.3", the largest double "1.797693134862316e+308"), a
    /// float with `%0.7g` ("0.1" for the float nearest 0.1, which widens to 0.10000000149011612).
    /// Whole numbers have no ".0", a negative zero keeps its sign ("-0"), as `%g` writes them.
    static func numberText(_ number: Double, float: Bool) -> String {
        String(format: float ? "%0.7g" : "%0.16g", number)
    }

    /// The text without the code points of `set` at either end, as Foundation trims (by code
    /// point: a character past U+FFFF is trimmed as one, an accent left where its letter was).
    static func trimming(_ text: String, _ set: CharacterSet) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !set.contains($0) }), let last = scalars.lastIndex(where: { !set.contains($0) }) else { return "" }
        return String(scalars[first...last])
    }

    // MARK: Text tests

    /// Whether `text` starts with `prefix`: by Unicode scalars, as `==` compares text (é as one
    /// scalar does not start e + accent; e + accent starts with e), compared as UTF-8 bytes, which
    /// is the same for valid text. An empty prefix starts no text, as Foundation's `hasPrefix:`
    /// answers (and NSPredicate's BEGINSWITH); so for the suffix and the part of the next two.
    static func textHasPrefix(_ text: String, _ prefix: String) -> Bool {
        !prefix.isEmpty && text.utf8.starts(with: prefix.utf8)
    }

    /// Whether `text` ends with `suffix`, as `textHasPrefix` compares.
    static func textHasSuffix(_ text: String, _ suffix: String) -> Bool {
        !suffix.isEmpty && text.utf8.count >= suffix.utf8.count && text.utf8.reversed().starts(with: suffix.utf8.reversed())
    }

    /// Whether `text` holds `part`, as `textHasPrefix` compares, in linear time (`ByteSearch`).
    static func textContains(_ text: String, _ part: String) -> Bool {
        !part.isEmpty && ByteSearch.contains(text, part)
    }

    /// One piece of a LIKE pattern.
    enum LikePiece: Equatable {
        /// `*`: any run of scalars.
        case anyRun
        /// `?`: exactly one scalar.
        case anyOne
        /// A scalar matched as itself.
        case literal(Unicode.Scalar)
    }

    /// A LIKE pattern's pieces, read as NSPredicate reads one: `\*` and `\?` are the characters
    /// themselves, `\\` a backslash, a backslash before any other character nothing (`\a` is
    /// `a`); a lone backslash at the end is an error, as Apple's ("The backslash is a wildcard
    /// char, and cannot appear unescaped at the end of a string").
    static func likePieces(_ pattern: String) -> Result<[LikePiece], SemanticError> {
        var pieces: [LikePiece] = []
        var escaped = false
        for scalar in pattern.unicodeScalars {
            switch scalar {
            case "\\" where !escaped: escaped = true; continue
            case "*" where !escaped: pieces.append(.anyRun)
            case "?" where !escaped: pieces.append(.anyOne)
            default: pieces.append(.literal(scalar))
            }
            escaped = false
        }
        if escaped { return .failure(SemanticError("LIKE pattern '\(pattern)' ends with a lone backslash, which escapes nothing; write \\\\ for a backslash")) }
        return .success(pieces)
    }

    /// LIKE: `*` matches any run of Unicode scalars, `?` exactly one, a backslash escapes
    /// (`likePieces`); everything else literally; the whole text must match. Greedy matching
    /// with one backtrack point: linear for most patterns, at worst the text's length times the
    /// pattern's, so each step is charged to `budget`; nil when it runs out.
    static func like(_ text: String, _ pattern: String, options: ComparisonOptions, budget: inout Int) -> Result<Bool?, SemanticError> {
        let s = Array(fold(text, options).unicodeScalars)
        let written: [LikePiece]
        switch likePieces(pattern) {
        case .success(let pieces): written = pieces
        case .failure(let error): return .failure(error)
        }
        // Runs of literal characters folded as the text is, after the pattern is read: a
        // wildcard is what the pattern wrote as one, never what folding makes of another
        // character (a full-width ＊ under [c]).
        var p: [LikePiece] = [], run = ""
        func foldRun() {
            p += fold(run, options).unicodeScalars.map { .literal($0) }
            run = ""
        }
        for piece in written {
            if case .literal(let scalar) = piece { run.unicodeScalars.append(scalar) } else { foldRun(); p.append(piece) }
        }
        foldRun()
        var i = 0, j = 0
        var star = -1, mark = 0
        while i < s.count {
            budget -= 1
            if budget < 0 { return .success(nil) }
            if j < p.count && (p[j] == .anyOne || p[j] == .literal(s[i])) {
                i += 1; j += 1
            } else if j < p.count && p[j] == .anyRun {
                star = j; mark = i; j += 1
            } else if star >= 0 {
                j = star + 1; mark += 1; i = mark
            } else {
                return .success(false)
            }
        }
        while j < p.count && p[j] == .anyRun { j += 1 }
        return .success(j == p.count)
    }

    // MARK: Arithmetic

    /// The least exponent a decimal has (Foundation's `Decimal`, NSDecimalNumber's).
    static let leastDecimalExponent = DecimalArithmetic.leastExponent

    static func arithmetic(_ op: BinaryOperator, _ lhs: EvalValue, _ rhs: EvalValue) -> Result<EvalValue, SemanticError> {
        if lhs.isNull || rhs.isNull { return .success(.null) }
        // Dates: date ± seconds, date - date.
        switch (op, lhs, rhs) {
        case let (.add, .scalar(.date(date)), other), let (.add, other, .scalar(.date(date))):
            guard let seconds = number(other)?.double else { break }
            return dateResult(date, plus: seconds)
        case let (.subtract, .scalar(.date(a)), .scalar(.date(b))):
            return .success(.scalar(.double(a.seconds(from: b))))
        case let (.subtract, .scalar(.date(date)), other):
            guard let seconds = number(other)?.double else { break }
            return dateResult(date, plus: -seconds)
        case let (.add, .scalar(.string(a)), .scalar(.string(b))):
            return .success(.scalar(.string(a + b)))
        default: break
        }
        guard let a = number(lhs), let b = number(rhs) else {
            return .failure(SemanticError("cannot apply '\(op.rawValue)' to \(lhs.kindName) and \(rhs.kindName)"))
        }
        switch (a, b) {
        case let (.integer(x), .integer(y)) where op == .divide:
            // As NSExpression divides two integers: an integer, truncated toward zero (7 / 2 is 3).
            guard y != 0 else { return .failure(SemanticError("division by zero")) }
            let (result, overflow) = x.dividedReportingOverflow(by: y)
            return overflow ? .failure(SemanticError("integer overflow in \(x) / \(y)")) : .success(.scalar(.integer(result)))
        case let (.integer(x), .integer(y)) where op != .power:
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
            case .add: return total(x, y).map { .scalar(.decimal($0)) }
            case .subtract: return total(x, -y).map { .scalar(.decimal($0)) }
            case .multiply:
                return product(x, y).map { .scalar(.decimal($0)) }
            case .divide:
                return quotient(x, y).map { .scalar(.decimal($0)) }
            case .power:
                // A whole exponent keeps a decimal (to about 36 digits); a fractional one is a double's work.
                guard let exponent = Int(exactly: b.double), (-4_096...4_096).contains(exponent) else { break }
                return wholePower(x, exponent).map { .scalar(.decimal($0)) }
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

    /// The mean of numbers (`@avg`, `average:`): a double when one of them is a double, or when
    /// none is a decimal (1 and 2 average 1.5); among decimals a decimal, their sum and quotient
    /// each rounded to 38 digits.
    /// Integers and decimals are summed as a decimal, so 64-bit integers do not overflow on the way.
    static func mean(_ items: [EvalValue]) -> Result<EvalValue, SemanticError> {
        let numbers = items.compactMap(number)
        guard numbers.count == items.count else { return .failure(SemanticError("the mean needs numbers")) }
        guard !numbers.isEmpty else { return .success(.null) }
        if numbers.contains(where: \.isDouble) {
            // From the first (so -0.0 and -0.0 average -0.0).
            let total = numbers.dropFirst().reduce(numbers[0].double) { $0 + $1.double }
            guard total.isFinite else { return .failure(SemanticError("the mean of these numbers is not a finite number (\(ValueSemantics.whyNotFinite(numbers.map(\.double))))")) }
            return .success(.scalar(.double(total / Double(numbers.count))))
        }
        var sum = Decimal(0)
        for number in numbers {
            switch total(sum, number.decimal) {
            case .success(let next): sum = next
            case .failure(let error): return .failure(error)
            }
        }
        return quotient(sum, Decimal(numbers.count)).map { mean in
            numbers.contains(where: \.isDecimal) ? .scalar(.decimal(mean)) : .scalar(.double(ValueRules.double(of: mean)))
        }
    }

    /// Why numbers whose sum is not finite have none: one of them is infinite or not a number
    /// (a store may hold such a double), or their sum is past the largest double.
    static func whyNotFinite(_ numbers: [Double]) -> String {
        if let odd = numbers.first(where: { !$0.isFinite }) { return "one of them is \(odd.isNaN ? "not a number" : odd > 0 ? "infinity" : "-infinity")" }
        return "their sum is past the largest double"
    }

    /// The median of numbers (`median:`), as Foundation's `median:` makes it: the middle one
    /// itself, of an odd count; of an even count, when one of the two middle ones is an integer,
    /// an integer: their whole parts' sum halved toward zero (`median:({1, 2})` is 1); else their
    /// mean (`mean`: a double, or an exact decimal between two decimals, where Foundation's is a
    /// double).
    static func median(_ items: [EvalValue]) -> Result<EvalValue, SemanticError> {
        let numbers = items.compactMap(number)
        guard numbers.count == items.count else { return .failure(SemanticError("the median needs numbers")) }
        guard !numbers.isEmpty else { return .success(.null) }
        let sorted = numbers.sorted { compare(.scalar($0.value), .scalar($1.value)) == .orderedAscending }
        let middle = sorted.count / 2
        if sorted.count % 2 == 1 { return .success(.scalar(sorted[middle].value)) }
        let pair = [sorted[middle - 1], sorted[middle]]
        guard pair.contains(where: \.isInteger) else { return mean(pair.map { .scalar($0.value) }) }
        var whole: [Int128] = []
        for number in pair {
            switch number.value {
            case .integer(let value): whole.append(Int128(value))
            default:
                let truncated = number.double.rounded(.towardZero)
                guard truncated.isFinite, let value = Int64(exactly: truncated) else {
                    return .failure(SemanticError("the median's middle numbers are an integer and \(number.double), whose whole part is past 64-bit integers"))
                }
                whole.append(Int128(value))
            }
        }
        return .success(.scalar(.integer(Int64((whole[0] + whole[1]) / 2))))
    }

    /// `x + y` for decimals, to their 38 digits (`DecimalArithmetic`), or why not.
    static func total(_ x: Decimal, _ y: Decimal) -> Result<Decimal, SemanticError> {
        switch DecimalArithmetic.add(x, y) {
        case .success(let sum): return .success(sum)
        case .failure: return .failure(SemanticError("decimal arithmetic overflowed: \(x) + \(y) is larger than a decimal holds"))
        }
    }

    /// `x * y` for decimals, to their 38 digits (`DecimalArithmetic`), or why not.
    static func product(_ x: Decimal, _ y: Decimal) -> Result<Decimal, SemanticError> {
        // Written with their exponents: 1e-100 is 102 characters written out.
        func shown(_ d: Decimal) -> String { (d.sign == .minus ? "-" : "") + "\(d.significand)e\(d.exponent)" }
        switch DecimalArithmetic.multiply(x, y) {
        case .success(let product): return .success(product)
        case .failure(.underflow): return .failure(SemanticError("decimal arithmetic underflowed: the product of \(shown(x)) and \(shown(y)) is smaller than a decimal holds (exponents down to \(leastDecimalExponent))"))
        case .failure: return .failure(SemanticError("decimal arithmetic overflowed: the product of \(shown(x)) and \(shown(y)) is larger than a decimal holds"))
        }
    }

    /// `x / y` for decimals, to their 38 digits (`DecimalArithmetic`), or why not.
    static func quotient(_ x: Decimal, _ y: Decimal) -> Result<Decimal, SemanticError> {
        switch DecimalArithmetic.divide(x, y) {
        case .success(let quotient): return .success(quotient)
        case .failure(.divisionByZero): return .failure(SemanticError("division by zero"))
        case .failure(.overflow): return .failure(SemanticError("decimal arithmetic overflowed: \(x) / \(y) is larger than a decimal holds"))
        case .failure(.underflow): return .failure(SemanticError("decimal arithmetic underflowed: \(x) / \(y) is smaller than a decimal holds (exponents down to \(leastDecimalExponent))"))
        }
    }

    /// `x ** n` for a decimal and a whole `n`: squared and multiplied through `*`, which says when
    /// a product leaves the range a decimal holds (Foundation's `pow` traps below exponent -128).
    /// For a negative `n` the powers are taken of whichever of `x` and `1 / x` is at least 1 (and
    /// the result inverted when it was `x`), so no digits are lost near the least exponent on the
    /// way. Each product is rounded to a decimal's digits: about 36 stay right.
    static func wholePower(_ x: Decimal, _ n: Int) -> Result<Decimal, SemanticError> {
        var base = x
        let invertsResult = n < 0 && Swift.abs(x) >= 1
        if n < 0, !invertsResult {
            switch quotient(1, x) {
            case .success(let inverse): base = inverse
            case .failure(let error): return .failure(error)
            }
        }
        func times(_ a: Decimal, _ b: Decimal) -> Decimal? {
            guard case .success(.scalar(.decimal(let product))) = arithmetic(.multiply, .scalar(.decimal(a)), .scalar(.decimal(b))), product.isFinite, !product.isNaN else { return nil }
            return product
        }
        let outOfRange = SemanticError("the result of \(x) ** \(n) is not a number a decimal holds")
        var result = Decimal(1), remaining = n.magnitude
        while remaining > 0 {
            if remaining & 1 == 1 {
                guard let product = times(result, base) else { return .failure(outOfRange) }
                result = product
            }
            remaining >>= 1
            if remaining > 0 {
                guard let square = times(base, base) else { return .failure(outOfRange) }
                base = square
            }
        }
        return invertsResult ? quotient(1, result) : .success(result)
    }

    /// `modulus:by:`: the remainder of `x / y` truncated, with `x`'s sign (C's `%` and `fmod`).
    /// Integers stay integers, any double makes it a double, decimals (with integers) stay exact:
    /// `x - y * trunc(x / y)`, a quotient rounded to 38 digits across a whole number set right by one `y`.
    static func remainder(_ lhs: EvalValue, _ rhs: EvalValue) -> Result<EvalValue, SemanticError> {
        if lhs.isNull || rhs.isNull { return .success(.null) }
        guard let a = number(lhs), let b = number(rhs) else {
            return .failure(SemanticError("modulus:by: needs numbers, found \(lhs.kindName) and \(rhs.kindName)"))
        }
        switch (a, b) {
        case let (.integer(x), .integer(y)):
            guard y != 0 else { return .failure(SemanticError("modulus by zero")) }
            let (result, overflow) = x.remainderReportingOverflow(dividingBy: y)
            return overflow ? .failure(SemanticError("integer overflow in modulus")) : .success(.scalar(.integer(result)))
        case (.double, _), (_, .double):
            guard b.double != 0 else { return .failure(SemanticError("modulus by zero")) }
            let result = fmod(a.double, b.double)
            return result.isFinite ? .success(.scalar(.double(result))) : .failure(SemanticError("modulus:by: gave a result that is not a finite number"))
        default:
            let x = a.decimal, y = b.decimal
            guard y != 0 else { return .failure(SemanticError("modulus by zero")) }
            // Smaller than the divisor: the dividend itself.
            if Swift.abs(x) < Swift.abs(y) { return .success(.scalar(.decimal(x))) }
            // The whole quotient must be exact for the remainder to be: at most 38 digits.
            let tooWide = SemanticError("modulus:by: of \(x) by \(y) cannot be computed exactly within a decimal's 38 digits")
            guard case .success(var quotient) = quotient(x, y), Swift.abs(quotient) < Decimal(sign: .plus, exponent: 38, significand: 1) else { return .failure(tooWide) }
            // Toward zero (NSDecimalRound's .down is toward negative infinity).
            var whole = Decimal()
            NSDecimalRound(&whole, &quotient, 0, quotient.sign == .minus ? .up : .down)
            // x - y * whole, each operation exact or the remainder is not computed: the product's
            // digits are at most the factors' together, and both terms of the difference must fit
            // 38 digits at the lower of their exponents (Foundation rounds silently otherwise).
            func digits(_ d: Decimal) -> Int { d.isZero ? 0 : d.significand.description.count }
            guard digits(y) + digits(whole) <= ValueLimits.maxDecimalDigits else { return .failure(tooWide) }
            let product = y * whole
            let lowest = min(x.exponent, product.exponent)
            guard x.isZero || x.exponent - lowest + digits(x) <= ValueLimits.maxDecimalDigits,
                  product.isZero || product.exponent - lowest + digits(product) <= ValueLimits.maxDecimalDigits else { return .failure(tooWide) }
            var remainder = x - product
            let step = Swift.abs(y)
            if !remainder.isZero, remainder.sign != x.sign { remainder += x.sign == .minus ? -step : step }
            if Swift.abs(remainder) >= step { remainder -= x.sign == .minus ? -step : step }
            guard !remainder.isNaN, Swift.abs(remainder) < step, remainder.isZero || remainder.sign == x.sign else { return .failure(tooWide) }
            return .success(.scalar(.decimal(remainder)))
        }
    }

    /// A date computed by arithmetic (`seconds` after `date`, counted from its own second: a
    /// date of either store's count is not rounded through the other's), or an error when it
    /// leaves the range stores hold.
    static func dateResult(_ date: Timestamp, plus seconds: Double) -> Result<EvalValue, SemanticError> {
        guard seconds.isFinite, let instant = date.adding(seconds), ValueLimits.holds(instant) else {
            return .failure(SemanticError(ValueLimits.dateProblem(date.secondsSince1970 + seconds)))
        }
        return .success(.scalar(.date(instant)))
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
package struct SemanticError: Error {
    package var message: String
    package init(_ message: String) { self.message = message }
}


/// A set of evaluation values under `ValueSemantics.equal`, the one equality of the language:
/// `DISTINCT`, `UNION`, `INTERSECT`, `MINUS` and the distinct collection operators agree with
/// `==` and `IN` (`{1} INTERSECT {1.0}` is `{1}`, as `1 IN {1.0}` is true).
struct ValueSet {
    /// Values bucketed by a key that equal values share; each bucket is searched with `equal`.
    private var buckets: [BucketKey: [EvalValue]] = [:]
    /// The comparison options equality is taken under (`IN[c]`'s set folds case).
    private let options: ComparisonOptions

    /// Adds a value; returns false when an equal value is already there.
    @discardableResult
    mutating func insert(_ value: EvalValue) -> Bool {
        let key = BucketKey(value, options: options)
        if let bucket = buckets[key], bucket.contains(where: { ValueSemantics.equal($0, value, options: options) }) { return false }
        buckets[key, default: []].append(value)
        return true
    }

    /// Whether an equal value is in the set.
    func contains(_ value: EvalValue) -> Bool {
        buckets[BucketKey(value, options: options)]?.contains { ValueSemantics.equal($0, value, options: options) } ?? false
    }

    /// A set of `values`, equal under `ValueSemantics.equal` with `options`.
    init<S: Sequence>(_ values: S, options: ComparisonOptions = []) where S.Element == EvalValue {
        self.options = options
        for value in values { insert(value) }
    }

    /// A hash key equal values always share: numbers by numeric value (whole numbers as integers,
    /// others as doubles), booleans as 0 and 1, text as the options fold it, collections by their
    /// elements' keys.
    indirect enum BucketKey: Hashable {
        case null, integer(Int64), double(Double), text(String), nonUTF8Text(Data), date(Timestamp), binary(Data), uuid(UUID), uri(String)
        case object(ObjectRef), handle(Handle), unordered(Set<BucketKey>)

        init(_ value: EvalValue, options: ComparisonOptions = []) {
            switch value {
            case .scalar(let scalar):
                switch scalar {
                case .null: self = .null
                case .bool(let flag): self = .integer(flag ? 1 : 0)
                case .integer(let n): self = .integer(n)
                case .double(let d): self = Self.number(d)
                case .decimal(let d):
                    var exact = d, whole = Decimal()
                    NSDecimalRound(&whole, &exact, 0, .plain)
                    if whole == d, let n = Int64(whole.description) { self = .integer(n) } else { self = Self.number(ValueRules.double(of: d)) }
                // Equal texts fold to the same scalars, so to strings Swift hashes alike.
                case .string(let text): self = .text(ValueSemantics.fold(text, options))
                case .date(let date): self = .date(date)
                case .binary(let data): self = .binary(data)
                case .uuid(let uuid): self = .uuid(uuid)
                case .uri(let text): self = .uri(text)
                case .nonUTF8Text(let bytes): self = .nonUTF8Text(bytes)
                }
            case .object(let ref): self = .object(ref)
            case .handle(let handle): self = .handle(handle)
            case .collection(let items, _):
                // As sets whether ordered or not: an ordered collection may equal an unordered
                // one (`equal` compares them as sets), so they must share a bucket.
                self = .unordered(Set(items.map { BucketKey($0, options: options) }))
            }
        }

        private static func number(_ d: Double) -> BucketKey {
            if d.rounded() == d, let n = Int64(exactly: d) { return .integer(n) }
            return .double(d)
        }
    }
}

/// Which of a list of values equal a value under `ValueSemantics.equal`, found through the
/// buckets `ValueSet` keeps rather than by comparing with each: a `FETCH` of `key == $source.x`
/// asked for every object of a mapping filtered the whole entity each time.
struct ValueIndex {
    private var buckets: [ValueSet.BucketKey: [(value: EvalValue, position: Int)]] = [:]

    /// An index of `values` by position; nil values are left out (nothing equals them in a fetch).
    init(_ values: [EvalValue]) {
        for (position, value) in values.enumerated() where !value.isNull {
            buckets[ValueSet.BucketKey(value), default: []].append((value, position))
        }
    }

    /// The positions of the values equal to `value`, in order.
    func positions(equalTo value: EvalValue) -> [Int] {
        buckets[ValueSet.BucketKey(value)]?.filter { ValueSemantics.equal($0.value, value) }.map(\.position) ?? []
    }
}
