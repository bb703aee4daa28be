import Foundation
import MapcFoundation

/// The types of `FUNCTION` calls, `$manager` methods and `FETCH`, against the catalogue of what
/// mapc accepts.
extension ExpressionChecker {
    mutating func function(_ name: String, _ arguments: [Expr], _ range: SourceRange) -> ExprType {
        let types = arguments.map { type(of: $0) }
        guard let function = NamedFunction.lookup(name, argumentCount: arguments.count) else {
            error("unknown function '\(name)'", range, fix: NamedFunction.fix(forUnknown: name))
            return .unknown
        }
        if function.isAggregate {
            if arguments.isEmpty { error("\(function.rawValue) needs a collection or values", range); return .unknown }
            var elements = types
            if types.count == 1, case .collection(let inner) = types[0] { elements = [inner] }
            if types.count == 1, !isCollectionOrOpen(types[0]) && !types[0].isNumeric {
                error("\(function.rawValue) needs a collection or numbers, not \(article(types[0]))", arguments[0].range)
            }
            switch function {
            case .count: return .integer
            case .min, .max: return join(elements)
            case .mode: return .collection(join(elements))
            case .sum:
                let element = join(elements)
                if !element.isNumeric && !element.isOpen { error("sum: needs numbers, not \(element)", range) }
                return element.isOpen ? .unknown : element
            default:
                let element = join(elements)
                if !element.isNumeric && !element.isOpen { error("\(function.rawValue) needs numbers, not \(element)", range) }
                // The median of integers is one of them or their halved sum, an integer.
                if function == .median && element == .integer { return .integer }
                // The mean and the median of decimals are exact decimals, as `@avg` is.
                return element == .decimal && function != .stddev ? .decimal : .double
            }
        }
        guard arguments.count == function.arity else {
            error("\(function.rawValue) takes \(function.arity) argument\(function.arity == 1 ? "" : "s"), found \(arguments.count)", range)
            return .unknown
        }
        func needNumbers(_ integersOnly: Bool = false) {
            for (argument, argumentType) in zip(arguments, types) where !argumentType.isOpen {
                if integersOnly ? !(argumentType == .integer || argumentType == .bool) : !argumentType.isNumeric {
                    error("\(function.rawValue) needs \(integersOnly ? "whole numbers" : "numbers"), not \(article(argumentType))", argument.range)
                }
            }
        }
        switch function {
        case .add, .subtract, .multiply, .divide, .raise:
            let op: BinaryOperator = [.add: .add, .subtract: .subtract, .multiply: .multiply, .divide: .divide][function] ?? .power
            return binary(op, types[0], types[1], range)
        case .modulus:
            needNumbers()
            return types.allSatisfy { $0 == .integer } ? .integer : .double
        case .sqrt, .log, .ln, .exp:
            needNumbers()
            return .double
        case .floor, .ceiling, .trunc, .abs:
            needNumbers()
            return types[0].isOpen ? .unknown : types[0]
        case .uppercase, .lowercase:
            if types[0] != .string && !types[0].isOpen { error("\(function.rawValue) needs a string, not \(article(types[0]))", arguments[0].range) }
            return .string
        case .length: return .integer
        case .now: return .date
        case .random: return .double
        case .randomUpTo:
            needNumbers(true)
            return .integer
        case .bitwiseAnd, .bitwiseOr, .bitwiseXor, .leftShift, .rightShift, .onesComplement:
            needNumbers(true)
            return .integer
        case .noIndex: return types[0]
        default: return .unknown
        }
    }

    mutating func method(_ receiverExpression: Expr, _ selector: String, _ selectorRange: SourceRange, _ arguments: [Expr], _ range: SourceRange) -> ExprType {
        let receiver = type(of: receiverExpression)
        let types = arguments.map { type(of: $0) }
        if receiver == .policy {
            if let known = scope.policyFunctions {
                let trimmed = selector.hasSuffix(":") ? String(selector.dropLast()) : selector
                if !known.contains(selector) && !known.contains(trimmed) && !known.contains(trimmed + ":") {
                    error("the entity policy has no function '\(selector)'", selectorRange,
                          fix: Suggestions.didYouMean(selector, in: known) ?? (!scope.hasPolicy ? "this mapping has no policy: name one under 'policy:' whose class registers '\(selector)'"
                            : known.isEmpty ? "this mapping's policy registers no functions" : "registered: \(known.sorted().joined(separator: ", "))"))
                }
            }
            return .unknown
        }
        guard let known = MethodSelector.named(selector) else {
            error("'\(selector)' is not a selector mapc can call", selectorRange,
                  fix: Suggestions.didYouMean(selector, in: MethodSelector.allCases.map(\.rawValue)) ?? "see the selector table in docs/expressions.md")
            return .unknown
        }
        guard arguments.count == known.arity else {
            error("'\(selector)' takes \(known.arity) argument\(known.arity == 1 ? "" : "s") after the selector, found \(arguments.count)", range)
            return .unknown
        }
        if known.isManagerSelector {
            guard receiver == .manager || receiver == .unknown else {
                error("'\(selector)' is a migration manager selector; call it on $manager", receiverExpression.range)
                return .unknown
            }
            guard case .literal(.string(let name)) = arguments[0].kind else {
                if types[0] != .string && !types[0].isOpen { error("the first argument must be a name string", arguments[0].range) }
                return known == .fetchRequestForSourceEntity ? .fetchRequest : .collection(.unknown)
            }
            switch known {
            case .fetchRequestForSourceEntity:
                if let schema = scope.schema, schema.entity(named: name) == nil {
                    error("unknown source entity '\(name)'", arguments[0].range, fix: Suggestions.didYouMean(name, in: schema.entities.map(\.name)))
                }
                if case .literal(.string(let predicateText)) = arguments[1].kind, case .failure(let problem) = ExpressionParser.parse(predicateText) {
                    error("the fetch request's predicate does not parse: \(problem.description)", arguments[1].range)
                }
                return .fetchRequest
            case .destinationInstancesForSourceRelationship:
                return .collection(.unknown)
            default:
                guard let mappings = scope.entityMappings else { return .collection(.unknown) }
                guard let mapping = mappings[name] else {
                    error("no entity mapping named '\(name)'", arguments[0].range,
                          fix: Suggestions.didYouMean(name, in: mappings.keys) ?? "mappings: \(mappings.keys.sorted().joined(separator: ", "))")
                    return .collection(.unknown)
                }
                let expected = known == .destinationInstancesForEntityMapping ? mapping.source : mapping.destination
                if known == .destinationInstancesForEntityMapping, mapping.source != nil, mapping.destination == nil {
                    // A remove mapping makes no objects: nothing to find.
                    warning("mapping '\(name)' has no destination entity (a remove mapping makes no objects), so this lookup is always empty",
                            arguments[0].range, fix: "name the mapping that makes the objects this relationship takes")
                }
                if case .literal(.null) = arguments[1].kind {
                    // Core Data reads a nil list as "every object the mapping made"; a list that
                    // is nil for an object ($source.owner unset) is an empty one, as here.
                    error("the literal nil asks Core Data for every object mapping '\(name)' made, which mapc does not give", arguments[1].range,
                          fix: "pass the \(known == .destinationInstancesForEntityMapping ? "source" : "destination") objects to look up (\(known == .destinationInstancesForEntityMapping ? "$source, or $source.relationship" : "the objects found"))")
                }
                let given: ExprType = { if case .collection(let inner) = types[1] { return inner } else { return types[1] } }()
                // Values, not objects (`$source.pets.name`): the run found no object to look up.
                switch given {
                case .object, .unknown, .null, .collection: break
                case _ where given.isOpen: break
                default:
                    error("'\(selector)' takes \(known == .destinationInstancesForEntityMapping ? "source" : "destination") objects, but this passes \(given) values",
                          arguments[1].range, fix: "pass the objects themselves (a relationship, such as $source.pets), not a property of them")
                }
                // Objects of a parent of the entity read may be of it (a list of Attachments holds
                // ImageAttachments): only another hierarchy's objects are never found.
                if let expected, case .object(let entity) = given, !entity.isEmpty, let schema = scope.schema,
                   let givenEntity = schema.entity(named: entity), !schema.ancestry(of: givenEntity).contains(where: { $0.name == expected }),
                   !(schema.entity(named: expected).map { schema.ancestry(of: $0).contains { $0.name == entity } } ?? false) {
                    error("mapping '\(name)' reads \(expected) objects, but this passes \(entity) objects", arguments[1].range)
                }
                let produced = known == .destinationInstancesForEntityMapping ? mapping.destination : mapping.source
                return .collection(produced.map { .object($0) } ?? .unknown)
            }
        }
        let stringSelectors: Set<MethodSelector> = [.uppercaseString, .lowercaseString, .capitalizedString, .substringToIndex, .substringFromIndex,
                                                    .stringByTrimmingCharactersInSet, .stringByReplacingOccurrences, .stringByAppendingString,
                                                    .hasPrefix, .hasSuffix, .containsString, .componentsSeparatedByString]
        let collectionSelectors: Set<MethodSelector> = [.count, .firstObject, .lastObject, .objectAtIndex, .containsObject, .componentsJoinedByString]
        if stringSelectors.contains(known), receiver != .string, !receiver.isOpen {
            error("'\(selector)' is called on strings, but this is \(article(receiver))", receiverExpression.range)
        }
        if collectionSelectors.contains(known), !isCollectionOrOpen(receiver) {
            error("'\(selector)' is called on collections, but this is \(article(receiver))", receiverExpression.range)
        }
        if [.timeIntervalSince1970, .timeIntervalSinceReferenceDate].contains(known), receiver != .date, !receiver.isOpen {
            error("'\(selector)' is called on dates, but this is \(article(receiver))", receiverExpression.range)
        }
        if known == .length, receiver != .string, receiver != .binary, !receiver.isOpen {
            error("'length' is called on strings and binary data, but this is \(article(receiver))", receiverExpression.range)
        }
        if [.substringToIndex, .substringFromIndex, .objectAtIndex].contains(known), types[0] != .integer, !types[0].isOpen {
            error("'\(selector)' needs a whole number, not \(article(types[0]))", arguments[0].range)
        }
        switch known {
        case .uppercaseString, .lowercaseString, .capitalizedString, .substringToIndex, .substringFromIndex, .stringByTrimmingCharactersInSet,
             .stringByReplacingOccurrences, .stringByAppendingString, .description, .stringValue, .componentsJoinedByString:
            return .string
        case .length, .count, .intValue, .integerValue: return .integer
        case .doubleValue, .timeIntervalSince1970, .timeIntervalSinceReferenceDate: return .double
        case .hasPrefix, .hasSuffix, .containsString, .boolValue, .containsObject: return .bool
        case .componentsSeparatedByString: return .collection(.string)
        case .firstObject, .lastObject, .objectAtIndex:
            if case .collection(let element) = receiver { return element }
            return .unknown
        case .valueForKey, .valueForKeyPath:
            if case .literal(.string(let path)) = arguments[0].kind {
                return keyPath(receiver, PathComponent.components(of: path, at: arguments[0].range)[...])
            }
            return .unknown
        default: return .unknown
        }
    }

    mutating func fetch(_ request: Expr, _ range: SourceRange) -> ExprType {
        let requestType = type(of: request)
        if requestType != .fetchRequest && !requestType.isOpen {
            error("FETCH needs a fetch request from FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", …), not \(article(requestType))", request.range)
        }
        if case .method(_, let selector, _, let arguments) = request.kind, selector == MethodSelector.fetchRequestForSourceEntity.rawValue,
           let first = arguments.first, case .literal(.string(let entity)) = first.kind {
            if let schema = scope.schema, let predicateArgument = arguments.dropFirst().first, case .literal(.string(let text)) = predicateArgument.kind,
               case .success(let predicate) = ExpressionParser.parse(text), schema.entity(named: entity) != nil {
                var innerSource = ExpressionSource(text: text, origin: source.location(of: predicateArgument.range.start + 1))
                innerSource.placement = source.placement?.dropping(first: predicateArgument.range.start + 1)
                var inner = ExpressionChecker(scope: scope, source: innerSource)
                inner.scope.evaluatedObject = .object(entity)
                inner.checkPredicate(predicate)
                diagnostics += inner.diagnostics
            }
            return .collection(.object(entity))
        }
        return .collection(.unknown)
    }
}

extension String {
    package func unicodeScalarsSlice(_ range: SourceRange) -> String {
        let scalars = Array(unicodeScalars)
        let lower = max(0, min(range.start, scalars.count)), upper = max(lower, min(range.end, scalars.count))
        return String(String.UnicodeScalarView(scalars[lower..<upper]))
    }
}

extension ComparisonOptions {
    var letters: String {
        var text = ""
        if contains(.caseInsensitive) { text += "c" }
        if contains(.diacriticInsensitive) { text += "d" }
        if contains(.normalized) { text += "n" }
        if contains(.localeSensitive) { text += "l" }
        return text
    }
}
