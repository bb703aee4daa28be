import MapcFoundation
import MapcModel
/// A mapping model: how to migrate a store from one schema version to the next, the equivalent of
/// an `.xcmappingmodel`. Read from YAML by `MappingLoader`, checked by `MappingChecker`, run by
/// `MigrationManager`.
public struct MappingModel: Sendable {
    /// The source version's name.
    public var source: String
    /// The destination version's name.
    public var destination: String
    /// Entity mappings, in the order their work is done.
    public var entityMappings: [EntityMapping]
    /// The file it was read from; nil for mappings built in code (inferred ones).
    public var file: SourceFile?
    /// Where the values of `source:` and `destination:` are written.
    package var valueLocations: [String: FileLocation] = [:]
    /// Its place among the mapping files of one step (Apple's "multiple passes"): a step with
    /// several runs them in this order, each into what the ones before wrote, as one atomic step.
    /// Nil is the first.
    public var pass: Int?

    /// Creates a mapping model.
    public init(source: String, destination: String, entityMappings: [EntityMapping], file: SourceFile? = nil) {
        self.source = source
        self.destination = destination
        self.entityMappings = entityMappings
        self.file = file
    }

    /// The entity mapping with that name.
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }
}

/// What an entity mapping does, as Core Data's `NSEntityMappingType`.
public enum EntityMappingType: String, Sendable, CaseIterable {
    /// Same entity on both sides: every attribute and relationship is carried over by name.
    case copy
    /// Source objects become destination objects through the property mappings.
    case transform
    /// A destination entity with no source: creates nothing unless its policy does.
    case add
    /// A source entity with no destination: its objects are dropped, on purpose.
    case remove
    /// A custom policy creates the destination objects.
    case custom
}

/// One entity mapping: `NSEntityMapping`.
public struct EntityMapping: Sendable {
    /// The name, unique in the model; `$manager` lookups use it.
    public var name: String
    /// The source entity; nil for `add` mappings.
    public var source: String?
    /// The destination entity; nil for `remove` mappings.
    public var destination: String?
    /// The type, given or implied.
    public var type: EntityMappingType
    /// Which source objects to read; by default every object of the source entity (sub-entities excluded).
    public var sourceExpression: MappingExpression?
    /// A predicate over the source object; objects for which it is false are not migrated by this mapping.
    public var filter: MappingExpression?
    /// The name of a registered custom policy.
    public var policy: String?
    /// Free-form data for policies.
    public var userInfo: [String: String]
    /// Destination attribute expressions, in file order.
    public var attributes: [PropertyMapping]
    /// Destination relationship expressions, in file order.
    public var relationships: [PropertyMapping]
    /// The source entity's version hash when the mapping was written.
    public var sourceHash: RecordedHash?
    /// The destination entity's version hash when the mapping was written.
    public var destinationHash: RecordedHash?
    /// Work left to do, as `mapc infer` writes it for a step it cannot complete: `check` reports
    /// each item as an error, so the mapping cannot run until they are done and removed.
    public var todo: [MappingTodo] = []
    /// Source properties whose values the mapping drops on purpose (`drops:`): `check` warns about
    /// a source property that holds values no expression reads, unless it is listed here.
    public var drops: [String] = []
    /// Where the mapping's name is written.
    public var location: FileLocation?
    /// Whether reading it from its file found mistakes outside its property mappings (an unknown
    /// key, a source or filter that does not parse): what was read is then incomplete, and the
    /// checker leaves it alone rather than report what is missing only because it could not be read.
    var hasLoadErrors = false
    /// How many errors reading its property mappings found (an expression that does not parse):
    /// the others are checked, but nothing is said of what the mapping leaves unread.
    var propertyLoadErrors = 0
    /// The properties whose mappings could not be read, by name; nil when a name itself could
    /// not be (then any property may be the one).
    var unreadPropertyMappings: Set<String>? = []
    /// Whether the whole mapping was read: only then can what it leaves out be judged.
    var isReadWhole: Bool { !hasLoadErrors && propertyLoadErrors == 0 }
    /// Where each key's value is written (`source`, `destination`, `policy`, `type`, …).
    package var valueLocations: [String: FileLocation] = [:]

    /// Where a key's value is written, or else where the mapping's name is (for messages).
    package func location(of key: String) -> FileLocation? { valueLocations[key] ?? location }

    /// Creates an entity mapping.
    public init(name: String, source: String?, destination: String?, type: EntityMappingType, sourceExpression: MappingExpression? = nil,
                filter: MappingExpression? = nil, policy: String? = nil, userInfo: [String: String] = [:],
                attributes: [PropertyMapping] = [], relationships: [PropertyMapping] = []) {
        self.name = name
        self.source = source
        self.destination = destination
        self.type = type
        self.sourceExpression = sourceExpression
        self.filter = filter
        self.policy = policy
        self.userInfo = userInfo
        self.attributes = attributes
        self.relationships = relationships
    }

    /// The attribute mapping for a destination attribute.
    public func attributeMapping(named name: String) -> PropertyMapping? { attributes.first { $0.name == name } }

    /// The relationship mapping for a destination relationship.
    public func relationshipMapping(named name: String) -> PropertyMapping? { relationships.first { $0.name == name } }
}

/// One property mapping: `NSPropertyMapping`, a destination property and its value expression.
public struct PropertyMapping: Sendable {
    /// The destination property.
    public var name: String
    /// The value expression.
    public var expression: MappingExpression
    /// Where the property's name is written.
    public var location: FileLocation?

    /// Creates a property mapping.
    public init(name: String, expression: MappingExpression, location: FileLocation? = nil) {
        self.name = name
        self.expression = expression
        self.location = location
    }
}

/// An expression in a mapping: its text (placed in its file) and its parsed form.
public struct MappingExpression: Sendable {
    /// The text and where it stands.
    package var source: ExpressionSource
    /// The parsed expression.
    package var expression: Expr

    /// The expression's text, as written.
    public var text: String { source.text }

    /// Parses text; a parse error is a diagnostic in the text's file.
    package static func parse(_ source: ExpressionSource) -> Result<MappingExpression, Diagnostic> {
        source.parse().map { MappingExpression(source: source, expression: $0) }
    }

    /// Parses text written in code (for inferred mappings and tests); throws on a parse error.
    public init(_ text: String) throws {
        let source = ExpressionSource(text: text, origin: FileLocation(path: "<mapping>", line: 1, column: 1))
        switch source.parse() {
        case .success(let expression): self.init(source: source, expression: expression)
        case .failure(let diagnostic): throw DiagnosticsError([diagnostic])
        }
    }

    init(source: ExpressionSource, expression: Expr) {
        self.source = source
        self.expression = expression
    }
}

/// An entity's version hash as a mapping records it, with per-property fingerprints so a stale
/// mapping can say what changed.
public struct RecordedHash: Sendable, Equatable {
    /// The entity's version hash.
    public var hash: String
    /// Short hashes of each property's canonical description, by property name; empty when not recorded.
    public var properties: [String: String]
    /// Where the hash is written.
    public var location: FileLocation?

    /// Creates a recorded hash.
    public init(hash: String, properties: [String: String] = [:], location: FileLocation? = nil) {
        self.hash = hash
        self.properties = properties
        self.location = location
    }

    public static func == (lhs: RecordedHash, rhs: RecordedHash) -> Bool {
        lhs.hash == rhs.hash && lhs.properties == rhs.properties
    }
}

/// One piece of work left in a mapping file (`todo:` under an entity mapping).
public struct MappingTodo: Sendable, Equatable {
    /// What is left to do, and why.
    public var text: String
    /// Where the item is written.
    public var location: FileLocation?

    /// Creates an item.
    public init(_ text: String, location: FileLocation? = nil) {
        self.text = text
        self.location = location
    }
}

extension MappingModel {
    /// Whether a mapping that creates objects of `entity` (or of one of its sub-entities) sets
    /// their relationship `name`: the other side of a pair, set from there.
    func setsRelationship(_ name: String, ofObjectsOf entity: String, in schema: Schema) -> Bool {
        entityMappings.contains { mapping in
            guard mapping.relationshipMapping(named: name) != nil, let created = mapping.destination.flatMap(schema.entity(named:)) else { return false }
            return schema.ancestry(of: created).contains { $0.name == entity }
        }
    }
}
