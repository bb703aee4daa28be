/// SQL made of many terms joined by one operator.
package enum SQLTerms {
    /// `terms` joined by `op` (`OR`, `AND`) as a balanced tree of parentheses: SQLite refuses an
    /// expression deeper than 1,000, which a chain of as many terms is (the rules of an entity of
    /// 996 attributes, say), while a balanced one of a million terms is 20 deep.
    package static func joined(_ terms: [String], by op: String) -> String {
        switch terms.count {
        case 0: return op == "AND" ? "1" : "0"
        case 1: return terms[0]
        default:
            let middle = terms.count / 2
            return "(\(joined(Array(terms[..<middle]), by: op)) \(op) \(joined(Array(terms[middle...]), by: op)))"
        }
    }
}
