import Foundation
import MapcFoundation

/// The types of key paths: keys of objects (attributes, relationships, to-many collections),
/// collection operators (`@count`, `@sum`, …) and the keys of the values they give.
extension ExpressionChecker {
    /// `bare`: the path starts at the evaluated object, so its first key stands alone in the text,
    /// where a misspelt literal (`nill`) reads as a key.
    mutating func keyPath(_ start: ExprType, _ components: ArraySlice<PathComponent>, bare: Bool = false) -> ExprType {
        var current = start
        var index = components.startIndex
        while index < components.endIndex {
            switch components[index] {
            case .key(let name, let range):
                current = key(name, of: current, range, bare: bare && index == components.startIndex)
            case .collectionOperator(let op, let range):
                return collectionOperator(op, on: current, rest: components[(index + 1)...], range)
            }
            index += 1
        }
        return current
    }

    /// The literals a word standing alone may have been meant as.
    static let literalWords = ["nil", "NULL", "TRUE", "FALSE", "YES", "NO", "SELF", "TRUEPREDICATE", "FALSEPREDICATE"]

    mutating func key(_ name: String, of target: ExprType, _ range: SourceRange, bare: Bool = false) -> ExprType {
        switch target {
        case .unknown, .null: return target
        case .object(let entityName):
            guard let schema = scope.schema, !entityName.isEmpty, let entity = schema.entity(named: entityName) else { return .unknown }
            switch schema.property(named: name, in: entity) {
            case .attribute(let attribute)?: return ExprType(attribute.type)
            case .relationship(let relationship)?:
                return relationship.isToMany ? .collection(.object(relationship.destination)) : .object(relationship.destination)
            case nil:
                if let owner = schema.hierarchy(under: entity).first(where: { sub in sub.attributes.contains { $0.name == name } || sub.relationships.contains { $0.name == name } }) {
                    error("'\(name)' is defined on sub-entity \(owner.name), not on \(entityName)", range,
                          fix: "not every \(entityName) has it; check the entity first or map from \(owner.name)")
                    return .unknown
                }
                let names = schema.propertyNames(of: entity)
                // An escaped key (`#nill`) is meant as a key: its range holds the `#` too.
                let literal = bare && range.end - range.start == name.unicodeScalars.count
                // A function's name without its call (`now` on the way to `now()`): the call, not a
                // constant that looks alike (`NO`, a boolean, was offered for a date).
                let call = literal ? NamedFunction.allCases.first { $0.rawValue == name || $0.rawValue == name + ":" } : nil
                let callHint = call.map { $0.rawValue.hasSuffix(":") ? "'\($0.rawValue)' is a function: call it as \($0.rawValue)(…)" : "did you mean '\($0.rawValue)()'?" }
                var suggestion = Suggestions.didYouMean(name, in: names) ?? callHint ?? (literal ? Suggestions.didYouMean(name, in: Self.literalWords) : nil)
                // Objects are named by id in every message; where the scope binds it, say how to read it.
                if name == "id", scope.variables["id"] != nil { suggestion = "the object's id is $id (for example $id == \"n1\")" }
                // `kind: "book"`: YAML took the quotes, leaving a key. The text needs quotes inside YAML's.
                // A did-you-mean comes first: a misspelt key is likelier; a predicate takes no text.
                if source.quotedInFile, !checkingPredicate, bare, range.start == 0, range.end == source.text.unicodeScalars.count {
                    suggestion = suggestion.map { "\($0); or, \(ExpressionSource.quotingHint(name))" } ?? ExpressionSource.quotingHint(name)
                }
                error("unknown key '\(name)' on \(entityName)", range, fix: suggestion ?? "\(entityName) has: \(names.joined(separator: ", "))")
                return .unknown
            }
        case .collection(let element):
            let inner = key(name, of: element, range)
            if case .collection = inner { return inner }
            return .collection(inner)
        case .string where name == "length", .binary where name == "length":
            return .integer
        case .manager where name == "sourceContext" || name == "destinationContext":
            return .context
        case .entityMapping where MappingKeys.entityMapping.contains(name):
            return name == "userInfo" ? .userInfo : .string
        case .propertyMapping where MappingKeys.propertyMapping.contains(name):
            return .string
        case .userInfo:
            return .string
        case .entityMapping, .propertyMapping:
            let keys = target == .entityMapping ? MappingKeys.entityMapping : MappingKeys.propertyMapping
            error("cannot read key '\(name)' of \(article(target))", range,
                  fix: Suggestions.didYouMean(name, in: keys) ?? "\(article(target)) has: \(keys.joined(separator: ", "))")
            return .unknown
        default:
            error("cannot read key '\(name)' of \(article(target))", range)
            return .unknown
        }
    }

    mutating func collectionOperator(_ op: CollectionOperator, on target: ExprType, rest: ArraySlice<PathComponent>, _ range: SourceRange) -> ExprType {
        var element: ExprType = .unknown
        switch target {
        case .collection(let inner): element = inner
        case .unknown, .null: break
        default:
            error("@\(op.rawValue) needs a collection, but this is \(article(target))", range, fix: "apply it to a to-many relationship or an aggregate")
            return .unknown
        }
        if op == .count {
            if let extra = rest.first { error("nothing can follow @count", extra.range) }
            return .integer
        }
        let mapped = rest.isEmpty ? element : keyPath(element, rest)
        switch op {
        case .count: return .integer
        case .sum, .avg:
            let base: ExprType = { if case .collection(let inner) = mapped { return inner } else { return mapped } }()
            if !base.isNumeric && !base.isOpen {
                error("@\(op.rawValue) needs numbers, but the values are \(base)", range)
                return .unknown
            }
            return op == .avg ? (base == .decimal ? .decimal : .double) : (base.isOpen ? .unknown : base)
        case .min, .max:
            if case .collection(let inner) = mapped { return inner }
            return mapped
        case .unionOfObjects, .distinctUnionOfObjects:
            return .collection(mapped)
        default:
            if case .collection(let inner) = mapped { return .collection(inner) }
            return .collection(mapped)
        }
    }
}
