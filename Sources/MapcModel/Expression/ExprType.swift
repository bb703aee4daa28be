/// The static type of an expression, as the checker sees it.
package indirect enum ExprType: Sendable, Equatable, CustomStringConvertible {
    /// Not known before running (free-form JSON, policy function results).
    case unknown
    /// Nil.
    case null
    /// A boolean.
    case bool
    /// An integer.
    case integer
    /// A double (or float).
    case double
    /// A decimal.
    case decimal
    /// A string.
    case string
    /// A date.
    case date
    /// Binary data.
    case binary
    /// A UUID.
    case uuid
    /// A URI.
    case uri
    /// An object of an entity ("" when the entity is not known).
    case object(String)
    /// A collection of values of one type.
    case collection(ExprType)
    /// `$manager`.
    case manager
    /// `$entityPolicy`.
    case policy
    /// A context (`$manager.sourceContext`).
    case context
    /// A fetch request.
    case fetchRequest
    /// `$entityMapping`.
    case entityMapping
    /// `$propertyMapping`.
    case propertyMapping
    /// An entity mapping's `userInfo`.
    case userInfo

    /// The type of an attribute's values: its value kind (`ValueKind(type)`, the one mapping of
    /// attribute types to kinds).
    package init(_ type: AttributeType) {
        self.init(ValueKind(type))
    }

    /// The type of values of a kind.
    package init(_ kind: ValueKind) {
        switch kind {
        case .bool: self = .bool
        case .integer: self = .integer
        case .double: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .date: self = .date
        case .binary: self = .binary
        case .uuid: self = .uuid
        case .uri: self = .uri
        }
    }

    /// The type of a literal value.
    package init(of value: Value) {
        switch value {
        case .null: self = .null
        case .bool: self = .bool
        case .integer: self = .integer
        case .double: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .date: self = .date
        case .binary: self = .binary
        case .uuid: self = .uuid
        case .uri: self = .uri
        case .nonUTF8Text: self = .string
        }
    }

    /// The kind of scalar value, for the assignability rule; nil for objects, collections and handles.
    package var valueKind: ValueKind? {
        switch self {
        case .bool: return .bool
        case .integer: return .integer
        case .double: return .double
        case .decimal: return .decimal
        case .string: return .string
        case .date: return .date
        case .binary: return .binary
        case .uuid: return .uuid
        case .uri: return .uri
        default: return nil
        }
    }

    var isNumeric: Bool { self == .integer || self == .double || self == .decimal || self == .bool }
    var isOpen: Bool { self == .unknown || self == .null }

    package var description: String {
        switch self {
        case .unknown: return "unknown"
        case .null: return "nil"
        case .bool: return "bool"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .date: return "date"
        case .binary: return "binary"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .object(let entity): return entity.isEmpty ? "object" : entity
        case .collection(let element): return "collection of \(element)"
        case .manager: return "migration manager"
        case .policy: return "entity policy"
        case .context: return "context"
        case .fetchRequest: return "fetch request"
        case .entityMapping: return "entity mapping"
        case .propertyMapping: return "property mapping"
        case .userInfo: return "user info dictionary"
        }
    }
}

/// What the checker knows around an expression.
package struct CheckScope: Sendable {
    /// The schema objects belong to; nil when objects are free-form.
    package var schema: Schema?
    /// Variables in scope, without `$`; `$manager` and `$entityPolicy` are always there.
    package var variables: [String: ExprType]
    /// The type of `SELF`.
    package var evaluatedObject: ExprType
    /// Entity mappings `$manager` selectors may name, with their source and destination entities;
    /// nil when not checking a mapping (names are then not verified).
    package var entityMappings: [String: (source: String?, destination: String?)]?
    /// Functions the entity policy registers; nil when unknown (calls are then not verified).
    package var policyFunctions: Set<String>?
    /// Whether the mapping names a policy at all (`$entityPolicy` of one without has no functions).
    package var hasPolicy = true

    /// A scope where `$source` and `SELF` are objects of `entity` in `schema`.
    package init(schema: Schema?, source entity: String?, variables: [String: ExprType] = [:]) {
        self.schema = schema
        let sourceType: ExprType = entity.map { .object($0) } ?? (schema == nil ? .object("") : .unknown)
        self.evaluatedObject = sourceType
        self.variables = ["source": sourceType, "manager": .manager, "entityPolicy": .policy].merging(variables) { _, given in given }
    }
}
