/// One token of the expression language.
struct Token: Sendable, Equatable {
    /// What kind of token.
    enum Kind: Sendable, Equatable {
        case identifier(String)
        /// A reserved word escaped with `#`, used as a plain key (`#FIRST`).
        case escapedIdentifier(String)
        case variable(String)
        case integer(Int64)
        /// An integer literal too large for Int64, kept as text for a decimal.
        case bigInteger(String)
        case double(Double)
        case string(String)
        /// `name:` or `name:part:` immediately followed by `(`: a named function's selector.
        case selector(String)
        case collectionOperator(String)
        case keyword(Keyword)
        case symbol(String)
        case end
    }

    /// The kind, with its value.
    var kind: Kind
    /// Where it stands.
    var range: SourceRange
}

/// Reserved words; matched case-insensitively.
enum Keyword: String, Sendable, CaseIterable {
    case and = "AND", or = "OR", not = "NOT", inKeyword = "IN"
    case any = "ANY", all = "ALL", some = "SOME", noneKeyword = "NONE"
    case like = "LIKE", matches = "MATCHES", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", between = "BETWEEN"
    case null = "NULL", nil_ = "NIL", selfKeyword = "SELF", trueKeyword = "TRUE", yes = "YES", falseKeyword = "FALSE", no = "NO"
    case first = "FIRST", last = "LAST", size = "SIZE"
    case subquery = "SUBQUERY", fetch = "FETCH", cast = "CAST", function = "FUNCTION", ternary = "TERNARY"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case union = "UNION", intersect = "INTERSECT", minus = "MINUS"

    static let byName: [String: Keyword] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The keywords read as keys after a '.' (reserved only inside brackets: `[SIZE]`); every
    /// other keyword there is an error, and a key of that name is written `#name`.
    static let readAsKeys: Set<Keyword> = [.first, .last, .size]

    /// Whether a key of this name must be written `#name` after a '.': the lexer reads the word,
    /// in any case, as a keyword that is not read as a key.
    static func reservesKey(_ name: String) -> Bool {
        Keyword.byName[name.uppercased()].map { !readAsKeys.contains($0) } ?? false
    }
}
