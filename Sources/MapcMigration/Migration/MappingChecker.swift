import Foundation
import MapcFoundation
import MapcModel

/// Checks a mapping model against its source and destination schemas, the way a compiler checks
/// code: unknown versions, entities and properties (with "did you mean"), expressions that do not
/// parse or type-check, results a destination attribute cannot hold, filters that are not
/// predicates, `$manager` calls naming missing or mismatched mappings, required attributes left
/// without a value, source entities no mapping reads and source properties no expression reads
/// (their values would be dropped), unknown policies, and stale entity hashes.
public struct MappingChecker {
    /// The mapping checked.
    public let mapping: MappingModel
    /// Policies that may be named.
    public let policies: PolicyRegistry
    var diagnostics: [Diagnostic] = []
    /// Source attributes ("Entity.name") already reported as left unmapped beside a destination
    /// attribute of their name, so the check of unread properties does not say it twice.
    var unmappedAttributesReported: Set<String> = []
    /// The other passes of the mapping's step, when it has several (`pass:`): what they read
    /// counts as read when the checker looks for values no expression reads.
    package var companions: [MappingModel] = []
    /// The entities of the catalog's other versions, when checked against a catalog: a policy
    /// serving several steps declares the objects it creates in each (`createdEntities`).
    var entitiesOfOtherVersions: Set<String> = []

    /// Creates a checker.
    public init(mapping: MappingModel, policies: PolicyRegistry = .shared) {
        self.mapping = mapping
        self.policies = policies
    }

    private var fileStart: FileLocation? { mapping.file.map { FileLocation(path: $0.path, line: 1, column: 1) } }

    mutating func error(_ message: String, at location: FileLocation?, length: Int = 1, fix: String? = nil) {
        diagnostics.append(.error(message, at: location ?? fileStart, length: length, fix: fix))
    }

    mutating func warning(_ message: String, at location: FileLocation?, length: Int = 1, fix: String? = nil) {
        diagnostics.append(.warning(message, at: location ?? fileStart, length: length, fix: fix))
    }

    /// Resolves the versions in a catalog, then checks; unknown versions are diagnostics.
    public mutating func check(catalog: SchemaCatalog) -> [Diagnostic] {
        let versions = catalog.schemas.map(\.version)
        var schemas: [Schema] = []
        for (key, version) in [("source", mapping.source), ("destination", mapping.destination)] where !version.isEmpty {
            if let schema = catalog.schema(version: version) {
                schemas.append(schema)
            } else if let broken = catalog.versionsWithErrors[version] {
                error("this mapping is not checked against \(key) version '\(version)': its schema file has errors (\(broken))", at: mapping.valueLocations[key], length: version.count,
                      fix: "mend the schema file; the mapping is checked once it loads")
            } else {
                // A source is suggested among the versions before the destination, a destination
                // among those after the source (v1 was offered for a destination after v2).
                let other = key == "source" ? mapping.destination : mapping.source
                let candidates = versions.firstIndex(of: other).map { key == "source" ? Array(versions[..<$0]) : Array(versions[($0 + 1)...]) } ?? versions
                error("unknown \(key) version '\(version)' in \(catalog.directory.isEmpty ? "the schemas" : catalog.directory)", at: mapping.valueLocations[key], length: version.count,
                      fix: Suggestions.didYouMean(version, in: candidates) ?? (versions.isEmpty ? "\(catalog.directory.isEmpty ? "the schemas folder" : catalog.directory) has no versions\(catalog.directory.isEmpty || FileManager.default.fileExists(atPath: catalog.directory) ? "" : " (it does not exist: a mapping is checked against the schemas folder beside its mappings folder)")" : "versions: \(versions.joined(separator: ", "))"))
            }
        }
        guard schemas.count == 2 else { return diagnostics }
        entitiesOfOtherVersions = Set(catalog.schemas.filter { $0.version != mapping.destination }.flatMap { $0.entities.map(\.name) })
        let named = Self.versionsNamed(byFile: mapping.file?.path, among: versions)
        if let said = named.first, !named.contains(where: { $0 == (mapping.source, mapping.destination) }) {
            warning("the file's name says \(said.source) -> \(said.destination), but it maps \(mapping.source) -> \(mapping.destination)", at: mapping.valueLocations["source"],
                    length: mapping.source.count, fix: "rename the file, or correct 'source:' and 'destination:' (a file copied from another step keeps that step's versions)")
        }
        return check(source: schemas[0], destination: schemas[1])
    }

    /// The pairs of versions a mapping file's name can be read to give as `<from>_to_<to>`
    /// (`mapping_v2_to_v3.yaml`, `v23-to-v24.yaml`), both versions of the catalog: every
    /// separator is tried, as a version's own name may hold one (`a_to_b_to_b.yaml`). Empty for a
    /// name that gives none.
    static func versionsNamed(byFile path: String?, among versions: [String]) -> [(source: String, destination: String)] {
        guard let path else { return [] }
        let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let boundary: Set<Character> = ["_", "-", ".", " "]
        var pairs: [(source: String, destination: String)] = []
        var searched = stem.startIndex..<stem.endIndex
        while let separator = stem.range(of: #"[_\-. ]to[_\-. ]"#, options: [.regularExpression, .caseInsensitive], range: searched) {
            let before = stem[..<separator.lowerBound], after = stem[separator.upperBound...]
            let from = versions.filter { v in before == v || (before.hasSuffix(v) && before.dropLast(v.count).last.map(boundary.contains) == true) }
            let to = versions.filter { v in after == v || (after.hasPrefix(v) && after.dropFirst(v.count).first.map(boundary.contains) == true) }
            pairs += from.flatMap { source in to.map { (source, $0) } }
            searched = stem.index(after: separator.lowerBound)..<stem.endIndex
        }
        return pairs
    }

    /// Checks against the two schemas.
    public mutating func check(source: Schema, destination: Schema) -> [Diagnostic] {
        let mappingsByName = Dictionary(mapping.entityMappings.map { ($0.name, (source: $0.source, destination: $0.destination)) }, uniquingKeysWith: { first, _ in first })
        for entityMapping in mapping.entityMappings where !entityMapping.hasLoadErrors {
            checkEntityMapping(entityMapping, source: source, destination: destination, mappings: mappingsByName)
        }
        checkRequiredRelationshipsAreSet(destination: destination)
        checkBothSidesAgree(source: source, destination: destination)
        // Source objects no mapping reads are dropped: say so, by entity (unless a mapping could
        // not be read whole: its source may be the one missing).
        // (Objects handed whole to a policy's function are read: their values may live on.)
        // A step of several passes is judged whole, by its first pass (see `judgesTheStep`).
        let reads = sourceReads(source: source, destination: destination)
        let all = mapping.entityMappings + companions.flatMap(\.entityMappings)
        for entity in source.entities where judgesTheStep && !entity.isAbstract && all.allSatisfy(\.isReadWhole) && !reads.wholeEntities.contains(entity.name) {
            if Self.readers(of: entity, in: source, among: all).isEmpty {
                // Read by another entity's fetch (an `add` mapping's), they are still not kept.
                let fetchers = all.filter { $0.type != .remove && MigrationAnalysis.entitiesRead(by: $0, in: source).contains(entity.name) }
                let read = fetchers.first.map { fetcher in
                    "keeps \(entity.name) objects of \(source.version) ('\(fetcher.name)' reads them through its source expression\(fetcher.destination.map { " and makes \($0) objects of them" } ?? ""))"
                } ?? "reads \(entity.name) objects of \(source.version)"
                warning("no entity mapping \(read); they would be dropped", at: mapping.valueLocations["entityMappings:"] ?? mapping.valueLocations["entityMappings"],
                        fix: "add a mapping with 'source: \(entity.name)', or a 'type: remove' mapping to drop them on purpose")
            }
        }
        checkDrops(source: source)
        checkUnreadSourceProperties(source: source, reads: reads)
        checkOrdersReadOnlyThroughInverses(source: source, destination: destination, reads: reads)
        return diagnostics.sorted(by: SchemaLoader.fileOrder)
    }

    /// A relationship set from both sides by two mappings, each from a source relationship, where
    /// those two are not each other's inverse: the sides say different things wherever the source
    /// data differs, and the later mapping decides (a to-one found empty clears what the to-many
    /// side set), as Core Data's last write does. Said at the later mapping's side.
    private mutating func checkBothSidesAgree(source: Schema, destination: Schema) {
        // Each relationship mapping read as `lookup(…, $source.key)`: the destination relationship and source key.
        var sides: [(mapping: Int, entity: String, relationship: Relationship, sourceEntity: String, key: String, location: FileLocation?)] = []
        for (index, entityMapping) in mapping.entityMappings.enumerated() where entityMapping.isReadWhole {
            guard let destinationName = entityMapping.destination, let destinationEntity = destination.entity(named: destinationName),
                  let sourceName = entityMapping.source else { continue }
            for propertyMapping in entityMapping.relationships {
                guard case .relationship(let relationship)? = destination.property(named: propertyMapping.name, in: destinationEntity),
                      case .method(let receiver, let selector, _, let arguments) = propertyMapping.expression.expression.kind, receiver.kind == .variable("manager"), arguments.count == 2,
                      [MethodSelector.destinationInstancesForEntityMapping.rawValue, MethodSelector.destinationInstancesForSourceRelationship.rawValue].contains(selector),
                      case .keyPath(let root, let components) = arguments[1].kind, root.kind == .variable("source"), components.count == 1,
                      case .key(let key, _) = components[0] else { continue }
                sides.append((index, destinationName, relationship, sourceName, key, propertyMapping.location))
            }
            // A copy mapping sets each relationship no mapping of it names from the source's of that name.
            guard entityMapping.type == .copy, let sourceEntity = source.entity(named: sourceName) else { continue }
            for relationship in destination.allRelationships(of: destinationEntity) where entityMapping.relationshipMapping(named: relationship.name) == nil {
                guard case .relationship? = source.property(named: relationship.name, in: sourceEntity) else { continue }
                sides.append((index, destinationName, relationship, sourceName, relationship.name, entityMapping.location))
            }
        }
        // A custom policy may relate its objects otherwise (or not by these expressions at all).
        guard !mapping.entityMappings.contains(where: { $0.policy != nil }) else { return }
        for (position, later) in sides.enumerated() {
            // Two to-many sides only add links (a many-to-many gets both sets, in either order).
            guard let inverse = destination.mutualInverse(of: later.relationship), !(later.relationship.isToMany && inverse.isToMany) else { continue }
            // The inverse is set on objects of the relationship's destination entity or its sub-entities.
            let takers = destination.entity(named: later.relationship.destination).map { Set(destination.hierarchy(under: $0).map(\.name)) } ?? []
            // Sides are in the order they are set: mappings in order, a mapping's relationships in order.
            for earlier in sides[..<position] where earlier.relationship.name == inverse.name && takers.contains(earlier.entity) {
                // Read from one source relationship and its inverse, the two sides agree.
                guard let earlierSource = source.entity(named: earlier.sourceEntity), case .relationship(let earlierRead)? = source.property(named: earlier.key, in: earlierSource),
                      let laterSource = source.entity(named: later.sourceEntity), case .relationship(let laterRead)? = source.property(named: later.key, in: laterSource),
                      !(earlierRead.inverse == later.key && laterRead.inverse == earlier.key) else { continue }
                warning("'\(later.relationship.name)' of \(later.entity) and '\(inverse.name)' of \(earlier.entity) are one relationship, set from both sides from source relationships that are not each other's inverse "
                        + "(\(earlier.sourceEntity).\(earlier.key) in '\(mapping.entityMappings[earlier.mapping].name)', \(later.sourceEntity).\(later.key) here): where they differ, the one set later decides, "
                        + "and one that finds nothing clears the other's link, as Core Data's last write does",
                        at: later.location, length: later.relationship.name.count,
                        fix: "set one side only, or both from a source relationship and its inverse")
            }
        }
    }

    /// A required destination relationship that no mapping sets, from either side, leaves every
    /// object a mapping creates empty there, and validation refuses them all. Only provable when
    /// no custom policy takes part: a policy may relate anything.
    private mutating func checkRequiredRelationshipsAreSet(destination: Schema) {
        guard !mapping.entityMappings.contains(where: { $0.policy != nil || !$0.isReadWhole }) else { return }
        for entityMapping in mapping.entityMappings where entityMapping.type == .transform {
            guard let name = entityMapping.destination, let entity = destination.entity(named: name) else { continue }
            for relationship in destination.allRelationships(of: entity) where !RelationshipCountRule.allowsEmpty(relationship) && !relationship.isTransient {
                guard entityMapping.relationshipMapping(named: relationship.name) == nil else { continue }
                // Set from the other side: a mapping creating objects of its destination maps the inverse.
                let inverse = relationship.inverse
                if let inverse, mapping.setsRelationship(inverse, ofObjectsOf: relationship.destination, in: destination) { continue }
                let otherSide = inverse.map { " or map its inverse '\($0)' in the mapping that creates the \(relationship.destination) objects" } ?? ""
                error("required relationship '\(relationship.name)' of \(entity.name) is set by no mapping: every object '\(entityMapping.name)' creates would fail validation",
                      at: entityMapping.location, length: entityMapping.name.count,
                      fix: "add '\(relationship.name):' under 'relationships:' of '\(entityMapping.name)'\(otherSide), or make it optional in \(destination.version)")
            }
        }
    }

    mutating func checkRelationshipResult(_ type: ExprType, _ propertyMapping: PropertyMapping, _ relationship: Relationship, _ destinationSchema: Schema,
                                                  _ mappings: [String: (source: String?, destination: String?)]) {
        var produced: String?
        switch type {
        case .object(let entity), .collection(.object(let entity)): produced = entity.isEmpty ? nil : entity
        case .unknown, .null, .collection(.unknown), .collection(.null): break
        default:
            error("relationship '\(relationship.name)' takes objects, but this expression gives \(type)", at: propertyMapping.expression.source.origin, length: propertyMapping.expression.source.text.count,
                  fix: "use FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"Mapping\", $source…)")
            return
        }
        let target = destinationSchema.entity(named: relationship.destination)
        let origins = Self.objectOrigins(of: propertyMapping.expression.expression)
        if origins.contains(.source) {
            // Objects of the old store (`$source.author`): their keys are not those of the objects made from them.
            let creating = mappings.filter { name, sides in
                (produced == nil || sides.source == produced) && sides.destination.map { made in target.map { destinationSchema.hierarchy(under: $0).contains { $0.name == made } } ?? false } ?? false
            }
            error("relationship '\(relationship.name)' is given \(produced.map { "\($0) objects" } ?? "objects") of the source store; it takes the destination objects created from them",
                  at: propertyMapping.expression.source.origin, length: propertyMapping.expression.source.text.count,
                  fix: "write FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(creating.keys.sorted().first ?? "<the mapping creating them>")\", \(origins == [.source] ? propertyMapping.expression.source.text : "<the source objects>"))")
            return
        }
        guard let produced, let target else { return }
        if !destinationSchema.hierarchy(under: target).contains(where: { $0.name == produced }) {
            let via = Self.namedMapping(in: propertyMapping.expression.expression).map { " (mapping '\($0)' creates \(produced) objects)" } ?? ""
            error("relationship '\(relationship.name)' leads to \(relationship.destination), but this expression gives \(produced) objects\(via)", at: propertyMapping.expression.source.origin,
                  length: propertyMapping.expression.source.text.count,
                  fix: "name a mapping whose destination is \(relationship.destination)" + (mappings.first { $0.value.destination == relationship.destination }.map { ", such as '\($0.key)'" } ?? ""))
        }
    }

    /// An attribute mapping converting a source attribute's values to a type they cannot be stored
    /// in as they are: a `CAST` where the expression language has one.
    package static func conversion(of name: String, from old: AttributeType, to new: AttributeType) -> String {
        if ValueKind(old) == .string, new == .bool { return "a comparison, such as '\(name): \(ExpressionLiteral.sourceKey(name)) ==[c] \"true\"'" }
        guard let target = CastClass.target(from: ValueKind(old), to: new) else { return "an expression giving \(new.rawValue) values from \(ExpressionLiteral.sourceKey(name))" }
        if target == "NSDate" {
            return "'\(name): CAST(\(ExpressionLiteral.sourceKey(name)), \"NSDate\")' (which reads seconds since 2001-01-01; for Unix time, CAST(\(ExpressionLiteral.sourceKey(name)) - 978307200, \"NSDate\"))"
        }
        return "'\(name): CAST(\(ExpressionLiteral.sourceKey(name)), \"\(target)\")'"
    }

    /// Key paths (and `valueForKey:`) on destination objects, with a diagnostic each: a migration
    /// reads key paths through the source store, where a destination object's key names another
    /// row, so they are refused (at run time too) rather than read wrongly.
    static func destinationKeyPaths(in expression: MappingExpression) -> [Diagnostic] {
        var found: [Diagnostic] = []
        func visit(_ node: Expr) {
            var receiver: Expr?
            switch node.kind {
            case .keyPath(let root, _): receiver = root
            case .method(let target, let selector, _, _) where [MethodSelector.valueForKey.rawValue, MethodSelector.valueForKeyPath.rawValue].contains(selector): receiver = target
            default: break
            }
            if let receiver, objectOrigins(of: receiver).contains(.destination) {
                found.append(expression.source.diagnostic(.error, "key paths read the source store's objects only; these are objects of the destination store", at: node.range,
                                                          fix: "read the value from the source objects they were made from, such as $source.…"))
            }
            node.children.forEach(visit)
        }
        visit(expression.expression)
        return found
    }

    /// Which store the objects an expression gives are read from, as its form shows: `$source`
    /// (and `SELF`, the source object), key paths and elements of what they give, and fetches from
    /// the source context are the source's; `$destination` and `$manager`'s destination instances
    /// are the destination's; anything else (a policy function, a literal nil) is neither.
    enum ObjectOrigin { case source, destination }

    static func objectOrigins(of expression: Expr) -> Set<ObjectOrigin> {
        switch expression.kind {
        case .evaluatedObject: return [.source]
        case .variable(let name):
            switch name {
            case "source": return [.source]
            case "destination": return [.destination]
            default: return []
            }
        case .keyPath(let root, _), .index(let root, _), .subquery(let root, _, _): return objectOrigins(of: root)
        case .ternary(_, let whenTrue, let whenFalse): return objectOrigins(of: whenTrue).union(objectOrigins(of: whenFalse))
        case .aggregate(let items): return items.reduce(into: []) { $0.formUnion(objectOrigins(of: $1)) }
        case .binary(.union, let left, let right): return objectOrigins(of: left).union(objectOrigins(of: right))
        // An intersection keeps the left side's elements, a difference what the left side has.
        case .binary(.intersect, let left, _), .binary(.minus, let left, _): return objectOrigins(of: left)
        // Whatever context is named, a fetch reads the source (its only request is
        // fetchRequestForSourceEntityNamed:).
        case .fetch: return [.source]
        case .method(let receiver, let selector, _, _):
            switch MethodSelector.named(selector) {
            case .destinationInstancesForEntityMapping?, .destinationInstancesForSourceRelationship?: return [.destination]
            case .sourceInstancesForEntityMapping?: return [.source]
            case .valueForKey?, .valueForKeyPath?, .objectAtIndex?, .firstObject?, .lastObject?: return objectOrigins(of: receiver)
            default: return []
            }
        default: return []
        }
    }

    /// The mapping name in a `destinationInstancesForEntityMappingNamed:` call, if any.
    static func namedMapping(in expression: Expr) -> String? {
        if case .method(_, let selector, _, let arguments) = expression.kind, selector == MethodSelector.destinationInstancesForEntityMapping.rawValue,
           let first = arguments.first, case .literal(.string(let name)) = first.kind {
            return name
        }
        return nil
    }

    mutating func checkHash(_ recorded: RecordedHash, entity: Entity, schema: Schema, side: String) {
        let current = VersionHash.entityHash(of: entity, in: schema)
        guard recorded.hash != current else { return }
        var changes: [String] = []
        if !recorded.properties.isEmpty {
            let now = VersionHash.propertyFingerprints(of: entity, in: schema)
            for name in Set(recorded.properties.keys).union(now.keys).sorted() {
                switch (recorded.properties[name], now[name]) {
                case (nil, _?): changes.append(name == "@entity" ? "the entity's own settings changed" : "'\(name)' was added")
                case (_?, nil): changes.append("'\(name)' was removed")
                case let (old?, new?) where old != new:
                    changes.append(name == "@entity" ? "the entity's flags, parent, modifier or constraints changed" : "'\(name)' changed (type, optionality, transient flag, modifier, or relationship target, inverse or counts)")
                default: break
                }
            }
        }
        let what = changes.isEmpty ? "run 'mapc check --update-hashes' once you have reviewed the mapping against the new schema"
            : changes.joined(separator: "; ") + "; review the mapping, then run 'mapc check --update-hashes'"
        error("stale \(side) hash: \(entity.name) in \(schema.version) has changed since this mapping was written (recorded \(recorded.hash.prefix(12)), now \(current.prefix(12)))",
              at: recorded.location, length: 1, fix: what)
    }
}

extension MappingChecker {
    /// The other passes of a mapping's step among mapping files (a mappings folder's, a step's):
    /// those of its source and destination but itself, known by its file, and of another pass
    /// number. What `check`, the editor and a run give a checker as its `companions`. A file of the
    /// same pass is another version of it (a file checked beside the project's, which `check`'s
    /// clash error names when both are in one folder), not a pass: its reads were counted as this
    /// one's, and hid what this one drops.
    package static func otherPasses(of mapping: MappingModel, among candidates: [MappingModel]) -> [MappingModel] {
        let own = mapping.file.map { Files.standardized($0.path) }
        return candidates.filter { candidate in
            candidate.source == mapping.source && candidate.destination == mapping.destination && !MappingCatalog.clash(candidate, mapping)
                && (own == nil || candidate.file.map { Files.standardized($0.path) } != own)
        }
    }

    /// Checks the mapping files of steps as a migration will run them (inferred steps need none),
    /// throwing every failing step's diagnostics, in step order; when none fails, the warnings
    /// of them all.
    @discardableResult
    static func check(_ steps: [MigrationStep], policies: PolicyRegistry) throws -> [Diagnostic] {
        let checked = diagnostics(of: steps, policies: policies)
        let diagnostics = problems(checked, of: steps)
        if diagnostics.hasErrors { throw DiagnosticsError(diagnostics) }
        return checked.flatMap(\.diagnostics)
    }

    /// The diagnostics of every step's mapping files, in step order, with a note naming how far
    /// the store can go now when a later step fails.
    static func problems(of steps: [MigrationStep], policies: PolicyRegistry) -> [Diagnostic] {
        problems(diagnostics(of: steps, policies: policies), of: steps)
    }

    /// Each step with a mapping file, and its files' diagnostics.
    private static func diagnostics(of steps: [MigrationStep], policies: PolicyRegistry) -> [(step: MigrationStep, diagnostics: [Diagnostic])] {
        steps.filter { !$0.isInferred }.map { step in
            (step, step.allPasses.enumerated().flatMap { index, pass in
                var checker = MappingChecker(mapping: pass, policies: policies)
                checker.companions = otherPasses(of: pass, among: step.allPasses.enumerated().filter { $0.offset != index }.map(\.element))
                return checker.check(source: step.source, destination: step.destination)
            })
        }
    }

    /// The failing steps' diagnostics, with the note on how far the store can go now.
    private static func problems(_ checked: [(step: MigrationStep, diagnostics: [Diagnostic])], of steps: [MigrationStep]) -> [Diagnostic] {
        let failing = checked.filter { $0.diagnostics.hasErrors }
        var all = failing.flatMap(\.diagnostics)
        if let first = failing.first?.step, let start = steps.first, first.source.version != start.source.version {
            // The steps before it can run now, which is what a team waiting on a port wants.
            let reachable = first.source.version
            all.append(Diagnostic(.note, "the steps before \(reachable) -> \(first.destination.version) are ready: the store can be migrated to \(reachable) now "
                                  + "(`mapc run \(English.option("--to", reachable))`; in code, `plan(forStoreAt:to: \"\(reachable)\")`)", at: nil))
        }
        return all
    }
}
