import MapcFoundation
/// Parses expression and predicate text into an `Expr`.
///
/// Precedence, loosest first: `OR ||`; `AND &&`; `NOT !`; comparisons; `+ - UNION INTERSECT
/// MINUS`; `* /`; `**`; unary minus; postfix (`.key`, `[index]`); primaries. Apple does not
/// document AND/OR precedence; mapc uses NOT > AND > OR, as SQL does, and the checker warns
/// when the two are mixed without parentheses.
package struct ExpressionParser {
    /// The deepest nesting accepted; deeper input is refused with a clear error, never a crash.
    package static let maxDepth = 128
    /// The longest expression text accepted.
    package static let maxLength = 64 * 1024
    /// The tallest syntax tree accepted: operator chains (`1 + 1 + … + 1`) are parsed by loops
    /// but evaluated and checked by recursion, so each operator counts as a level.
    package static let maxHeight = 1_000

    private var tokens: [Token] = []
    /// The text's scalars, for the word as written where a keyword reads as a key.
    private var scalars: [Unicode.Scalar] = []
    private var position = 0
    private var depth = 0

    /// Parses text into an expression.
    package static func parse(_ text: String) -> Result<Expr, ExpressionError> {
        if text.unicodeScalars.count > maxLength {
            return .failure(ExpressionError("expression is \(text.unicodeScalars.count) characters long; the limit is \(maxLength)", at: SourceRange(0, 1)))
        }
        var lexer = Lexer(text)
        switch lexer.tokenize() {
        case .failure(let error): return .failure(error)
        case .success(let tokens):
            var parser = ExpressionParser()
            parser.tokens = tokens
            parser.scalars = Array(text.unicodeScalars)
            do {
                let expression = try parser.parseOr()
                guard parser.current.kind == .end else {
                    // NSPredicate's `UTI-CONFORMS-TO` and `UTI-EQUALS` (uniform type identifiers,
                    // which only Apple's systems have) read here as the key UTI minus a key.
                    if case .identifier(let word) = parser.current.kind, word.uppercased() == "UTI",
                       let rest = parser.scalars.dropFirst(parser.current.range.end).split(whereSeparator: { $0 == " " || $0 == "\"" || $0 == "'" }).first,
                       ["-CONFORMS-TO", "-EQUALS"].contains(String(String.UnicodeScalarView(rest)).uppercased()) {
                        throw ExpressionError("UTI\(String(String.UnicodeScalarView(rest)).uppercased()) is not supported: uniform type identifiers are known to Apple's systems only", at: parser.current.range,
                                              fix: "compare the stored type text itself (==, IN, BEGINSWITH \"public.\")")
                    }
                    throw ExpressionError("unexpected \(parser.describe(parser.current)) after a complete expression", at: parser.current.range,
                                          fix: "join expressions with AND, OR or an operator")
                }
                if let tooTall = expression.firstNode(deeperThan: maxHeight) {
                    throw ExpressionError("expression is more than \(maxHeight) operations deep (each operator of a chain counts)", at: tooTall.range,
                                          fix: "split it, or use an aggregate such as @sum over a collection")
                }
                return .success(expression)
            } catch let error as ExpressionError {
                return .failure(error)
            } catch {
                return .failure(ExpressionError("\(error)", at: SourceRange(0, 1)))
            }
        }
    }

    // MARK: Token helpers

    private var current: Token { tokens[min(position, tokens.count - 1)] }

    private mutating func advance() -> Token {
        let token = current
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }
    private func isKeyword(_ keyword: Keyword) -> Bool { current.kind == .keyword(keyword) }

    private mutating func expectSymbol(_ symbol: String, _ context: String) throws -> Token {
        guard isSymbol(symbol) else {
            throw ExpressionError("expected '\(symbol)' \(context), found \(describe(current))", at: current.range)
        }
        return advance()
    }

    private func describe(_ token: Token) -> String {
        switch token.kind {
        case .end: return "the end of the expression"
        case .identifier(let name), .escapedIdentifier(let name): return "'\(name)'"
        case .variable(let name): return "'$\(name)'"
        // Numbers as written (`1.5.2` reads 1.5, then `.2`: not "0.2").
        case .integer, .bigInteger, .double: return "'\(sourceText(of: token))'"
        case .string(let text): return "\"\(text.prefix(30))\""
        case .selector(let name): return "'\(name)'"
        case .collectionOperator(let name): return "'@\(name)'"
        case .keyword(let keyword): return "'\(keyword.rawValue)'"
        case .symbol(let symbol): return "'\(symbol)'"
        }
    }

    private mutating func nested<T>(_ body: (inout ExpressionParser) throws -> T) throws -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else {
            // Each parenthesis, call or operator is two levels of the grammar: say it in the user's terms.
            throw ExpressionError("expression is nested too deeply (more than about \(Self.maxDepth / 2) parentheses, calls or operators inside each other)", at: current.range, fix: "simplify it or split it")
        }
        return try body(&self)
    }

    // MARK: Predicates

    private mutating func parseOr() throws -> Expr {
        try nested { parser in
            var left = try parser.parseAnd()
            while parser.isKeyword(.or) || parser.isSymbol("||") {
                _ = parser.advance()
                let right = try parser.parseAnd()
                left = Expr(.or(left, right), left.range.union(right.range))
            }
            return left
        }
    }

    private mutating func parseAnd() throws -> Expr {
        var left = try parseNot()
        while isKeyword(.and) || isSymbol("&&") {
            _ = advance()
            let right = try parseNot()
            left = Expr(.and(left, right), left.range.union(right.range))
        }
        return left
    }

    private mutating func parseNot() throws -> Expr {
        if isKeyword(.not) || isSymbol("!") {
            let start = advance().range
            let operand = try nested { try $0.parseNot() }
            return Expr(.not(operand), start.union(operand.range))
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws -> Expr {
        var modifier: QuantifierModifier?
        var start = current.range
        switch current.kind {
        case .keyword(.any), .keyword(.some): modifier = .anyOf
        case .keyword(.all): modifier = .allOf
        case .keyword(.noneKeyword): modifier = .noneOf
        default: break
        }
        if modifier != nil { start = advance().range }
        let left = try parseAdditive()
        guard let op = comparisonOperator() else {
            if modifier != nil {
                throw ExpressionError("expected a comparison after \(modifier!.rawValue) \(describe(tokens[position - 1]))", at: current.range,
                                      fix: "write, for example, 'ANY tags.name == \"x\"'")
            }
            return left
        }
        var options: ComparisonOptions = []
        if isSymbol("[") {
            let open = advance()
            guard case .identifier(let flags) = current.kind else {
                throw ExpressionError("expected comparison options such as [c], [d] or [cd]", at: current.range)
            }
            let flagsRange = advance().range
            for flag in flags.lowercased() {
                switch flag {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                case "l": options.insert(.localeSensitive)
                default:
                    throw ExpressionError("unknown comparison option '\(flag)'", at: flagsRange, fix: "use c (case), d (diacritics), n (normalized) or l (locale)")
                }
            }
            _ = try expectSymbol("]", "to close the options opened at offset \(open.range.start)")
            // Apple's `normalized`: "This option supersedes NSCaseInsensitivePredicateOption and
            // NSDiacriticInsensitivePredicateOption" (`"ABC" ==[cn] "abc"` is false).
            if options.contains(.normalized) { options.subtract([.caseInsensitive, .diacriticInsensitive]) }
        }
        let right = try parseAdditive()
        return Expr(.comparison(op, modifier: modifier, options: options, left, right), start.union(right.range))
    }

    private mutating func comparisonOperator() -> ComparisonOperator? {
        let op: ComparisonOperator?
        switch current.kind {
        case .symbol("="), .symbol("=="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .keyword(.between): op = .between
        case .keyword(.inKeyword): op = .inCollection
        case .keyword(.beginsWith): op = .beginsWith
        case .keyword(.endsWith): op = .endsWith
        case .keyword(.contains): op = .contains
        case .keyword(.like): op = .like
        case .keyword(.matches): op = .matches
        default: op = nil
        }
        if op != nil { _ = advance() }
        return op
    }

    // MARK: Arithmetic

    private mutating func parseAdditive() throws -> Expr {
        var left = try parseMultiplicative()
        while true {
            let op: BinaryOperator
            switch current.kind {
            case .symbol("+"): op = .add
            case .symbol("-"): op = .subtract
            case .keyword(.union): op = .union
            case .keyword(.intersect): op = .intersect
            case .keyword(.minus): op = .minus
            default: return left
            }
            _ = advance()
            let right = try parseMultiplicative()
            left = Expr(.binary(op, left, right), left.range.union(right.range))
        }
    }

    private mutating func parseMultiplicative() throws -> Expr {
        var left = try parsePower()
        while isSymbol("*") || isSymbol("/") {
            let op: BinaryOperator = advance().kind == .symbol("*") ? .multiply : .divide
            let right = try parsePower()
            left = Expr(.binary(op, left, right), left.range.union(right.range))
        }
        return left
    }

    private mutating func parsePower() throws -> Expr {
        let base = try parseUnary()
        if isSymbol("**") {
            _ = advance()
            let exponent = try nested { try $0.parsePower() }   // right-associative
            return Expr(.binary(.power, base, exponent), base.range.union(exponent.range))
        }
        return base
    }

    private mutating func parseUnary() throws -> Expr {
        try nested { parser in
            if parser.isSymbol("-") {
                let start = parser.advance().range
                // -9223372036854775808 is the least 64-bit integer, though its digits alone are not one.
                if case .bigInteger("9223372036854775808") = parser.current.kind {
                    return Expr(.literal(.integer(.min)), start.union(parser.advance().range))
                }
                let operand = try parser.parseUnary()
                if case .literal(.integer(let value)) = operand.kind, !operand.parenthesized {
                    return Expr(.literal(.integer(-value)), start.union(operand.range))
                }
                if case .literal(.double(let value)) = operand.kind, !operand.parenthesized {
                    return Expr(.literal(.double(-value)), start.union(operand.range))
                }
                return Expr(.negate(operand), start.union(operand.range))
            }
            if parser.isSymbol("+") {
                _ = parser.advance()
                return try parser.parseUnary()
            }
            return try parser.parsePostfix()
        }
    }

    // MARK: Postfix and primaries

    private mutating func parsePostfix() throws -> Expr {
        var expression = try parsePrimary()
        while true {
            if isSymbol(".") {
                var components: [PathComponent] = []
                var root = expression
                if case .keyPath(let existingRoot, let existing) = expression.kind, !expression.parenthesized {
                    root = existingRoot
                    components = existing
                }
                // Every `.name` that follows, into one array: an expression made per component
                // copied the path each time (a 20,000-key path took seconds).
                var end = expression.range
                while isSymbol(".") {
                    let dot = advance()
                    // `5.` and `1.e3`: a number the lexer ended at its point (NSPredicate's format
                    // writes digits after a point), said as such rather than a missing key.
                    if case .literal(let value) = expression.kind, !expression.parenthesized, components.isEmpty, expression.range.end == dot.range.start {
                        switch value {
                        case .integer, .double, .decimal:
                            throw ExpressionError("a number's point must be followed by digits", at: dot.range,
                                                  fix: "write a digit after it (5.0, 1.0e3) or leave the point out (5, 1e3)")
                        default: break
                        }
                    }
                    let component = try pathComponent()
                    components.append(component)
                    end = component.range
                }
                expression = Expr(.keyPath(root: root, components: components), expression.range.union(end))
            } else if isSymbol("[") {
                _ = advance()
                let index: IndexKind
                switch current.kind {
                case .keyword(.first): _ = advance(); index = .first
                case .keyword(.last): _ = advance(); index = .last
                case .keyword(.size): _ = advance(); index = .size
                default: index = .expression(try parseOr())
                }
                let close = try expectSymbol("]", "to close the index")
                expression = Expr(.index(base: expression, index: index), expression.range.union(close.range))
            } else {
                return expression
            }
        }
    }

    /// A token's text as the expression writes it.
    private func sourceText(of token: Token) -> String {
        guard token.range.start >= 0, token.range.end <= scalars.count, token.range.start < token.range.end else { return "" }
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[token.range.start..<token.range.end])
        return text
    }

    /// A keyword read as a key, as written: `sIZE` is the key `sIZE`, not `size` (an entity may have both).
    private func written(_ token: Token, _ keyword: Keyword) -> String {
        let word = sourceText(of: token)
        return word.isEmpty ? keyword.rawValue.lowercased() : word
    }

    private mutating func pathComponent() throws -> PathComponent {
        let token = advance()
        switch token.kind {
        case .identifier(let name), .escapedIdentifier(let name): return .key(name, token.range)
        case .collectionOperator(let name):
            guard let op = CollectionOperator.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                throw ExpressionError("unknown collection operator '@\(name)'", at: token.range,
                                      fix: Suggestions.didYouMean(name, in: CollectionOperator.allCases.map(\.rawValue)).map { "\($0.replacingOccurrences(of: "'", with: "'@", options: [], range: $0.range(of: "'")))" })
            }
            return .collectionOperator(op, token.range)
        case .keyword(let keyword) where Keyword.readAsKeys.contains(keyword):
            // FIRST/LAST/SIZE are reserved only inside brackets; as keys they read as written.
            return .key(written(token, keyword), token.range)
        case .keyword(.selfKeyword):
            // Key-value coding's `nums.@sum.self`: the operator's result is the value already.
            throw ExpressionError("'\(written(token, .selfKeyword))' after a '.' reads no key", at: token.range,
                                  fix: "leave '.\(written(token, .selfKeyword))' out (`nums.@sum` is the sum), or write '#\(written(token, .selfKeyword))' for a key of that name")
        case .keyword(let keyword):
            // The key as written: `#` keys are read as spelt (`#NO` is another key than `#no`).
            let word = written(token, keyword)
            throw ExpressionError("'\(word)' is a reserved word", at: token.range, fix: "write '#\(word)' to use it as a key")
        default:
            throw ExpressionError("expected a key after '.', found \(describe(token))", at: token.range)
        }
    }

    private mutating func parsePrimary() throws -> Expr {
        let token = current
        switch token.kind {
        case .integer(let value): _ = advance(); return Expr(.literal(.integer(value)), token.range)
        case .bigInteger(let text):
            _ = advance()
            switch ValueParser.decimal(text) {
            case .success(let decimal?): return Expr(.literal(.decimal(decimal)), token.range)
            case .failure(let problem): throw ExpressionError(problem.message, at: token.range)
            case .success(nil): throw ExpressionError("'\(text)' is not a number", at: token.range)
            }
        case .double(let value): _ = advance(); return Expr(.literal(.double(value)), token.range)
        case .string(let text): _ = advance(); return Expr(.literal(.string(text)), token.range)
        case .keyword(.trueKeyword), .keyword(.yes): _ = advance(); return Expr(.literal(.bool(true)), token.range)
        case .keyword(.falseKeyword), .keyword(.no): _ = advance(); return Expr(.literal(.bool(false)), token.range)
        case .keyword(.null), .keyword(.nil_): _ = advance(); return Expr(.literal(.null), token.range)
        case .keyword(.truePredicate): _ = advance(); return Expr(.constantPredicate(true), token.range)
        case .keyword(.falsePredicate): _ = advance(); return Expr(.constantPredicate(false), token.range)
        case .keyword(.selfKeyword): _ = advance(); return Expr(.evaluatedObject, token.range)
        case .variable(let name): _ = advance(); return Expr(.variable(name), token.range)
        case .identifier, .escapedIdentifier:
            // A bare key path starts at SELF: `title` is `SELF.title`.
            let component = try pathComponent()
            if isSymbol("("), case .identifier(let name) = token.kind {
                return try parseCall(name: name, nameRange: token.range)
            }
            return Expr(.keyPath(root: Expr(.evaluatedObject, SourceRange(token.range.start, token.range.start)), components: [component]), token.range)
        case .collectionOperator:
            // `@sum.items.price` on SELF.
            let component = try pathComponent()
            return Expr(.keyPath(root: Expr(.evaluatedObject, SourceRange(token.range.start, token.range.start)), components: [component]), token.range)
        case .selector(let name):
            _ = advance()
            return try parseCall(name: name, nameRange: token.range)
        case .symbol("("):
            _ = advance()
            var inner = try parseOr()
            let close = try expectSymbol(")", "to close the parenthesis")
            inner.parenthesized = true
            inner.range = token.range.union(close.range)
            return inner
        case .symbol("{"):
            _ = advance()
            var items: [Expr] = []
            if !isSymbol("}") {
                repeat {
                    items.append(try nested { try $0.parseOr() })
                } while isSymbol(",") && advance().kind == .symbol(",")
            }
            let close = try expectSymbol("}", "to close the aggregate")
            var aggregate = Expr(.aggregate(items), token.range.union(close.range))
            aggregate.literalMembers = LiteralMembers(items)
            return aggregate
        case .keyword(.function): return try parseFunction()
        case .keyword(.ternary):
            let arguments = try parseArguments(after: token, name: "TERNARY")
            guard arguments.count == 3 else { throw arity("TERNARY", expected: "3 arguments (predicate, value if true, value if false)", got: arguments.count, at: token.range) }
            return Expr(.ternary(arguments[0], arguments[1], arguments[2]), token.range.union(tokens[position - 1].range))
        case .keyword(.cast):
            let arguments = try parseArguments(after: token, name: "CAST")
            guard arguments.count == 2, case .literal(.string(let type)) = arguments[1].kind else {
                throw ExpressionError("CAST takes a value and a class name string, such as CAST(x, \"NSString\")", at: token.range)
            }
            return Expr(.cast(arguments[0], type: type), token.range.union(tokens[position - 1].range))
        case .keyword(.fetch):
            let arguments = try parseArguments(after: token, name: "FETCH")
            guard arguments.count == 3 else { throw arity("FETCH", expected: "3 arguments (request, context, includes pending changes)", got: arguments.count, at: token.range) }
            return Expr(.fetch(request: arguments[0], context: arguments[1], includesPending: arguments[2]), token.range.union(tokens[position - 1].range))
        case .keyword(.subquery):
            _ = advance()
            _ = try expectSymbol("(", "after SUBQUERY")
            let collection = try nested { try $0.parseOr() }
            _ = try expectSymbol(",", "after SUBQUERY's collection")
            guard case .variable(let variable) = current.kind else {
                throw ExpressionError("SUBQUERY's second argument must be a variable such as $x", at: current.range)
            }
            _ = advance()
            _ = try expectSymbol(",", "after SUBQUERY's variable")
            let predicate = try nested { try $0.parseOr() }
            let close = try expectSymbol(")", "to close SUBQUERY")
            return Expr(.subquery(collection: collection, variable: variable, predicate: predicate), token.range.union(close.range))
        case .keyword(let keyword) where Keyword.readAsKeys.contains(keyword):
            _ = advance()
            return Expr(.keyPath(root: Expr(.evaluatedObject, SourceRange(token.range.start, token.range.start)), components: [.key(written(token, keyword), token.range)]), token.range)
        case .end:
            throw ExpressionError("expected a value, found the end of the expression", at: token.range)
        default:
            throw ExpressionError("expected a value, found \(describe(token))", at: token.range)
        }
    }

    private mutating func parseArguments(after token: Token, name: String) throws -> [Expr] {
        if current.range == token.range { _ = advance() }
        _ = try expectSymbol("(", "after \(name)")
        var arguments: [Expr] = []
        if !isSymbol(")") {
            repeat {
                arguments.append(try nested { try $0.parseOr() })
            } while isSymbol(",") && advance().kind == .symbol(",")
        }
        _ = try expectSymbol(")", "to close \(name)'s arguments")
        return arguments
    }

    private mutating func parseCall(name: String, nameRange: SourceRange) throws -> Expr {
        let arguments = try parseArguments(after: Token(kind: .end, range: SourceRange(-1, -1)), name: name)
        return Expr(.function(name: name, arguments: arguments), nameRange.union(tokens[position - 1].range))
    }

    private mutating func parseFunction() throws -> Expr {
        let token = current
        let arguments = try parseArguments(after: token, name: "FUNCTION")
        guard arguments.count >= 2 else {
            throw arity("FUNCTION", expected: "a receiver and a selector string, then the selector's arguments", got: arguments.count, at: token.range)
        }
        guard case .literal(.string(let selector)) = arguments[1].kind else {
            throw ExpressionError("FUNCTION's second argument must be a selector string such as \"uppercaseString\"", at: arguments[1].range)
        }
        return Expr(.method(receiver: arguments[0], selector: selector, selectorRange: arguments[1].range, arguments: Array(arguments.dropFirst(2))),
                    token.range.union(tokens[position - 1].range))
    }

    private func arity(_ name: String, expected: String, got: Int, at range: SourceRange) -> ExpressionError {
        ExpressionError("\(name) takes \(expected); found \(got) argument\(got == 1 ? "" : "s")", at: range)
    }
}
