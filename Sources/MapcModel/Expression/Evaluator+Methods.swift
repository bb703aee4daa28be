import Foundation
import MapcFoundation

/// `FUNCTION(receiver, "selector", …)`: the string and number methods Core Data's mapping
/// models call, a policy's own functions (`$entityPolicy`), and the migration manager's
/// (`$manager`), which the run answers.
extension Evaluator {
    /// Calls `selector` on `receiver` with `arguments`; an unknown selector is an error naming the closest known one.
    /// `receiverExpression`, when given, is what the receiver was read by (a number read from a
    /// float attribute is made text with a float's digits, as Core Data hands it out).
    func method(_ receiver: EvalValue, _ selector: String, _ selectorRange: SourceRange, _ arguments: [EvalValue], _ range: SourceRange,
                receiverExpression: Expr? = nil) throws -> EvalValue {
        if case .handle(.entityPolicy) = receiver {
            let name = context.policyFunctions[selector] != nil ? selector : (selector.hasSuffix(":") ? String(selector.dropLast()) : selector + ":")
            guard let function = context.policyFunctions[name] ?? context.policyFunctions[selector] else {
                let known = context.policyFunctions.keys.sorted()
                throw failure("the entity policy has no function '\(selector)'", selectorRange,
                              fix: Suggestions.didYouMean(selector, in: known) ?? (known.isEmpty ? "no policy functions are registered for this mapping" : "registered: \(known.joined(separator: ", "))"))
            }
            do { return try function(arguments) } catch let error as ExpressionError { throw error } catch {
                // The error's own words where it has them (`LocalizedError`), as a hook's failure says them.
                let words = (error as? LocalizedError)?.errorDescription ?? "\(error)"
                throw failure("policy function '\(selector)' failed: \(words)", range)
            }
        }
        guard let known = MethodSelector.named(selector) else {
            throw failure("'\(selector)' is not a selector mapc can call", selectorRange,
                          fix: Suggestions.didYouMean(selector, in: MethodSelector.allCases.map(\.rawValue)) ?? "see the selector table in docs/expressions.md")
        }
        guard arguments.count == known.arity else {
            throw failure("'\(selector)' takes \(known.arity) argument\(known.arity == 1 ? "" : "s"), found \(arguments.count)", range)
        }
        if known.isManagerSelector {
            guard case .handle(.manager) = receiver else {
                throw failure("'\(selector)' is a migration manager selector; call it on $manager", selectorRange)
            }
            return try managerCall(known, arguments, range)
        }
        if receiver.isNull { return .null }
        func stringArgument(_ index: Int) throws -> String {
            guard case .scalar(.string(let text)) = arguments[index] else {
                throw failure("'\(selector)' needs a string argument, found \(arguments[index].kindName)", range)
            }
            return text
        }
        func integerArgument(_ index: Int) throws -> Int {
            guard case .scalar(.integer(let n)) = arguments[index] else {
                throw failure("'\(selector)' needs a whole number argument, found \(arguments[index].kindName)", range)
            }
            return Int(clamping: n)
        }
        switch (known, receiver) {
        case (.valueForKey, _):
            return try keyPath(receiver, [.key(try stringArgument(0), range)])
        case (.valueForKeyPath, _):
            return try keyPath(receiver, PathComponent.components(of: try stringArgument(0), at: range)[...])
        case (.description, .scalar(.date(let date))):
            // NSDate's description: "2001-01-01 00:00:00 +0000", whole seconds, in UTC.
            let whole = Timestamp(wholeSeconds: date.wholeSeconds, fraction: 0) ?? date
            let text = ISO8601.format(whole)
            guard text.hasSuffix("Z"), text.count == 20 else { return .scalar(.string(text)) }
            return .scalar(.string(text.dropLast().replacingOccurrences(of: "T", with: " ") + " +0000"))
        case (.description, _), (.stringValue, _):
            return try cast(receiver, to: "NSString", range, readsFloat: receiver.isDouble && receiverExpression.map(readsFloatAttribute) == true)
        case (.uppercaseString, .scalar(.string(let text))): return .scalar(.string(text.uppercased()))
        case (.lowercaseString, .scalar(.string(let text))): return .scalar(.string(ValueSemantics.lowercased(text)))
        case (.capitalizedString, .scalar(.string(let text))): return .scalar(.string(text.capitalized))
        case (.length, .scalar(.string(let text))): return .scalar(.integer(Int64(ValueRules.length(of: text))))
        case (.length, .scalar(.binary(let data))): return .scalar(.integer(Int64(data.count)))
        case (.substringToIndex, .scalar(.string(let text))):
            // Safe on short strings: the first n characters, or all of them.
            return .scalar(.string(ValueRules.prefix(text, length: max(0, try integerArgument(0)))))
        case (.substringFromIndex, .scalar(.string(let text))):
            return .scalar(.string(ValueRules.dropPrefix(text, length: max(0, try integerArgument(0)))))
        case (.stringByTrimmingCharactersInSet, .scalar(.string(let text))):
            let set: CharacterSet
            switch try stringArgument(0) {
            case "whitespace", "whitespaceCharacterSet": set = .whitespaces
            case "whitespaceAndNewline", "whitespaceAndNewlineCharacterSet": set = .whitespacesAndNewlines
            case "newline", "newlineCharacterSet": set = .newlines
            case let characters: set = CharacterSet(charactersIn: characters)
            }
            return .scalar(.string(ValueSemantics.trimming(text, set)))
        case (.stringByReplacingOccurrences, .scalar(.string(let text))):
            let target = try stringArgument(0)
            let replacement = try stringArgument(1)
            guard !target.isEmpty else { return receiver }
            // Bound the result before building it: occurrences times the growth per replacement.
            var occurrences = 0
            var searchRange = text.startIndex..<text.endIndex
            // Literally, by Unicode scalars, as the string tests compare (not by canonical equivalence).
            while let found = text.range(of: target, options: .literal, range: searchRange) {
                occurrences += 1
                searchRange = found.upperBound..<text.endIndex
            }
            let growth = max(0, ValueRules.length(of: replacement) - ValueRules.length(of: target))
            guard ValueRules.length(of: text) + occurrences.multipliedReportingOverflow(by: growth).partialValue <= context.limits.maxStringLength,
                  !occurrences.multipliedReportingOverflow(by: growth).overflow else {
                throw failure("a string grew past \(context.limits.maxStringLength) characters", range)
            }
            return .scalar(.string(text.replacingOccurrences(of: target, with: replacement, options: .literal)))
        case (.stringByAppendingString, .scalar(.string)):
            return try binary(.add, receiver, .scalar(.string(try stringArgument(0))), range)
        case (.hasPrefix, .scalar(.string(let text))): return .scalar(.bool(ValueSemantics.textHasPrefix(text, try stringArgument(0))))
        case (.hasSuffix, .scalar(.string(let text))): return .scalar(.bool(ValueSemantics.textHasSuffix(text, try stringArgument(0))))
        case (.containsString, .scalar(.string(let text))): return .scalar(.bool(ValueSemantics.textContains(text, try stringArgument(0))))
        case (.componentsSeparatedByString, .scalar(.string(let text))):
            let separator = try stringArgument(0)
            guard !separator.isEmpty else { return .collection([receiver], ordered: true) }
            // Literally, as stringByReplacingOccurrencesOfString does.
            var parts: [EvalValue] = [], rest = text.startIndex
            while let found = text.range(of: separator, options: .literal, range: rest..<text.endIndex) {
                parts.append(.scalar(.string(String(text[rest..<found.lowerBound]))))
                rest = found.upperBound
            }
            parts.append(.scalar(.string(String(text[rest...]))))
            return .collection(try checkSize(parts, range), ordered: true)
        case (.intValue, _), (.integerValue, _), (.doubleValue, _), (.boolValue, _):
            return try numberValue(known, of: receiver, range)
        case (.count, .collection(let items, _)): return .scalar(.integer(Int64(items.count)))
        case (.firstObject, .collection(let items, _)): return items.first ?? .null
        case (.lastObject, .collection(let items, _)): return items.last ?? .null
        case (.objectAtIndex, .collection(let items, _)):
            let index = try integerArgument(0)
            guard index >= 0, index < items.count else { throw failure("index \(index) is out of range for a collection of \(items.count)", range) }
            return items[index]
        case (.containsObject, .collection(let items, _)):
            return .scalar(.bool(items.contains { ValueSemantics.equal($0, arguments[0]) }))
        case (.componentsJoinedByString, .collection(let items, _)):
            let separator = try stringArgument(0)
            // Each element read from a float attribute is a float: an aggregate's by its own
            // expression, a key path's through a to-many all alike.
            let floats: (Int) -> Bool
            switch receiverExpression?.kind {
            case .aggregate(let elements)?: floats = { index in index < elements.count && self.readsFloatAttribute(elements[index]) }
            case .keyPath?: let all = items.contains(where: \.isDouble) && receiverExpression.map(readsFloatAttribute) == true; floats = { _ in all }
            default: floats = { _ in false }
            }
            let parts = try items.enumerated().map { index, item -> String in
                guard case .scalar(.string(let text)) = try cast(item, to: "NSString", range, readsFloat: item.isDouble && floats(index)) else { return "" }
                return text
            }
            // Bound the result before building it: a million pieces and a long separator would need gigabytes.
            let limit = context.limits.maxStringLength
            var total = 0
            for (index, part) in parts.enumerated() {
                total += part.utf8.count + (index > 0 ? separator.utf8.count : 0)
                if total > limit * 4 { break }
            }
            guard total <= limit * 4 else { throw failure("a string grew past \(limit) characters", range) }
            let joined = parts.joined(separator: separator)
            guard ValueRules.length(of: joined) <= limit else { throw failure("a string grew past \(limit) characters", range) }
            return .scalar(.string(joined))
        case (.timeIntervalSince1970, .scalar(.date(let date))): return .scalar(.double(date.seconds(since: .unix)))
        case (.timeIntervalSinceReferenceDate, .scalar(.date(let date))): return .scalar(.double(date.seconds(since: .reference)))
        default:
            throw failure("'\(selector)' cannot be called on \(receiver.kindName)", selectorRange)
        }
    }

    /// `intValue`, `integerValue`, `doubleValue` and `boolValue`: of a number, or of text read
    /// whole as one. Integers come from the digits themselves, never through a double: the
    /// fraction is dropped toward zero, as Foundation does, and a value beyond the integer's size
    /// (32 bits for `intValue`, as in Foundation; 64 for `integerValue`) is an error, not clamped.
    private func numberValue(_ selector: MethodSelector, of receiver: EvalValue, _ range: SourceRange) throws -> EvalValue {
        let text: String?
        if case .scalar(.string(let written)) = receiver {
            text = written.trimmingCharacters(in: .whitespaces)
            guard let text, ValueParser.isDecimalText(text) else { throw failure("'\(written.prefix(40))' is not a number", range) }
        } else {
            text = nil
        }
        if selector == .doubleValue || selector == .boolValue {
            if selector == .boolValue, let text { return .scalar(.bool(ValueParser.isNonZero(decimalText: text))) }
            let number = try cast(receiver, to: "NSNumber", range)
            guard let parsed = ValueSemantics.number(number) else { throw failure("'\(selector.rawValue)' cannot be called on \(receiver.kindName)", range) }
            if selector == .boolValue {
                if case .decimal(let d) = parsed { return .scalar(.bool(!d.isZero)) }
                return .scalar(.bool(parsed.double != 0))
            }
            return .scalar(.double(parsed.double))
        }
        let integer: Int64?
        let shown: String
        if let text {
            integer = ValueParser.integerPart(ofDecimalText: text)
            shown = "'\(text.prefix(40))'"
        } else {
            guard let number = ValueSemantics.number(try cast(receiver, to: "NSNumber", range)) else {
                throw failure("'\(selector.rawValue)' cannot be called on \(receiver.kindName)", range)
            }
            switch number {
            case .integer(let n): integer = n
            case .double(let d): integer = d.isFinite ? Int64(exactly: d.rounded(.towardZero)) : nil
            case .decimal(let d): integer = d.isNaN ? nil : ValueParser.integerPart(ofDecimalText: d.description)
            }
            shown = number.value.description
        }
        guard let integer else { throw failure("\(shown) does not fit a 64-bit integer", range) }
        if selector == .intValue, Int32(exactly: integer) == nil {
            throw failure("\(shown) does not fit a 32-bit integer, which intValue gives", range, fix: "call integerValue for a 64-bit integer")
        }
        return .scalar(.integer(integer))
    }

    private func managerCall(_ selector: MethodSelector, _ arguments: [EvalValue], _ range: SourceRange) throws -> EvalValue {
        guard case .scalar(.string(let name)) = arguments[0] else {
            throw failure("'\(selector.rawValue)' needs a name string first, found \(arguments[0].kindName)", range)
        }
        if selector == .fetchRequestForSourceEntity {
            guard case .scalar(.string(let predicate)) = arguments[1] else {
                throw failure("the predicate of a fetch request must be a string, found \(arguments[1].kindName)", range)
            }
            return .handle(.fetchRequest(entity: name, predicate: predicate))
        }
        guard let manager = context.manager else {
            throw failure("'\(selector.rawValue)' needs a running migration; $manager has nothing to look up here", range)
        }
        let objects: [ObjectRef] = try (arguments[1].elements ?? (arguments[1].isNull ? [] : [arguments[1]])).map { item in
            guard case .object(let ref) = item else { throw failure("'\(selector.rawValue)' needs objects, found \(item.kindName)", range) }
            return ref
        }
        let result: [ObjectRef]
        do {
            switch selector {
            case .destinationInstancesForEntityMapping: result = try manager.destinationInstances(forEntityMappingNamed: name, sourceInstances: objects)
            case .destinationInstancesForSourceRelationship: result = try manager.destinationInstances(forSourceRelationshipNamed: name, sourceInstances: objects)
            default: result = try manager.sourceInstances(forEntityMappingNamed: name, destinationInstances: objects)
            }
        } catch let error as ExpressionError {
            throw error
        } catch let error as any StoreFailure {
            throw error
        } catch {
            throw failure("\(error)", range)
        }
        return .collection(result.map(EvalValue.object), ordered: true)
    }
}
