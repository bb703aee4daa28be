import Foundation
import Testing
@testable import MapcModel
@testable import MapcTooling

/// Key paths an Xcode mapping model holds, written as mapc's language reads them: a key that is
/// a reserved word (`all`, `contains`) as `#all`, which a relationship mapping's `sourcekeypath`
/// still gave bare (a `todo:` where the mapping was whole), and key-value coding's `self`, the
/// object itself, as `SELF` (it was made the key `#self` by the first rule).
@Suite("Imported key paths")
struct ImportedKeyPathTests {
    @Test(arguments: [("all", "#all"), ("owner.contains", "owner.#contains"), ("self", "SELF"), ("self.name", "name"), ("items.@count", "items.@count"), ("title", "title")])
    func keyPathsAreWrittenAsTheLanguageReadsThem(path: String, written: String) throws {
        #expect(ExpressionLiteral.keyPath(path) == written)
        // What is written parses.
        if case .failure(let error) = ExpressionParser.parse(written == "SELF" ? written : "$source." + written) { Issue.record("\(written): \(error)") }
    }
}
