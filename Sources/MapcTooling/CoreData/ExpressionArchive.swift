import Foundation
import MapcFoundation
import MapcModel

/// Turns an archived `NSExpression` (as Xcode stores a property mapping's value expression) into
/// the text of mapc's expression language, which then parses and checks like any mapping file's.
///
/// Handled: constants (numbers, booleans, strings, nil, dates, arrays), `SELF`, `$variables`, key
/// paths (`$source.title`, written by Xcode as `valueForKeyPath:` on an operand), functions on a
/// receiver (`FUNCTION($entityPolicy, "sel:", …)`, `FUNCTION($manager, …)`), built-in functions
/// (`now()`, `uppercase:(…)`) and aggregates (`{a, b}`). Other kinds (subqueries, conditionals,
/// blocks, set operations) are reported by name: they are not guessed.
enum ExpressionArchive {
    /// The deepest expression tree read.
    static let maxDepth = 64
    /// The most expressions and constants one archive is read as: an archive may refer to one
    /// sub-expression many times (3 levels of 100 arguments, each the next level, are a million
    /// expressions), and a value expression Xcode writes has a few dozen.
    static let maxNodes = 10_000

    /// The expressions and constants read so far from one archive.
    private final class Budget {
        var used = 0
        func spend(_ what: String) throws {
            used += 1
            guard used <= maxNodes else {
                throw MapcError.input("\(what): the expression is more than \(maxNodes) expressions once its shared parts are written out; it is not one Xcode writes")
            }
        }
    }

    /// The expression's text, or a `MapcError.input` naming what cannot be read.
    static func text(of data: Data, what: String) throws -> String {
        let archive = try KeyedArchive(data: data, what: what)
        guard let root = archive.rootObject else { throw MapcError.input("\(what): the archive's root is not an expression") }
        return try text(root, in: archive, depth: 0, budget: Budget())
    }

    /// The classes an expression archive may hold; anything else is refused.
    static let expressionClasses: Set<String> = ["NSExpression", "NSConstantValueExpression", "NSSelfExpression", "NSVariableExpression",
                                                 "NSKeyPathExpression", "NSKeyPathSpecifierExpression", "NSFunctionExpression",
                                                 "NSAggregateExpression", "NSVariableAssignmentExpression",
                                                 // Read only to be said not imported, by their type.
                                                 "NSTernaryExpression", "NSSubqueryExpression", "NSSetExpression",
                                                 "NSAnyKeyExpression", "NSBlockExpression"]

    private static func text(_ object: [String: Any], in archive: KeyedArchive, depth: Int, budget: Budget) throws -> String {
        guard depth < maxDepth else { throw MapcError.input("\(archive.what): the expression is nested more than \(maxDepth) deep") }
        try budget.spend(archive.what)
        guard let className = archive.className(of: object) else {
            // `$class` missing, or naming no class description (itself, a number, past the objects).
            throw MapcError.input("\(archive.what): the archive is damaged: an object where an expression was expected names no class ($class is not a class description); "
                                  + "open the mapping model in Xcode and save it again")
        }
        guard expressionClasses.contains(className) else {
            throw MapcError.input("\(archive.what): the archive holds a \(className) where an expression was expected; only NSExpression's own classes are read")
        }
        let type = object["NSExpressionType"] as? Int ?? -1
        func sub(_ key: String) throws -> String {
            guard let inner = archive.objectField(object, key) else { throw MapcError.input("\(archive.what): a \(className) without its \(key)") }
            return try text(inner, in: archive, depth: depth + 1, budget: budget)
        }
        switch type {
        case 0:
            return try constant(archive.field(object, "NSConstantValue"), in: archive, depth: depth, budget: budget)
        case 1:
            return "SELF"
        case 2:
            guard let name = archive.stringField(object, "NSVariable"), isIdentifier(name) else {
                throw MapcError.input("\(archive.what): a variable expression without a usable name")
            }
            return "$" + name
        case 3, 10:
            // A key path: on its own (10, Xcode's specifier), or applied to an operand (3).
            guard let path = archive.stringField(object, "NSKeyPath"), isKeyPath(path) else {
                throw MapcError.input("\(archive.what): a key path expression without a usable key path")
            }
            if type == 3, archive.objectField(object, "NSOperand") != nil { return try join(sub("NSOperand"), ExpressionLiteral.keyPath(path)) }
            return ExpressionLiteral.keyPath(path)
        case 4:
            guard let selector = archive.stringField(object, "NSSelectorName"), !selector.isEmpty,
                  selector.allSatisfy({ $0.isLetter || $0.isNumber || $0 == ":" || $0 == "_" }) else {
                throw MapcError.input("\(archive.what): a function expression without a usable selector")
            }
            let arguments = try (archive.objectField(object, "NSArguments").map { archive.elements(of: $0) } ?? []).map { item -> String in
                guard let inner = KeyedArchive.dictionary(item) else { throw MapcError.input("\(archive.what): an argument of \(selector) is not an expression") }
                return try text(inner, in: archive, depth: depth + 1, budget: budget)
            }
            let operandObject = archive.objectField(object, "NSOperand")
            let operandType = operandObject?["NSExpressionType"] as? Int
            // Xcode's key paths: `valueForKeyPath:` on an operand, with the path as the argument.
            if selector == "valueForKeyPath:", arguments.count == 1, let operandObject {
                return join(try text(operandObject, in: archive, depth: depth + 1, budget: budget), arguments[0])
            }
            // A built-in function: its operand is the class that implements it
            // (`_NSPredicateUtilities`), which NSConstantValueExpression archives by name, under
            // `NSConstantValueClassName`. A constant value there is a receiver like any other.
            if operandObject == nil || (operandType == 0 && operandObject?["NSConstantValue"] == nil) {
                // `CAST(x, "NSNumber")` is archived as the built-in it calls.
                if selector == "castObject:toType:", arguments.count == 2 { return "CAST(\(arguments[0]), \(arguments[1]))" }
                return "\(selector)(\(arguments.joined(separator: ", ")))"
            }
            let receiver = try sub("NSOperand")
            return "FUNCTION(\(([receiver, quoted(selector)] + arguments).joined(separator: ", ")))"
        case 14:
            let items = archive.field(object, "NSCollection").flatMap(KeyedArchive.dictionary).map { archive.elements(of: $0) } ?? []
            let parts = try items.map { item -> String in
                guard let inner = KeyedArchive.dictionary(item) else { return try constant(item, in: archive, depth: depth + 1, budget: budget) }
                return try text(inner, in: archive, depth: depth + 1, budget: budget)
            }
            return "{" + parts.joined(separator: ", ") + "}"
        default:
            let names = [5: "a set union", 6: "a set intersection", 7: "a set difference", 13: "a SUBQUERY", 15: "an ANYKEY", 19: "a block", 20: "a TERNARY"]
            throw MapcError.input("\(archive.what): \(names[type] ?? "an expression of type \(type)") is not imported; write it in the mapping file by hand")
        }
    }

    /// `operand.path`, with `SELF.path` written `path`.
    private static func join(_ operand: String, _ path: String) -> String {
        operand == "SELF" ? path : operand + "." + path
    }

    private static func constant(_ value: Any?, in archive: KeyedArchive, depth: Int, budget: Budget) throws -> String {
        try budget.spend(archive.what)
        guard let value else { return "nil" }
        if let flag = PropertyList.boolean(value) { return flag ? "YES" : "NO" }
        switch PropertyList.number(value) {
        case .integer(let number)?: return String(number)
        case .double(let number)?:
            guard number.isFinite else { throw MapcError.input("\(archive.what): the constant \(number) is not a finite number") }
            return number.rounded() == number && abs(number) < 1e15 ? String(format: "%.1f", number) : "\(number)"
        case nil: break
        }
        if let text = value as? String { return quoted(text) }
        if let object = KeyedArchive.dictionary(value) {
            let className = archive.className(of: object) ?? "?"
            switch className {
            case "NSMutableString", "NSString":
                return quoted(archive.stringField(object, "NS.string") ?? "")
            case "NSDate":
                guard let seconds = object["NS.time"] as? Double, seconds.isFinite else { throw MapcError.input("\(archive.what): a date constant without its time") }
                return "CAST(\(seconds), \"NSDate\")"
            case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet":
                guard depth < maxDepth else { throw MapcError.input("\(archive.what): the expression is nested more than \(maxDepth) deep") }
                return "{" + (try archive.elements(of: object).map { try constant($0, in: archive, depth: depth + 1, budget: budget) }).joined(separator: ", ") + "}"
            case "NSNull":
                return "nil"
            default:
                throw MapcError.input("\(archive.what): a constant of class \(className) is not imported")
            }
        }
        throw MapcError.input("\(archive.what): a constant of an unknown kind is not imported")
    }

    /// A string literal of mapc's language.
    static func quoted(_ text: String) -> String { ExpressionLiteral.string(text) }

    private static func isIdentifier(_ text: String) -> Bool { ExpressionLiteral.isWord(text) }


    private static func isKeyPath(_ text: String) -> Bool {
        !text.isEmpty && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            part.hasPrefix("@") ? isIdentifier(String(part.dropFirst())) : isIdentifier(String(part))
        }
    }
}
