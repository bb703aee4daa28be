import MapcModel
/// Which properties (attributes and relationships) of its source objects an entity mapping's
/// expressions read, so that a migration reads only those from the source store: a mapping that
/// never looks at a wide entity's blob does not copy it out of every row, one that follows no
/// to-many relationship runs no query per object for its list, and phase 2 of the usual
/// relationship mappings (`destinationInstances…` of `$source.relationship`) reads that one
/// relationship and nothing else.
///
/// Nil means "every property": a custom policy (its code may read any), a `copy` mapping (it
/// carries every relationship over), or an expression that uses the source object as a whole
/// (`CAST($source, …)`, `FUNCTION($source, …)`, `SELF` in a comparison). For a migration the
/// result is an optimisation only: an object read this way is marked partial, and a key path
/// that asks for a property it lacks reads it from its row (`StoreObjectGraph`), so a mapping
/// this analysis misjudges is slower, never wrong. `mapc check` also says from it which source
/// values no expression reads (`MappingChecker.checkUnreadSourceProperties`): there a key it
/// missed would be a false warning, so it follows `$source` into fetch predicates too.
enum SourceProjection {
    /// The source properties phase 1 reads for a mapping: its attribute expressions', its
    /// filter's and those of the predicate of Xcode's standard fetch.
    static func creation(_ entityMapping: EntityMapping) -> Set<String>? {
        guard entityMapping.policy == nil, entityMapping.type != .copy else { return nil }
        var expressions = entityMapping.attributes.map(\.expression.expression) + [entityMapping.filter?.expression].compactMap { $0 }
        if let sourceExpression = entityMapping.sourceExpression {
            guard let (_, predicate) = MigrationAnalysis.standardFetch(sourceExpression.expression), case .success(let parsed) = ExpressionParser.parse(predicate) else { return nil }
            expressions.append(parsed)
        }
        return propertiesRead(by: expressions)
    }

    /// The source properties phase 2 reads for a mapping: its relationship expressions'.
    static func relationships(_ entityMapping: EntityMapping) -> Set<String>? {
        guard entityMapping.policy == nil, entityMapping.type != .copy else { return nil }
        return propertiesRead(by: entityMapping.relationships.map(\.expression.expression))
    }

    /// The first keys of the key paths the expressions follow from the source object (`$source`,
    /// `SELF`, a bare key); nil when they use the object in any other way than as the root of a
    /// key path or a reference handed to a `$manager` lookup.
    static func propertiesRead(by expressions: [Expr]) -> Set<String>? {
        keyPathsRead(by: expressions).map { Set($0.compactMap(\.first).filter { $0 != wholeObjects }) }
    }

    /// The key paths the expressions follow from the source object, each as its keys (a
    /// collection operator is passed over: the keys after it are its elements'); nil when they
    /// use the object in any other way (see `propertiesRead`).
    static func keyPathsRead(by expressions: [Expr]) -> [[String]]? {
        pathsRead(by: expressions)?.map(\.keys)
    }

    /// A key path an expression follows from the source object.
    struct ReadPath {
        /// Its keys, collection operators passed over.
        var keys: [String]
        /// Whether the expression takes the value of its last key whole (`$source.owner`, handed
        /// to a lookup or a policy's function), rather than following it further
        /// (`$source.owner.name`), through a collection operator (`$source.pets.@count`) or in a
        /// fetch's test: only then does a relationship's value carry its links anywhere.
        var givesValue: Bool
    }

    /// The key paths the expressions follow from the source object; nil when they use the object
    /// in any other way (see `propertiesRead`). Walked without recursion.
    static func pathsRead(by expressions: [Expr]) -> [ReadPath]? {
        var paths: [ReadPath] = []
        var pending = expressions
        while let expression = pending.popLast() {
            switch expression.kind {
            case .keyPath(let root, let components) where isSourceObject(root):
                guard case .key? = components.first else { return nil }
                paths.append(ReadPath(keys: keys(of: components), givesValue: endsInKey(components)))
            case .keyPath(let root, let components) where elementOfSourcePath(root) != nil:
                // A key of one element (`$source.songs[FIRST].title`): the collection's keys, then
                // the element's. Neither the collection's links nor its order are taken.
                guard let (collection, index) = elementOfSourcePath(root) else { break }
                paths.append(ReadPath(keys: collection + keys(of: components), givesValue: false))
                if case .expression(let position) = index { pending.append(position) }
            case .index(_, let index) where elementOfSourcePath(expression) != nil:
                // One element (`$source.songs[FIRST]`), or the count (`[SIZE]`): not all the links, nor their order.
                guard let (collection, _) = elementOfSourcePath(expression) else { break }
                paths.append(ReadPath(keys: collection, givesValue: false))
                if case .expression(let position) = index { pending.append(position) }
            case .method(let receiver, let selector, _, let arguments) where isKeyRead(expression):
                // `FUNCTION($source, "valueForKey:", "name")` reads `name`, as `$source.name` does
                // (it was taken for the object used whole: every property of it and of the
                // objects it leads to counted as read). A key that is not a constant may be any.
                guard case .literal(.string(let text)) = arguments[0].kind, !text.isEmpty else { return nil }
                let named = PathComponent.components(of: text, at: arguments[0].range)
                let tail = selector == MethodSelector.valueForKey.rawValue ? [text] : keys(of: named)
                var head: [String] = []
                if case .keyPath(_, let components) = receiver.kind { head = keys(of: components) }
                // A path of operators alone (`"@count"`) is of the object itself: used whole.
                guard !(head + tail).isEmpty else { return nil }
                paths.append(ReadPath(keys: head + tail, givesValue: selector == MethodSelector.valueForKey.rawValue || endsInKey(named)))
            case .method(let receiver, _, _, let arguments) where receiver.kind == .variable("entityPolicy"):
                // A policy's function is the user's code: what it is given it may read whole.
                for argument in arguments {
                    if isSourceObject(argument) { return nil }
                    if case .keyPath(let root, let components) = argument.kind, isSourceObject(root), case .key? = components.first {
                        paths.append(ReadPath(keys: keys(of: components) + [wholeObjects], givesValue: true))
                    } else if isKeyRead(argument) {
                        // `FUNCTION($source, "valueForKey:", "note")` hands over what `$source.note` does.
                        guard let read = pathsRead(by: [argument]) else { return nil }
                        paths += read.map { ReadPath(keys: $0.keys + [wholeObjects], givesValue: true) }
                    } else {
                        pending.append(argument)
                    }
                }
            case .method(let receiver, let selector, _, let arguments) where receiver.kind == .variable("manager"):
                // The lookups take source objects as references; their properties are not read.
                pending += arguments.filter { !isSourceObject($0) }
                // A fetch's predicate is evaluated with `$source` bound: its `$source` key paths
                // read the source object (its bare keys are the fetched objects').
                if selector == MethodSelector.fetchRequestForSourceEntity.rawValue, let predicate = MigrationAnalysis.fetchPredicate(arguments) {
                    paths += sourceVariablePaths(in: predicate).map { ReadPath(keys: $0, givesValue: false) }
                }
            case .comparison(_, _, _, let left, let right) where isNilTestOfSourcePath(left, right) || isNilTestOfSourcePath(right, left):
                // `$source.owner != nil` reads whether there is one, not its objects.
                for (path, null) in [(left, right), (right, left)] where isNilTestOfSourcePath(path, null) {
                    if case .keyPath(_, let components) = path.kind { paths.append(ReadPath(keys: keys(of: components), givesValue: false)) }
                }
            case .evaluatedObject, .variable:
                if isSourceObject(expression) { return nil }
            default:
                pending += expression.children
            }
        }
        return paths
    }

    /// The last "key" of a path whose objects are handed whole to a policy's function.
    static let wholeObjects = "*"

    /// The keys of the source key path `expression` indexes (`$source.songs[FIRST]`), with the index.
    private static func elementOfSourcePath(_ expression: Expr) -> (keys: [String], index: IndexKind)? {
        guard case .index(let base, let index) = expression.kind, case .keyPath(let root, let components) = base.kind, isSourceObject(root),
              case .key? = components.first else { return nil }
        return (keys(of: components), index)
    }

    /// Whether `path` is a key path from the source object and `other` the literal nil.
    private static func isNilTestOfSourcePath(_ path: Expr, _ other: Expr) -> Bool {
        guard case .literal(.null) = other.kind, case .keyPath(let root, let components) = path.kind, case .key? = components.first else { return false }
        return isSourceObject(root)
    }

    /// Whether a key path ends in a key, not a collection operator.
    private static func endsInKey(_ components: [PathComponent]) -> Bool {
        if case .key? = components.last { return true }
        return false
    }

    /// A key path's keys, collection operators passed over.
    private static func keys(of components: [PathComponent]) -> [String] {
        components.compactMap { component in
            if case .key(let key, _) = component { return key }
            return nil
        }
    }

    /// The key paths from `$source` in an expression evaluated against other objects (a fetch's
    /// predicate): `$source` used otherwise (compared as an object) reads nothing.
    private static func sourceVariablePaths(in expression: Expr) -> [[String]] {
        var paths: [[String]] = []
        var pending = [expression]
        while let next = pending.popLast() {
            if case .keyPath(let root, let components) = next.kind, root.kind == .variable("source") {
                let keys = keys(of: components)
                if !keys.isEmpty { paths.append(keys) }
            } else {
                pending += next.children
            }
        }
        return paths
    }

    /// `valueForKey:` or `valueForKeyPath:` of the source object or a key path from it, with one
    /// argument: read as the key path it names.
    private static func isKeyRead(_ expression: Expr) -> Bool {
        guard case .method(let receiver, let selector, _, let arguments) = expression.kind else { return false }
        return [MethodSelector.valueForKey.rawValue, MethodSelector.valueForKeyPath.rawValue].contains(selector)
            && arguments.count == 1 && (isSourceObject(receiver) || isSourceKeyPath(receiver))
    }

    /// A key path from the source object (`$source.note`).
    private static func isSourceKeyPath(_ expression: Expr) -> Bool {
        guard case .keyPath(let root, let components) = expression.kind, case .key? = components.first else { return false }
        return isSourceObject(root)
    }

    /// `$source`, `SELF` or `$SELF`: the source object, which mappings evaluate against.
    private static func isSourceObject(_ expression: Expr) -> Bool {
        switch expression.kind {
        case .evaluatedObject: return true
        case .variable(let name): return name == "source" || name.uppercased() == "SELF"
        default: return false
        }
    }
}
