import Foundation
import MapcFoundation

/// Named functions (aggregates included), CAST and FETCH. FUNCTION selectors are in Evaluator+Methods.
extension Evaluator {
    // MARK: Named functions

    func function(_ name: String, _ argumentExpressions: [Expr], _ range: SourceRange) throws -> EvalValue {
        let spelling = FunctionSpelling(name: name, argumentCount: argumentExpressions.count)
        let function: NamedFunction
        if let known = knownFunctions[spelling] {
            function = known
        } else {
            guard let found = NamedFunction.lookup(name, argumentCount: argumentExpressions.count) else {
                throw failure("unknown function '\(name)'", range, fix: NamedFunction.fix(forUnknown: name))
            }
            knownFunctions[spelling] = found
            function = found
        }
        let arguments = try argumentExpressions.map(value(of:))
        if function.isAggregate {
            guard !arguments.isEmpty else { throw failure("\(function.rawValue) needs a collection or values", range) }
            let items = arguments.count == 1 ? (arguments[0].elements ?? [arguments[0]]) : arguments
            return try aggregate(function, items.filter { !$0.isNull }, range)
        }
        guard arguments.count == function.arity else {
            throw failure("\(function.rawValue) takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), found \(arguments.count)", range)
        }
        if arguments.contains(where: \.isNull) && function != .now && function != .random { return .null }
        func integer(_ index: Int) throws -> Int64 {
            guard case .scalar(.integer(let n)) = arguments[index] else {
                throw failure("\(function.rawValue) needs whole numbers, found \(arguments[index].kindName)", argumentExpressions[index].range)
            }
            return n
        }
        func double(_ index: Int) throws -> Double {
            guard let number = ValueSemantics.number(arguments[index]) else {
                throw failure("\(function.rawValue) needs numbers, found \(arguments[index].kindName)", argumentExpressions[index].range)
            }
            return number.double
        }
        func string(_ index: Int) throws -> String {
            guard case .scalar(.string(let text)) = arguments[index] else {
                throw failure("\(function.rawValue) needs a string, found \(arguments[index].kindName)", argumentExpressions[index].range)
            }
            return text
        }
        func finite(_ result: Double) throws -> EvalValue {
            guard result.isFinite else { throw failure("\(function.rawValue) gave a result that is not a finite number", range) }
            return .scalar(.double(result))
        }
        switch function {
        case .add: return try binary(.add, arguments[0], arguments[1], range)
        case .subtract: return try binary(.subtract, arguments[0], arguments[1], range)
        case .multiply: return try binary(.multiply, arguments[0], arguments[1], range)
        case .divide: return try binary(.divide, arguments[0], arguments[1], range)
        case .modulus:
            switch ValueSemantics.remainder(arguments[0], arguments[1]) {
            case .success(let value): return value
            case .failure(let error): throw failure(error.message, range)
            }
        case .raise: return try binary(.power, arguments[0], arguments[1], range)
        case .sqrt:
            let x = try double(0)
            guard x >= 0 else { throw failure("sqrt of a negative number", range) }
            return try finite(x.squareRoot())
        case .log:
            let x = try double(0)
            guard x > 0 else { throw failure("log of a number that is not positive", range) }
            return try finite(log10(x))
        case .ln:
            let x = try double(0)
            guard x > 0 else { throw failure("ln of a number that is not positive", range) }
            return try finite(Foundation.log(x))
        case .exp: return try finite(Foundation.exp(try double(0)))
        case .floor, .ceiling, .trunc:
            if case .scalar(.integer) = arguments[0] { return arguments[0] }
            if case .scalar(.decimal(var d)) = arguments[0] {
                // Decimals round exactly, keeping every digit.
                var result = Decimal()
                let down = function == .floor || (function == .trunc && d >= 0)
                NSDecimalRound(&result, &d, 0, down ? .down : .up)
                return .scalar(.decimal(result))
            }
            let x = try double(0)
            return try finite(function == .floor ? x.rounded(.down) : function == .ceiling ? x.rounded(.up) : x.rounded(.towardZero))
        case .abs:
            switch ValueSemantics.number(arguments[0]) {
            case .integer(let n)?:
                guard n != .min else { throw failure("integer overflow in abs", range) }
                return .scalar(.integer(Swift.abs(n)))
            case .double(let d)?: return .scalar(.double(Swift.abs(d)))
            case .decimal(let d)?: return .scalar(.decimal(d < 0 ? -d : d))
            case nil: throw failure("abs: needs a number, found \(arguments[0].kindName)", range)
            }
        case .uppercase: return .scalar(.string(try string(0).uppercased()))
        case .lowercase: return .scalar(.string(ValueSemantics.lowercased(try string(0))))
        case .length:
            if let items = arguments[0].elements { return .scalar(.integer(Int64(items.count))) }
            if case .scalar(.binary(let data)) = arguments[0] { return .scalar(.integer(Int64(data.count))) }
            return .scalar(.integer(Int64(ValueRules.length(of: try string(0)))))
        case .now: return .scalar(.date(context.now))
        case .random: return .scalar(.double(context.random()))
        case .randomUpTo:
            let limit = try integer(0)
            guard limit > 0 else { throw failure("randomn: needs a positive limit", range) }
            return .scalar(.integer(Int64(context.random() * Double(limit)).clamped(to: 0...(limit - 1))))
        case .bitwiseAnd: return .scalar(.integer(try integer(0) & integer(1)))
        case .bitwiseOr: return .scalar(.integer(try integer(0) | integer(1)))
        case .bitwiseXor: return .scalar(.integer(try integer(0) ^ integer(1)))
        case .leftShift, .rightShift:
            let amount = try integer(1)
            guard (0..<64).contains(amount) else { throw failure("shift amounts run from 0 to 63, found \(amount)", range) }
            return .scalar(.integer(function == .leftShift ? try integer(0) << amount : try integer(0) >> amount))
        case .onesComplement: return .scalar(.integer(~(try integer(0))))
        case .noIndex: return arguments[0]
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev:
            return .null
        }
    }

    private func aggregate(_ function: NamedFunction, _ items: [EvalValue], _ range: SourceRange) throws -> EvalValue {
        if function == .count { return .scalar(.integer(Int64(items.count))) }
        if function == .min || function == .max {
            var best: EvalValue?
            for item in items {
                guard let current = best else { best = item; continue }
                guard let order = ValueSemantics.compare(item, current) else { throw failure("\(function.rawValue) cannot order \(item.kindName) and \(current.kindName)", range) }
                if (function == .min && order == .orderedAscending) || (function == .max && order == .orderedDescending) { best = item }
            }
            return best ?? .null
        }
        if function == .mode {
            // As Foundation's `mode:`: the values sorted, runs of equal ones counted, every value
            // whose run is the longest, in order (`mode:({3, 3, 2, 2})` is [2, 3]); when no value
            // repeats, the least alone.
            var runs: [(value: EvalValue, count: Int)] = []
            for item in items.sorted(by: { ValueSemantics.compare($0, $1) == .orderedAscending }) {
                if let last = runs.last, ValueSemantics.equal(last.value, item) { runs[runs.count - 1].count += 1 } else { runs.append((item, 1)) }
            }
            let longest = runs.map(\.count).max() ?? 0
            let modes = longest == 1 ? runs.prefix(1).map(\.value) : runs.filter { $0.count == longest }.map(\.value)
            return .collection(modes, ordered: true)
        }
        for item in items where ValueSemantics.number(item) == nil {
            throw failure("\(function.rawValue) needs numbers, found \(item.kindName)", range)
        }
        if function == .sum {
            return try items.reduce(EvalValue.scalar(.integer(0))) { try binary(.add, $0, $1, range) }
        }
        guard !items.isEmpty else { return .null }
        // The mean and the median as `@avg` makes the mean: exact with decimals (`ValueSemantics`).
        if function == .average || function == .median {
            switch function == .average ? ValueSemantics.mean(items) : ValueSemantics.median(items) {
            case .success(let value): return value
            case .failure(let error): throw failure("\(function.rawValue) \(error.message)", range)
            }
        }
        let numbers = items.compactMap { ValueSemantics.number($0)?.double }
        func deviation(_ numbers: [Double]) -> Double {
            let mean = numbers.reduce(0, +) / Double(numbers.count)
            let variance = numbers.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(numbers.count)
            return variance.squareRoot()
        }
        var result = deviation(numbers)
        // Squares past the largest double ({1e308, -1e308}) where the deviation itself is finite:
        // computed on the numbers scaled by the largest of them (only then, so that every other
        // result keeps its last digit).
        if !result.isFinite, let largest = numbers.map(abs).max(), largest.isFinite, largest > 0 {
            result = largest * deviation(numbers.map { $0 / largest })
        }
        // Sums past the largest double (1e308 + 1e308) give infinity or NaN, which no store holds.
        guard result.isFinite else { throw failure("\(function.rawValue) the standard deviation of these numbers is not a finite number (\(ValueSemantics.whyNotFinite(numbers)))", range) }
        return .scalar(.double(result))
    }

    // MARK: CAST and FETCH

    /// Whether `expression` reads a float attribute as it is stored: a key path ending at one,
    /// through to-one or to-many steps, with no operator. Core Data hands such a value out as a
    /// float `NSNumber`, so its text has a float's seven digits, where a double's has sixteen.
    func readsFloatAttribute(_ expression: Expr) -> Bool {
        guard case .keyPath(let root, let components) = expression.kind, case .key(let key, _)? = components.last,
              !components.contains(where: { if case .collectionOperator = $0 { return true } else { return false } }) else { return false }
        // Read again below: only from an object named (`$source`, `SELF`), never through what a
        // second reading would run again (a policy function, a fetch).
        switch root.kind {
        case .variable, .evaluatedObject: break
        default: return false
        }
        // The object (or objects) the key is read from; read already once, so no error is new.
        let holder = components.count == 1 ? try? value(of: root) : try? value(of: Expr(.keyPath(root: root, components: Array(components.dropLast())), expression.range))
        let object: ObjectRef?
        switch holder {
        case .object(let ref)?: object = ref
        case .collection(let items, _)?: object = items.lazy.compactMap { if case .object(let ref) = $0 { return ref } else { return nil } }.first
        default: object = nil
        }
        return object.map { context.graph.attributeType(of: $0, key: key) == .float } ?? false
    }

    /// `operand` cast to `type`; `readsFloat` says the operand was read from a float attribute,
    /// which Core Data hands out as a float `NSNumber` (its text has a float's digits).
    func cast(_ operand: EvalValue, to type: String, _ range: SourceRange, readsFloat: Bool = false) throws -> EvalValue {
        if operand.isNull { return .null }
        switch type {
        case "NSString":
            switch operand {
            // Text whose bytes are not UTF-8 is text already, kept as it is.
            case .scalar(.string), .scalar(.nonUTF8Text): return operand
            case .scalar(.bool(let flag)): return .scalar(.string(flag ? "1" : "0"))
            case .scalar(.integer(let n)): return .scalar(.string(String(n)))
            case .scalar(.double(let d)): return .scalar(.string(ValueSemantics.numberText(d, float: readsFloat)))
            case .scalar(.decimal(let d)): return .scalar(.string(d.description))
            // Over a store, the digits that read back in its count, as `dump` shows them.
            case .scalar(.date(let date)): return .scalar(.string(ISO8601.format(date, exactIn: context.graph.dateEpoch)))
            case .scalar(.uuid(let uuid)): return .scalar(.string(uuid.uuidString.lowercased()))
            case .scalar(.uri(let text)): return .scalar(.string(text))
            case .scalar(.binary(let data)): return .scalar(.string(data.base64EncodedString()))
            case .object(let ref): return .scalar(.string(ref.id))
            default: throw failure("cannot cast \(operand.kindName) to NSString", range)
            }
        case "NSNumber":
            switch operand {
            case .scalar(.integer), .scalar(.double), .scalar(.decimal): return operand
            case .scalar(.bool(let flag)): return .scalar(.integer(flag ? 1 : 0))
            case .scalar(.date(let date)): return .scalar(.double(date.seconds(since: .reference)))
            case .scalar(.string(let text)):
                // Decimal text only: Swift would also read hexadecimal ("0x1F") and "nan".
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                guard ValueParser.isDecimalText(trimmed) else { throw failure("'\(text.prefix(40))' is not a number", range) }
                if let n = Int64(trimmed) { return .scalar(.integer(n)) }
                guard let d = Double(trimmed), d.isFinite else { throw failure("'\(text.prefix(40))' is beyond a double's range", range) }
                // Written with a point or an exponent it is a double (`"7.0" / 2` is 3.5), unless a
                // double would change the whole number it names (`9007199254740993.0`): that one is
                // read on its digits, as data files read it.
                if !ValueParser.hasFraction(decimalText: trimmed), let n = ValueParser.integerPart(ofDecimalText: trimmed), Int64(exactly: d) != n {
                    return .scalar(.integer(n))
                }
                // Text other than zero that a double would make 0 is refused, as a data file's is.
                if let problem = ValueParser.underflowProblem(trimmed, nearest: d) { throw failure(problem.message, range) }
                return .scalar(.double(d))
            default: throw failure("cannot cast \(operand.kindName) to NSNumber", range)
            }
        case "NSDecimalNumber":
            if case .scalar(.string(let text)) = operand {
                // Decimal text the decimal cannot hold (more than 38 digits) is said for what it is.
                switch ValueParser.decimal(text.trimmingCharacters(in: .whitespaces)) {
                case .success(let decimal?): return .scalar(.decimal(decimal))
                case .failure(let problem): throw failure(problem.message, range)
                case .success(nil): throw failure("'\(text.prefix(40))' is not a decimal number", range)
                }
            }
            guard let number = ValueSemantics.number(operand) else { throw failure("cannot cast \(operand.kindName) to NSDecimalNumber", range) }
            guard !number.decimal.isNaN, number.double.isFinite else { throw failure("\(number.double) is out of the range decimals hold", range) }
            return .scalar(.decimal(number.decimal))
        case "NSDate":
            switch operand {
            case .scalar(.date): return operand
            case .scalar(.string(let text)):
                guard let date = ISO8601.parse(text) else { throw failure(ISO8601.problem(with: text), range) }
                // Over a store, the instant it would hold for the text (a stored date loaded from
                // the same text is equal to it, on both formats, as in Core Data).
                if let epoch = context.graph.literalDateEpoch, let held = Timestamp(seconds: date.seconds(since: epoch), since: epoch) { return .scalar(.date(held)) }
                return .scalar(.date(date))
            default:
                // Apple's rule: a number is seconds since 2001-01-01 (the reference date).
                guard let seconds = ValueSemantics.number(operand)?.double else { throw failure("cannot cast \(operand.kindName) to NSDate", range) }
                // Foundation keeps dates as seconds since 2001: the instant that count names, exactly.
                guard let instant = Timestamp(seconds: seconds, since: .reference), ValueLimits.holds(instant) else {
                    throw failure(ValueLimits.dateProblem(seconds + Double(Timestamp.Epoch.reference.offset)), range)
                }
                return .scalar(.date(instant))
            }
        default:
            throw failure("CAST to '\(type)' is not supported", range,
                          fix: CastClass.fix(forUnknown: type))
        }
    }

    func fetch(_ request: EvalValue, _ range: SourceRange) throws -> EvalValue {
        guard case .handle(.fetchRequest(let entity, let predicateText)) = request else {
            throw failure("FETCH needs a fetch request, such as FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"TRUEPREDICATE\"); found \(request.kindName)", range)
        }
        // A predicate is parsed once; a result that reads no variables is the same for every
        // object, so it is computed once too. Both caches are bounded.
        let key = entity + "\u{0}" + predicateText
        if let cached = fetchResults[key] { return cached }
        let predicate: Expr
        if let parsed = parsedPredicates[predicateText] {
            predicate = parsed
        } else {
            switch ExpressionParser.parse(predicateText) {
            case .success(let parsed): predicate = parsed
            case .failure(let error): throw failure("the fetch request's predicate does not parse: \(error.description)", range)
            }
            parsedPredicates[predicateText] = predicate
        }
        let saved = context.evaluatedObject, savedSemantics = (evaluatesFetchPredicate, evaluatesStorePredicate)
        defer { context.evaluatedObject = saved; (evaluatesFetchPredicate, evaluatesStorePredicate) = savedSemantics }
        // Set before the probes below are evaluated: a value is the one the predicate asked of
        // every object would compare (inside a fetch a to-many's values keep their repeats).
        (evaluatesFetchPredicate, evaluatesStorePredicate) = (true, true)
        // `key == value`, the value not the fetched object's (`name == $source.tagName`): looked up
        // in an index of the entity's values of `key`, made once, as SQL would use one. Joined with
        // others by `AND`, only the objects the index gives can make the whole true (a conjunct
        // false or unknown makes an AND so), so the rest is asked of them alone.
        let conjuncts = Self.conjuncts(of: predicate)
        var candidates: [ObjectRef]?
        for conjunct in conjuncts {
            guard let (key, probe) = Self.equalityLookup(conjunct), let indexed = try fetchIndex(entity: entity, key: key) else { continue }
            let wanted = try value(of: probe)
            // SQL's NULL: nothing equals it.
            candidates = wanted.isNull ? [] : indexed.index.positions(equalTo: wanted).map { indexed.refs[$0] }
            break
        }
        // The equality alone: the index's objects are the result.
        if conjuncts.count == 1, let candidates { return .collection(try checkSize(candidates.map { .object($0) }, range), ordered: true) }
        var kept: [EvalValue] = []
        for ref in try candidates ?? context.graph.objects(of: entity) {
            context.evaluatedObject = .object(ref)
            if try storeTruth(of: predicate) ?? false { kept.append(.object(ref)) }
        }
        // A fetch's results are an array (`executeFetchRequest:` returns an NSArray).
        let result = EvalValue.collection(try checkSize(kept, range), ordered: true)
        if !predicate.readsVariables { fetchResults[key] = result }
        return result
    }
}

extension Evaluator {
    /// The key and the other side of a fetch predicate `key == value` (either way round), where
    /// `key` is one attribute of the fetched object and `value` does not read it; nil otherwise.
    static func equalityLookup(_ predicate: Expr) -> (key: String, probe: Expr)? {
        guard case .comparison(.equal, nil, let options, let left, let right) = predicate.kind, options.isEmpty else { return nil }
        func key(_ side: Expr) -> String? {
            guard case .keyPath(let root, let components) = side.kind, root.kind == .evaluatedObject, components.count == 1,
                  case .key(let name, _) = components[0] else { return nil }
            return name
        }
        func readsFetched(_ side: Expr) -> Bool {
            var pending = [side]
            while let expression = pending.popLast() {
                switch expression.kind {
                case .evaluatedObject: return true
                case .variable(let name) where name.uppercased() == "SELF": return true
                case .subquery, .fetch: return true
                default: pending += expression.children
                }
            }
            return false
        }
        if let name = key(left), !readsFetched(right), right.kind != .literal(.null) { return (name, right) }
        if let name = key(right), !readsFetched(left), left.kind != .literal(.null) { return (name, left) }
        return nil
    }

    /// The parts of a predicate joined by `AND` (the predicate itself when it is no `AND`).
    static func conjuncts(of predicate: Expr) -> [Expr] {
        guard case .and(let left, let right) = predicate.kind else { return [predicate] }
        return conjuncts(of: left) + conjuncts(of: right)
    }

    /// The entity's objects and the index of their values of `key` (`equalityLookup`), made on
    /// first use; nil when a value is not a scalar (a relationship), which the index cannot hold.
    func fetchIndex(entity: String, key: String) throws -> (refs: [ObjectRef], index: ValueIndex)? {
        let name = entity + "\u{0}" + key
        if let known = fetchIndexes[name] { return known }
        let refs = try context.graph.objects(of: entity)
        var values: [EvalValue] = []
        values.reserveCapacity(refs.count)
        var indexable = true
        for ref in refs {
            guard let found = try context.graph.value(of: ref, key: key), case .scalar = found else { indexable = false; break }
            values.append(found)
        }
        let made = indexable ? (refs, ValueIndex(values)) : nil
        fetchIndexes[name] = made
        return made
    }
}

extension Comparable {
    func clamped(to limits: ClosedRange<Self>) -> Self { Swift.min(Swift.max(self, limits.lowerBound), limits.upperBound) }
}
