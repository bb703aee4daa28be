import MapcModel

/// Consecutive inferred steps taken as one. Core Data's lightweight migration infers from the
/// store's model straight to the current one; a progressive run through every version rewrites
/// the whole store once per version (29 versions of one added attribute each: 29 copies of every
/// object). So a run of inferred steps becomes one step when the inference from its first version
/// to its last carries every value exactly as the steps one after another would: the same objects
/// from the same first-version objects, every property traced to the same first-version property
/// through the same conversions, or to the same constant. Anything else (a property dropped and
/// added again, a default that changed between its versions, an order dropped and asked for
/// again) keeps the steps apart, so the values never differ. What the one step does not do is
/// validate the versions between: the store is validated against the last one, as Core Data
/// validates against its destination model.
enum InferredChain {
    /// A value of a later version traced back to the first version of the chain.
    indirect enum Trace: Equatable {
        /// The first version's property of that name (of the entity the objects came from).
        case stored(String)
        /// A constant every object has: a default, or nil (an empty relationship).
        case constant(Value?)
        /// Of another type: widened or converted, from one type to another.
        case converted(Trace, TypeChange)
        /// Nil becoming the value.
        case filled(Trace, Value)
        /// A to-many's order dropped.
        case unordered(Trace)

        /// The same trace: constants identical, text by Unicode scalars (Swift's `==` takes "é"
        /// and "e" with a combining accent for one; a store keeps what it is given).
        static func == (lhs: Trace, rhs: Trace) -> Bool {
            switch (lhs, rhs) {
            case let (.stored(a), .stored(b)): return a == b
            case let (.constant(a), .constant(b)): return identical(a, b)
            case let (.converted(a, x), .converted(b, y)): return x == y && a == b
            case let (.filled(a, x), .filled(b, y)): return identical(x, y) && a == b
            case let (.unordered(a), .unordered(b)): return a == b
            default: return false
            }
        }

        private static func identical(_ a: Value?, _ b: Value?) -> Bool {
            switch (a, b) {
            case (nil, nil): return true
            case let (.string(x)?, .string(y)?): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
            case let (x?, y?): return x == y
            default: return false
            }
        }
    }

    /// The objects of a version traced back to the first: for each entity with objects, the
    /// first-version entity they came from and where each of its properties' values came from.
    struct State: Equatable {
        var origin: [String: String] = [:]
        var traces: [String: [String: Trace]] = [:]

        /// The first version itself: every concrete entity's objects are its own (but those of
        /// `empty`, entities a store at that version is known to hold no objects of).
        init(first schema: Schema, empty: Set<String> = []) {
            for entity in schema.entities where !entity.isAbstract && !empty.contains(entity.name) {
                origin[entity.name] = entity.name
                var properties: [String: Trace] = [:]
                for attribute in schema.allAttributes(of: entity) where !attribute.isTransient { properties[attribute.name] = .stored(attribute.name) }
                for relationship in schema.allRelationships(of: entity) where !relationship.isTransient { properties[relationship.name] = .stored(relationship.name) }
                traces[entity.name] = properties
            }
        }

        private init() {}

        /// The concrete entities of `schema` (the version this state is at) that no object can
        /// be of: none came to them from the first version.
        func entitiesWithoutObjects(in schema: Schema) -> Set<String> {
            Set(schema.entities.filter { !$0.isAbstract && origin[$0.name] == nil }.map(\.name))
        }

        /// Whether no object of this state's entity has a nil for an attribute (an `EntityAttribute`
        /// of the version the state is at), by where its values came from: asked of the store
        /// (`attribute`, `entity` of the first version) for a value carried from it, known for a
        /// constant or a nil filled. False when it cannot be told.
        func holdsNoNil(_ key: EntityAttribute, asking holdsNil: (_ attribute: String, _ entity: String) throws -> Bool) -> Bool {
            guard let first = origin[key.entity], let trace = traces[key.entity]?[key.attribute] else { return false }
            func noNil(_ trace: Trace) -> Bool {
                switch trace {
                case .stored(let name): return ((try? holdsNil(name, first)) ?? true) == false
                case .constant(let value): return value != nil
                case .filled: return true
                case .converted(let inner, _): return noNil(inner)
                case .unordered: return false
                }
            }
            return noNil(trace)
        }

        /// Where an attribute's values (an `EntityAttribute` of the version the state is at) come
        /// from in the first version, when they are that attribute's stored values, converted or
        /// not: what a store can be asked about them. Nil for a constant, a filled nil or no trace.
        func storedSource(of key: EntityAttribute) -> EntityAttribute? {
            guard let first = origin[key.entity], var trace = traces[key.entity]?[key.attribute] else { return nil }
            while case .converted(let inner, _) = trace { trace = inner }
            guard case .stored(let name) = trace else { return nil }
            return EntityAttribute(entity: first, attribute: name)
        }

        /// Whether an object of this state's entity may hold a value a later step drops (`place`,
        /// of the version the state is at), by where its values came from: asked of the store (of
        /// the first version, through `holds`) for a value carried from it, known for a constant.
        /// True when it cannot be told (a link to some objects only, a value with no trace).
        func mayHold(_ place: EntityProperty, asking holds: (_ property: String?, _ entity: String) throws -> Bool) -> Bool {
            guard let first = origin[place.entity] else { return false }
            guard let property = place.property else { return ((try? holds(nil, first)) ?? true) }
            guard place.linkedTo == nil, let trace = traces[place.entity]?[property] else { return true }
            func held(_ trace: Trace) -> Bool {
                switch trace {
                case .stored(let name): return (try? holds(name, first)) ?? true
                case .constant(nil): return false
                case .constant, .filled: return (try? holds(nil, first)) ?? true
                case .converted(let inner, _), .unordered(let inner): return held(inner)
                }
            }
            return held(trace)
        }

        /// Whether objects of this state's entity `entity` may have links of `relationship` (of
        /// `schema`, the version the state is at): a link is stored once, so it may come from this
        /// side's trace or from its inverse's, on the objects it leads to. Only a side traced to a
        /// first-version relationship is asked of the store (`holds`): a side new since was filled
        /// from its inverse's links when it came (which the trace does not follow), and a side
        /// with no trace (a mapping file's link) may hold anything.
        func mayHoldLinks(of relationship: Relationship, of entity: String, in schema: Schema, asking holds: (_ property: String?, _ entity: String) throws -> Bool) -> Bool {
            func linked(_ trace: Trace?, of entity: String) -> Bool {
                guard let first = origin[entity] else { return false }
                switch trace {
                case .stored(let name)?: return (try? holds(name, first)) ?? true
                case .unordered(let inner)?: return linked(inner, of: entity)
                default: return true
                }
            }
            if linked(traces[entity]?[relationship.name], of: entity) { return true }
            guard let inverse = relationship.inverse, let target = schema.entity(named: relationship.destination) else { return false }
            return schema.hierarchy(under: target).contains { holder in !holder.isAbstract && linked(traces[holder.name]?[inverse], of: holder.name) }
        }

        /// The state after a step with these origins. A value carried from one with no trace (a
        /// mapping step's computed value, which an inference never leaves) has none either: it may
        /// hold anything, and the rest is still traced.
        func after(_ step: InferredOrigins) -> State? {
            var next = State()
            for (entity, source) in step.entities {
                // A source entity with no objects (new in an earlier step) gives none.
                guard let first = origin[source], let before = traces[source] else { continue }
                next.origin[entity] = first
                var properties: [String: Trace] = [:]
                for (name, propertyOrigin) in step.properties[entity] ?? [:] {
                    switch propertyOrigin {
                    case .new(let value):
                        properties[name] = .constant(value)
                    case .carried(let from, let typeChange, let nilBecomes, let dropsOrder):
                        guard var trace = before[from] else { continue }
                        if let typeChange { trace = Self.converted(trace, typeChange) }
                        if let nilBecomes { trace = Self.filled(trace, nilBecomes) }
                        if dropsOrder, !trace.isUnordered { trace = .unordered(trace) }
                        properties[name] = trace
                    }
                }
                next.traces[entity] = properties
            }
            return next
        }

        /// Whether one inference into `last` could leave this state, judged without inferring:
        /// it gives a property new since the first version the last version's default, and
        /// converts a value at most once. (Only a necessary condition: the inference decides.)
        func couldBeOneStep(into last: Schema) -> Bool {
            for (entityName, properties) in traces {
                guard let entity = last.entity(named: entityName) else { return false }
                let defaults = Dictionary(last.allAttributes(of: entity).map { ($0.name, $0.defaultValue) }, uniquingKeysWith: { first, _ in first })
                for (name, trace) in properties {
                    switch trace {
                    case .constant(let value): if value != (defaults[name] ?? nil) { return false }
                    case .converted(let inner, _), .filled(.converted(let inner, _), _): if inner.isConverted { return false }
                    default: continue
                    }
                }
            }
            return true
        }

        /// `trace` changed to another type. A constant is converted at once; two widenings in a row are one (int16 -> int32 ->
        /// int64 is int16 -> int64, no value changed), and a widening undone is none; a conversion
        /// stays what it is (int64 -> decimal -> float rounds once more than int64 -> float).
        private static func converted(_ trace: Trace, _ change: TypeChange) -> Trace {
            // A constant converted is the value it becomes (an int32 default 0 made a float is the
            // float 0, as one inference gives a float default 0); nil stays nil.
            if case .constant(let value?) = trace, case .success(let made) = ValueRules.coerce(value, to: change.to) { return .constant(made) }
            if case .constant(nil) = trace { return trace }
            guard ValueRules.isLossless(from: change.from, to: change.to) else { return .converted(trace, change) }
            if case .converted(let inner, let earlier) = trace, ValueRules.isLossless(from: earlier.from, to: earlier.to),
               ValueRules.isLossless(from: earlier.from, to: change.to) {
                return earlier.from == change.to ? inner : .converted(inner, TypeChange(from: earlier.from, to: change.to))
            }
            return .converted(trace, change)
        }

        /// Nil becoming `value` in `trace`: a constant nil is the value, a constant or a value
        /// filled before cannot be nil.
        private static func filled(_ trace: Trace, _ value: Value) -> Trace {
            switch trace {
            case .constant(nil): return .constant(value)
            case .constant, .filled: return trace
            default: return .filled(trace, value)
            }
        }
    }

    /// The steps with each run of consecutive inferred steps taken as one wherever that changes no
    /// value (longest first); mapping-file steps and lone inferred steps are kept as they are.
    /// Where a run stays more than one step and one inference across it gives other values, its
    /// first step says so (`MigrationStep.chainNotes`): Core Data's lightweight migration infers
    /// straight from the store's model to the current one.
    static func combined(_ steps: [MigrationStep], order: VersionOrder?) -> [MigrationStep] {
        eachRunOfInferredSteps(steps) { run in
            var combined = combinedRun(run, order: order)
            if combined.count > 1, let note = directDifferences(run) { combined[0].chainNotes.append(note) }
            return combined
        }
    }

    /// The steps with each run of consecutive inferred steps replaced by what `made` makes of it;
    /// the other steps as they are.
    private static func eachRunOfInferredSteps(_ steps: [MigrationStep], _ made: ([MigrationStep]) -> [MigrationStep]) -> [MigrationStep] {
        eachRun(of: steps, where: \.isInferred, made)
    }

    /// The steps with each run of consecutive steps that `belongs` holds for replaced by what
    /// `made` makes of it; the other steps as they are.
    private static func eachRun(of steps: [MigrationStep], where belongs: (MigrationStep) -> Bool, _ made: ([MigrationStep]) -> [MigrationStep]) -> [MigrationStep] {
        var result: [MigrationStep] = []
        var index = steps.startIndex
        while index < steps.endIndex {
            guard belongs(steps[index]) else {
                result.append(steps[index])
                index += 1
                continue
            }
            var runEnd = index
            while runEnd + 1 < steps.endIndex, belongs(steps[runEnd + 1]) { runEnd += 1 }
            result += made(Array(steps[index...runEnd]))
            index = runEnd + 1
        }
        return result
    }

    /// What one inference from the first step's source to the last step's destination gives
    /// unlike the steps one after another, said property by property; nil when it gives the same
    /// values, cannot be made, or either cannot be traced.
    static func directDifferences(_ steps: [MigrationStep]) -> String? {
        guard let first = steps.first, let last = steps.last, steps.count > 1 else { return nil }
        var stepwise: State? = State(first: first.source)
        for step in steps { stepwise = step.inferredOrigins.flatMap { stepwise?.after($0) } }
        let direct = MappingInference.infer(from: first.source, to: last.destination, through: steps.dropFirst().map(\.source))
        guard let stepwise, direct.mapping != nil, let once = State(first: first.source).after(direct.origins), once != stepwise else { return nil }
        func said(_ trace: Trace?) -> String {
            switch trace {
            case nil: return "nothing"
            case .stored(let name)?: return "the \(first.source.version) value of \(name)"
            case .constant(nil)?: return "nil"
            case .constant(let value?)?: return "\(value)"
            case .converted(let inner, let change)?: return "\(said(inner)) as \(change.to.rawValue)"
            case .filled(let inner, let value)?: return "\(said(inner)), nil becoming \(value)"
            case .unordered(let inner)?: return "\(said(inner)) without its order"
            }
        }
        let schema = last.destination
        func linksAgree(_ entity: String, _ property: String) -> Bool {
            guard let owner = schema.entity(named: entity), case .relationship(let relationship)? = schema.property(named: property, in: owner),
                  let inverse = relationship.inverse, let target = schema.entity(named: relationship.destination) else { return false }
            let holders = schema.hierarchy(under: target).filter { !$0.isAbstract }.map(\.name)
            return !holders.isEmpty && holders.allSatisfy { holder in
                guard let a = stepwise.traces[holder]?[inverse], let b = once.traces[holder]?[inverse] else { return stepwise.traces[holder] == nil && once.traces[holder] == nil }
                return a == b && a != .constant(nil)
            }
        }
        var differences: [String] = []
        for entity in Set(stepwise.traces.keys).union(once.traces.keys).sorted() {
            guard let mine = stepwise.traces[entity], let theirs = once.traces[entity] else {
                differences.append("\(entity) objects \(stepwise.traces[entity] == nil ? "kept" : "dropped")")
                continue
            }
            for property in Set(mine.keys).union(theirs.keys).sorted() where mine[property] != theirs[property] {
                // A link is stored once: a relationship whose inverse both give alike has the same links.
                if linksAgree(entity, property) { continue }
                differences.append("\(entity).\(property) \(said(theirs[property])) where the steps give \(said(mine[property]))")
            }
        }
        guard !differences.isEmpty else { return nil }
        let shown = differences.prefix(6).joined(separator: "; ") + (differences.count > 6 ? "; and \(differences.count - 6) more" : "")
        return "Core Data's lightweight migration, which infers straight from \(first.source.version) to \(last.destination.version), would give \(shown). "
            + "mapc migrates through each version (\(steps.dropFirst().map(\.source.version).joined(separator: ", "))), as an app that opened each would: `--infer-directly` migrates as Core Data does"
    }

    /// The steps with each run of consecutive inferred steps made one inference from its first
    /// version to its last, as Core Data's lightweight migration infers straight from the store's
    /// model to the current one (a default added and removed between is not filled; a property
    /// removed and added again keeps its values). A run that one inference cannot make is
    /// combined as `combined` does, its first step saying why.
    static func direct(_ steps: [MigrationStep], order: VersionOrder?) -> [MigrationStep] {
        eachRunOfInferredSteps(steps) { run in
            guard let first = run.first, let last = run.last, run.count > 1 else { return run }
            let intermediates = run.dropFirst().map(\.source)
            let once = MappingInference.infer(from: first.source, to: last.destination, through: intermediates)
            guard let mapping = once.mapping else {
                var apart = combinedRun(run, order: order)
                apart[0].chainNotes.append("one inference from \(first.source.version) to \(last.destination.version) cannot be made (\(once.problems.map(\.description).joined(separator: "; "))): the store is migrated through the versions between, as without --infer-directly (steps taken together where that changes no value)")
                return apart
            }
            var step = MigrationStep(source: first.source, destination: last.destination, inferred: once, mapping: mapping, order: order)
            step.passesThrough = intermediates.map(\.version)
            return [step]
        }
    }

    /// One run of consecutive inferred steps, combined where that changes no value.
    private static func combinedRun(_ steps: [MigrationStep], order: VersionOrder?) -> [MigrationStep] {
        eachRun(of: steps, where: \.isCombinable) { run in
            var result: [MigrationStep] = []
            var index = run.startIndex
            while index < run.endIndex {
                if let (step, last) = longestCombination(run, from: index, upTo: run.endIndex - 1, order: order) {
                    result.append(step)
                    index = last + 1
                } else {
                    result.append(run[index])
                    index += 1
                }
            }
            return result
        }
    }

    /// The one step for `steps[first...last]` of the furthest `last` (up to `end`) whose one
    /// inference carries every value as the steps do; nil when none past `first` does. Two steps
    /// are tried first (when they cannot be one, the steps from `first` stay apart: one inference
    /// per step is all a history that never combines costs), then the whole run (the usual case:
    /// versions that only add and rename), then a binary search between, each candidate checked.
    private static func longestCombination(_ steps: [MigrationStep], from first: Int, upTo end: Int, order: VersionOrder?) -> (MigrationStep, Int)? {
        guard first < end else { return nil }
        // The chain's state after each step, as far as it can be traced: two steps first, the rest
        // only when those two can be one (each state is the whole model's).
        var states: [State] = [State(first: steps[first].source)]
        func trace(through last: Int) {
            while first + states.count - 1 <= last, let origins = steps[first + states.count - 1].inferredOrigins,
                  let next = states[states.count - 1].after(origins) {
                states.append(next)
            }
        }
        trace(through: first + 1)
        guard states.count == 3, states[2].couldBeOneStep(into: steps[first + 1].destination) else { return nil }
        func combination(through last: Int) -> MigrationStep? {
            let intermediates = steps[(first + 1)...last].map(\.source)
            let direct = MappingInference.infer(from: steps[first].source, to: steps[last].destination, through: intermediates)
            guard let mapping = direct.mapping, !direct.origins.reshapes,
                  State(first: steps[first].source).after(direct.origins) == states[last - first + 1] else { return nil }
            var step = MigrationStep(source: steps[first].source, destination: steps[last].destination, inferred: direct, mapping: mapping, order: order)
            step.passesThrough = intermediates.map(\.version)
            return step
        }
        guard let two = combination(through: first + 1) else { return nil }
        trace(through: end)
        let reachable = first + states.count - 2
        if reachable == first + 1 { return (two, first + 1) }
        if let whole = combination(through: reachable) { return (whole, reachable) }
        var best = (two, first + 1)
        var low = first + 2, high = reachable - 1
        while low <= high {
            let middle = (low + high) / 2
            if let step = combination(through: middle) {
                best = (step, middle)
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return best
    }
}

extension MigrationStep {
    /// Whether the step may be taken together with its inferred neighbours: inferred, and not
    /// changing what links may reach or which keys objects get (`InferredOrigins.reshapes`).
    var isCombinable: Bool { isInferred && inferredOrigins?.reshapes == false }
}

extension InferredChain.Trace {
    /// Whether a number conversion was made on the way.
    var isConverted: Bool {
        switch self {
        case .converted: return true
        case .filled(let inner, _), .unordered(let inner): return inner.isConverted
        default: return false
        }
    }

    /// Whether a to-many's order was dropped on the way (it cannot come back).
    var isUnordered: Bool {
        if case .unordered = self { return true }
        return false
    }
}
