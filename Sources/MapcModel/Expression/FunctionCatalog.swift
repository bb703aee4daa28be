import MapcFoundation
/// The named NSExpression functions mapc implements, in Apple's two spellings: the selector
/// form `sum:({1, 2})`, `add:to:(1, 2)`, `now()`, and the keyword form `SUM(1, 2)`, `MAX(1, 5, 10)`,
/// `ADD(1, 2)` (the selector's first part, any case).
package enum NamedFunction: String, CaseIterable, Sendable {
    case sum = "sum:", count = "count:", min = "min:", max = "max:", average = "average:", median = "median:", mode = "mode:", stddev = "stddev:"
    case add = "add:to:", subtract = "from:subtract:", multiply = "multiply:by:", divide = "divide:by:", modulus = "modulus:by:"
    case sqrt = "sqrt:", log = "log:", ln = "ln:", raise = "raise:toPower:", exp = "exp:", floor = "floor:", ceiling = "ceiling:", abs = "abs:", trunc = "trunc:"
    case uppercase = "uppercase:", lowercase = "lowercase:", length = "length:"
    case now = "now", random = "random", randomUpTo = "randomn:"
    case bitwiseAnd = "bitwiseAnd:with:", bitwiseOr = "bitwiseOr:with:", bitwiseXor = "bitwiseXor:with:", leftShift = "leftshift:by:", rightShift = "rightshift:by:", onesComplement = "onesComplement:"
    /// Apple's hint to its SQL store not to use an index: the value itself.
    case noIndex = "noindex:"

    /// Aggregates accept one collection argument or several values.
    var isAggregate: Bool {
        switch self {
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev: return true
        default: return false
        }
    }

    /// How many arguments the function takes (aggregates: at least one).
    var arity: Int { Self.arities[self] ?? 0 }

    /// Counted once: an evaluator asks per call.
    private static let arities = Dictionary(uniqueKeysWithValues: allCases.map { ($0, $0 == .now || $0 == .random ? 0 : $0.rawValue.filter { $0 == ":" }.count) })

    /// Finds a function by either spelling and argument count.
    package static func lookup(_ name: String, argumentCount: Int) -> NamedFunction? {
        if let exact = byName[name] { return exact }
        // mapc's first name for Apple's `randomn:`, still read.
        if name.lowercased() == "random:" { return .randomUpTo }
        let lowered = name.lowercased()
        if let byCase = allCases.first(where: { $0.rawValue.lowercased() == lowered }) { return byCase }
        let candidates = allCases.filter { $0.rawValue.split(separator: ":").first.map { $0.lowercased() } == lowered }
        return candidates.first { $0.isAggregate || $0.arity == argumentCount } ?? candidates.first
    }

    /// The selector spellings, found by hashing rather than by comparing with every case in turn.
    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The fix for an unknown function name: the closest name in either spelling, or where the list is.
    static func fix(forUnknown name: String) -> String {
        let names = allCases.map(\.rawValue)
        return Suggestions.didYouMean(name, in: names + names.compactMap { $0.split(separator: ":").first.map(String.init) }) ?? "see docs/expressions.md for the list"
    }
}

/// The class names `CAST(value, "Class")` knows: one list for the checker's types and the
/// evaluator's values, and for what both say of any other name.
package enum CastClass {
    static let names = ["NSString", "NSNumber", "NSDecimalNumber", "NSDate"]

    /// The fix for a name CAST does not know: the closest known one, or the list.
    static func fix(forUnknown name: String) -> String {
        Suggestions.didYouMean(name, in: names) ?? "use " + names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }

    /// The class `CAST` converts values of a kind to for an attribute of a type, where it has one
    /// (numbers become dates as seconds since 2001-01-01, as `NSDate` counts them).
    package static func target(from kind: ValueKind, to type: AttributeType) -> String? {
        switch (kind, type) {
        case (_, .string): return "NSString"
        case (.string, .int16), (.string, .int32), (.string, .int64), (.string, .double), (.string, .float): return "NSNumber"
        case (.string, .decimal), (.integer, .decimal), (.double, .decimal), (.bool, .decimal): return "NSDecimalNumber"
        case (.integer, .date), (.double, .date), (.string, .date): return "NSDate"
        case (.date, .int16), (.date, .int32), (.date, .int64), (.date, .double), (.date, .float), (.bool, .double), (.bool, .float): return "NSNumber"
        default: return nil
        }
    }
}

/// The closed table of selectors `FUNCTION(receiver, "selector", …)` may call. Nothing outside
/// it runs: a mapping file cannot reach arbitrary code.
package enum MethodSelector: String, CaseIterable, Sendable {
    // $manager
    case destinationInstancesForEntityMapping = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    case destinationInstancesForSourceRelationship = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"
    case sourceInstancesForEntityMapping = "sourceInstancesForEntityMappingNamed:destinationInstances:"
    case fetchRequestForSourceEntity = "fetchRequestForSourceEntityNamed:predicateString:"
    // any receiver
    case valueForKey = "valueForKey:", valueForKeyPath = "valueForKeyPath:", description = "description"
    // strings
    case uppercaseString, lowercaseString, capitalizedString, length
    case substringToIndex = "substringToIndex:", substringFromIndex = "substringFromIndex:"
    case stringByTrimmingCharactersInSet = "stringByTrimmingCharactersInSet:"
    case stringByReplacingOccurrences = "stringByReplacingOccurrencesOfString:withString:"
    case stringByAppendingString = "stringByAppendingString:"
    case hasPrefix = "hasPrefix:", hasSuffix = "hasSuffix:", containsString = "containsString:"
    case componentsSeparatedByString = "componentsSeparatedByString:"
    case intValue, integerValue, doubleValue, boolValue, stringValue
    // collections
    case count, firstObject, lastObject
    case objectAtIndex = "objectAtIndex:", containsObject = "containsObject:", componentsJoinedByString = "componentsJoinedByString:"
    // dates
    case timeIntervalSince1970, timeIntervalSinceReferenceDate

    /// Whether the selector belongs to the migration manager.
    package var isManagerSelector: Bool {
        switch self {
        case .destinationInstancesForEntityMapping, .destinationInstancesForSourceRelationship, .sourceInstancesForEntityMapping, .fetchRequestForSourceEntity: return true
        default: return false
        }
    }

    /// The number of arguments (one per colon).
    var arity: Int { Self.arities[self] ?? 0 }

    /// The selector of a name, found by hashing rather than by comparing with every case in
    /// turn (as `init(rawValue:)` does): an evaluator asks per call.
    package static func named(_ name: String) -> MethodSelector? { byName[name] }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })
    private static let arities = Dictionary(uniqueKeysWithValues: allCases.map { ($0, $0.rawValue.filter { $0 == ":" }.count) })
}

/// The functions a custom migration policy makes callable as `FUNCTION($entityPolicy, "name:", args…)`.
public typealias PolicyFunction = @Sendable ([EvalValue]) throws -> EvalValue

/// A failure of the store a `$manager` lookup reads, not of the expression that asked (a
/// statement stopped by a cancellation, a full disk): the evaluator lets it through unchanged,
/// so that the run reports it as what it is rather than as the mapping's failure.
package protocol StoreFailure: Error {}

/// What `FUNCTION($manager, …)` calls during a migration. The migration run answers them (and the
/// `MigrationManager` a policy is handed offers the same calls); outside a migration it is absent
/// and such calls are errors.
package protocol MigrationManagerFunctions: AnyObject {
    /// Destination objects that the named entity mapping created from the source objects.
    func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef]
    /// Destination objects for the objects of a source relationship, through the mapping of its destination entity.
    func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances: [ObjectRef]) throws -> [ObjectRef]
    /// Source objects from which the named entity mapping created the destination objects.
    func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ObjectRef]) throws -> [ObjectRef]
}

/// The keys an expression reads of `$entityMapping` and `$propertyMapping` (Core Data's
/// NSEntityMapping and NSPropertyMapping, as key-value coding reads them): the checker's and
/// the evaluator's one list.
package enum MappingKeys {
    /// `$entityMapping.name`, `.sourceEntityName`, `.destinationEntityName`, `.userInfo.<key>`.
    package static let entityMapping = ["name", "sourceEntityName", "destinationEntityName", "userInfo"]
    /// `$propertyMapping.name`, the destination property's.
    package static let propertyMapping = ["name"]
}
