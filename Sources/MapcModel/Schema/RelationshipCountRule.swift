/// A rule on how many objects a relationship holds: Core Data's non-optional flag, `minCount`
/// and `maxCount`, as Core Data validates them. Written once for both checks that apply it:
/// objects loaded from a data file (`ObjectGraphResolver` counts in memory and asks
/// `isBroken(by:)`) and a store's validation (`StoreValidator` asks SQLite the same question of a
/// count it computes, `condition(count:)`).
///
/// A to-one that is not optional holds an object. A to-many is never nil (it is a set, perhaps
/// empty), so what binds it is its counts: Apple's `NSRelationshipDescription` documents that the
/// framework enforces `minCount` and `maxCount` (of an optional relationship, only when it holds
/// something), and a to-many that is not optional with no `minCount` may be empty (apps rely on
/// it: Olvid ships 27 such relationships, documented as "can be empty", and lightweight migration
/// sets new ones to the empty set).
package enum RelationshipCountRule: Sendable, Equatable {
    /// A relationship that is not optional holds at least one object.
    case required
    /// A to-many relationship that holds any object holds at least this many (empty is the
    /// `required` rule's to report, or allowed for an optional relationship, as in Core Data).
    case atLeast(Int)
    /// A to-many relationship holds at most this many objects.
    case atMost(Int)

    /// The rules of a relationship, in the order they are reported.
    package static func rules(of relationship: Relationship) -> [RelationshipCountRule] {
        guard relationship.isToMany else { return relationship.isOptional ? [] : [.required] }
        var rules: [RelationshipCountRule] = []
        let min = relationship.declaredMinCount
        // Not optional: at least minCount, empty included (a minCount of 1 is "required").
        if !relationship.isOptional, min >= 1 { rules.append(.required) }
        // At least one is what holding any object means: only a larger minCount is a rule.
        if min > 1 { rules.append(.atLeast(min)) }
        // A maxCount of 0 is Core Data's "no limit".
        if let max = relationship.maxCount, max > 0 { rules.append(.atMost(max)) }
        return rules
    }

    /// Whether a relationship may hold no object (an optional one, or a to-many whose counts
    /// allow none): what a new relationship or an unmapped one needs to be left empty.
    package static func allowsEmpty(_ relationship: Relationship) -> Bool {
        !rules(of: relationship).contains { $0.isBroken(by: 0) }
    }

    /// Whether a relationship holding `count` objects breaks the rule.
    package func isBroken(by count: Int) -> Bool {
        switch self {
        case .required: return count == 0
        case .atLeast(let min): return count > 0 && count < min
        case .atMost(let max): return count > max
        }
    }

    /// The same test as SQL, over an SQL expression giving the count.
    package func condition(count: String) -> String {
        switch self {
        case .required: return "(\(count)) = 0"
        // BETWEEN evaluates the count (a correlated subquery) once.
        case .atLeast(let min): return "(\(count)) BETWEEN 1 AND \(min - 1)"
        case .atMost(let max): return "(\(count)) > \(max)"
        }
    }

    /// What breaking it is, as a validation reports it.
    package var summary: String {
        switch self {
        case .required: return Self.emptySummary
        case .atLeast(let min): return "\(Self.fewerSummary) \(min)"
        case .atMost(let max): return "\(Self.moreSummary) \(max)"
        }
    }

    private static let emptySummary = "required relationship empty", fewerSummary = "fewer than minCount", moreSummary = "more than maxCount"

    /// How a validation shows the count that broke the rule: nothing beside an empty
    /// relationship, the number of objects beside a count.
    package func shown(count: String) -> String? { self == .required ? nil : "objects: \(count)" }

    /// The rule a validation's rule text is the summary of, if it is one's.
    package static func rule(summarized summary: String) -> RelationshipCountRule? {
        if summary == emptySummary { return .required }
        for (prefix, make) in [(fewerSummary, RelationshipCountRule.atLeast), (moreSummary, RelationshipCountRule.atMost)] where summary.hasPrefix(prefix + " ") {
            if let bound = Int(summary.dropFirst(prefix.count + 1)) { return make(bound) }
        }
        return nil
    }
}
