import Foundation
import MapcFoundation
import MapcModel

/// The JSON data format: `{"version": "v3", "objects": {"Note": [{"id": "n1", ...}]}}`.
///
/// Documented in `docs/data-format.md`. Reading converts JSON values to typed `Value`s using the
/// schema, reporting every problem by entity, object id and key; writing is deterministic, so
/// that `load` then `dump` gives back the same data.
public enum DataFile {
    /// A data file's contents: the version it declares and its objects in file order.
    public struct Contents: Sendable {
        /// The `version` field.
        public var version: String?
        /// Objects, entity by entity in file order.
        public var objects: [ObjectData]
    }

    /// `error`'s problems placed in the data file they were found in (`path`, its bytes `data`):
    /// at the member of the object they concern, or the object, or its entity's list, so that an
    /// editor jumps to them. A problem that cannot be placed keeps no place.
    package static func placed(_ error: DataValidationError, in data: Data, path: String) -> DataValidationError {
        guard let (json, places) = JSONValue.placedValues(data, path: path), case .object(let top) = json,
              case .object(let lists)? = top.first(where: { $0.0 == "objects" })?.1 else { return error }
        var placed = error
        for index in placed.problems.indices {
            let problem = placed.problems[index]
            // A problem of no list of the file (the store's own, said of "store") is placed nowhere.
            let list = lists.first { $0.0 == problem.entity }?.1
            guard problem.entity == "file" || list != nil else { continue }
            var trail = problem.entity == "file" ? [] : ["objects", problem.entity]
            if problem.entity != "file", let id = problem.objectID ?? (problem.occurrence != nil ? "" : nil) {
                // An object the file does not hold (one in the store already) is placed nowhere;
                // of several with one id (or an empty one), the one the problem is of.
                guard case .array(let items)? = list else { continue }
                let holding = items.indices.filter { index in
                    guard case .object(let members) = items[index] else { return false }
                    // An id written as a number is read as its digits.
                    return members.contains { ($0.0 == "id" || $0.0 == alternateIdentityKey) && ($0.1 == .string(id) || Int64(id).map { .integer($0) } == $0.1) }
                }
                let which = problem.occurrence ?? 0
                guard which < holding.count else { continue }
                trail.append(String(holding[which]))
            }
            if let key = problem.key, trail.count != 2 { trail.append(key) }
            // The deepest part of the trail the file has.
            while !trail.isEmpty, places[trail] == nil { trail.removeLast() }
            if let place = places[trail] { placed.problems[index].location = FileLocation(path: path, line: place.line, column: place.column) }
        }
        return placed
    }

    /// Reads a data file's JSON for the schema, its values as a store of `format` keeps them
    /// (when given). Throws `DataValidationError` listing the problems.
    ///
    /// Values of binary attributes that allow external storage are kept in another form in each
    /// layout (`CoreDataExternalValue`): a file `dump` wrote says whose form it holds (`layout`),
    /// and its values are converted into `format`'s; a file that does not say is in `format`'s.
    public static func read(_ json: JSONValue, schema: Schema, for format: StoreFormat? = nil) throws -> Contents {
        var problems = ProblemList()
        guard case .object(let top) = json else {
            throw DataValidationError(problems: [DataProblem(entity: "file", objectID: nil, key: nil, message: "the top level must be an object with \"version\" and \"objects\"")], total: 1)
        }
        for (key, _) in top where key != "version" && key != "objects" && key != layoutKey {
            problems.add("file", nil, key, "unknown top-level key '\(key)'; a data file has \"version\" and \"objects\" (and \"layout\", as `mapc dump` writes it)")
        }
        var layout: StoreFormat?
        if let value = json[layoutKey] {
            if case .string(let name) = value, let named = StoreFormat.named(name) { layout = named }
            else { problems.add("file", nil, layoutKey, "\"layout\" must name the layout whose form the values are in: one of \(StoreFormat.all.map { "\"\($0.layoutName)\"" }.joined(separator: ", "))") }
        }
        var version: String?
        if let value = json["version"] {
            if case .string(let text) = value { version = text }
            else { problems.add("file", nil, "version", versionRule) }
        }
        var objects: [ObjectData] = []
        switch json["objects"] {
        case .object(let groups)?:
            for (entityName, list) in groups {
                guard case .array(let items) = list else {
                    problems.add(entityName, nil, nil, "objects of '\(entityName)' must be an array of objects")
                    continue
                }
                let entity = schema.entity(named: entityName)
                if entity == nil {
                    problems.add(entityName, nil, nil, "unknown entity '\(entityName)' in version \(schema.version)" + (Suggestions.didYouMean(entityName, in: schema.entities.map(\.name)).map { "; \($0)" } ?? ""))
                }
                for (index, item) in items.enumerated() {
                    if let object = readObject(item, position: index + 1, entityName: entityName, entity: entity, schema: schema, problems: &problems) { objects.append(object) }
                }
            }
        case nil:
            problems.add("file", nil, "objects", "missing \"objects\", a map from entity names to arrays of objects")
        default:
            problems.add("file", nil, "objects", "\"objects\" must be a map from entity names to arrays of objects")
        }
        if let layout, let format { convertStoredForms(&objects, from: layout, to: format, schema: schema, problems: &problems) }
        // What the store's format cannot keep (a decimal of more digits than a Core Data column
        // holds), said with every other problem, each at its place, not the first one at the write.
        if let format {
            for object in objects {
                for (key, value) in object.attributes.sorted(by: { $0.key < $1.key }) {
                    guard let entity = schema.entity(named: object.entity), case .attribute(let attribute)? = schema.property(named: key, in: entity),
                          let problem = format.strategy.storageProblem(value, as: attribute.type) else { continue }
                    problems.add(object.entity, object.id, key, problem + " (a store of mapc's layout keeps it)")
                }
            }
        }
        try problems.throwIfAny()
        return Contents(version: version, objects: objects)
    }

    /// The key saying which layout's form the values of attributes that allow external storage are in.
    static let layoutKey = "layout"

    /// What a data file's `"version"` must be.
    static let versionRule = "\"version\" must be a string such as \"v3\""

    /// The schema version a data file says its objects are of (nil when it says none), or why its
    /// `"version"` cannot say one: the rule `read` applies, for callers choosing the schema first.
    package static func declaredVersion(of json: JSONValue, in file: String) throws -> String? {
        switch json["version"] {
        case nil: return nil
        case .string(let version)?: return version
        case let other?: throw MapcError.input("\(file): \(versionRule), not \(English.abbreviated(other.serialized(pretty: false), limit: 60))")
        }
    }

    /// Values of attributes kept marked in one layout and not the other, in the other's form: the
    /// bytes get Core Data's inline marker, or come out of it. A reference to a file of a Core
    /// Data store's external data cannot: the data file does not carry the file.
    private static func convertStoredForms(_ objects: inout [ObjectData], from layout: StoreFormat, to format: StoreFormat, schema: Schema, problems: inout ProblemList) {
        guard layout.identifier != format.identifier else { return }
        for index in objects.indices {
            guard let entity = schema.entity(named: objects[index].entity) else { continue }
            for attribute in schema.allAttributes(of: entity) where CoreDataExternalValue.isMarked(attribute, in: layout) != CoreDataExternalValue.isMarked(attribute, in: format) {
                guard let value = objects[index].attributes[attribute.name], case .binary(let data) = value else { continue }
                guard CoreDataExternalValue.isMarked(attribute, in: layout) else {
                    objects[index].attributes[attribute.name] = CoreDataExternalValue.markedInline(value)
                    continue
                }
                switch CoreDataExternalValue.form(of: data) {
                case .success(.bytes(let bytes)):
                    objects[index].attributes[attribute.name] = .binary(bytes)
                case .success(.file(let name)):
                    problems.add(objects[index].entity, objects[index].id, attribute.name,
                                 "the value is Core Data's reference to its external file \(name), which a data file does not carry: convert the store itself "
                                 + "with `mapc run --layout \(format.layoutName)` (it reads the files beside the store), or give the bytes here and drop \"layout\"")
                case .failure(let problem):
                    problems.add(objects[index].entity, objects[index].id, attribute.name, problem.description)
                }
            }
        }
    }

    /// `position` is the object's place in its entity's list, from 1: what names an object
    /// whose id cannot be read ("which of the objects?").
    private static func readObject(_ item: JSONValue, position: Int, entityName: String, entity: Entity?, schema: Schema, problems: inout ProblemList) -> ObjectData? {
        let which = "object \(position) of \"\(entityName)\""
        guard case .object(let pairs) = item else {
            problems.add(entityName, nil, nil, "\(which): each object must be a JSON object, found \(item.kindName)")
            return nil
        }
        var id: String?
        // The identity is "$id" wherever it is given, and "id" for an entity without a property of that name.
        let identityKey = item[alternateIdentityKey] != nil ? alternateIdentityKey : identityKey(of: entity, in: schema)
        switch item[identityKey] {
        case .string(let text)?: id = text
        case .integer(let number)?: id = String(number)
        case nil:
            let also = identityKey == alternateIdentityKey ? "; \(entityName) has a property named \"id\", so its objects' identities are written \"$id\"" : ""
            problems.add(entityName, nil, identityKey, "\(which) has no \"\(identityKey)\"; give every object a unique id string\(also)")
        default: problems.add(entityName, nil, identityKey, "\(which): \"\(identityKey)\" must be a string")
        }
        var object = ObjectData(id: id ?? "", entity: entityName)
        guard let entity else { return id == nil ? nil : object }
        for (key, value) in pairs where key != identityKey {
            switch schema.property(named: key, in: entity) {
            case .attribute(let attribute)?:
                switch convert(value, to: attribute.type) {
                case .success(let converted): object.attributes[key] = converted
                case .failure(let problem): problems.add(entityName, id, key, problem.message)
                }
            case .relationship(let relationship)?:
                switch value {
                case .null where !relationship.isToMany: object.relationships[key] = []
                case .string(let target) where !relationship.isToMany: object.relationships[key] = [target]
                case .array(let targets) where relationship.isToMany:
                    var ids: [String] = []
                    for target in targets {
                        if case .string(let text) = target { ids.append(text) }
                        else { problems.add(entityName, id, key, "relationship lists must hold id strings, found \(target.kindName)") }
                    }
                    object.relationships[key] = ids
                default:
                    let expected = relationship.isToMany ? "an array of ids" : "an id string or null"
                    problems.add(entityName, id, key, "to-\(relationship.isToMany ? "many" : "one") relationship '\(key)' takes \(expected), found \(value.kindName)")
                }
            case nil:
                let names = schema.propertyNames(of: entity)
                problems.add(entityName, id, key, "unknown key '\(key)' for \(entityName)" + (Suggestions.didYouMean(key, in: names).map { "; \($0)" } ?? ""))
            }
        }
        return object
    }

    /// Memory a load needs per byte of data file (measured: 10.6 times for 200,000 notes; rounded up).
    package static let memoryPerByte = 12

    /// Why a data file of `fileSize` bytes cannot be loaded on a machine with `physicalMemory`
    /// bytes (it would need more than half of it), or nil.
    package static func memoryProblem(fileSize: Int, physicalMemory: UInt64) -> String? {
        let needed = UInt64(fileSize) * UInt64(memoryPerByte)
        let available = physicalMemory / 2
        guard needed > available else { return nil }
        let part = max(1, available / UInt64(memoryPerByte) >> 20)
        return "the file is \(fileSize >> 20) MiB, and loading it needs about \(needed >> 20) MiB of memory (\(memoryPerByte) times its size), "
            + "more than half of this machine's \(physicalMemory >> 20) MiB; split it into files of at most \(part) MiB and load them one after another "
            + "(objects in a later file may refer to objects loaded before)"
    }

    /// Converts one JSON value to a value of the attribute type, within what a store can hold:
    /// JSON's forms are read here (a number, a string in a value's text form, "Infinity", the
    /// object for text that is not UTF-8), and the value converts to the type as every value does.
    package static func convert(_ json: JSONValue, to type: AttributeType) -> Result<Value, ValueProblem> {
        read(json, as: type).flatMap { value in
            ValueLimits.problem(value, for: type).map { .failure(ValueProblem($0)) } ?? .success(value)
        }
    }

    private static func read(_ json: JSONValue, as type: AttributeType) -> Result<Value, ValueProblem> {
        if case .float(let single) = json { return read(.double(Double(single)), as: type) }
        // A number a double would change: a decimal keeps every digit written (or refuses more
        // than it holds); a whole number beyond 64 bits is out of range as written; anything
        // else becomes the nearest double, as a double attribute holds it.
        if case .number(let text) = json {
            switch type {
            case .decimal: return ValueParser.parse(text, as: .decimal)
            case .int16, .int32, .int64:
                // A fraction or an exponent is read on its digits: a whole number keeps every one,
                // any fraction is refused (a double would round both).
                if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                    return ValueParser.wholeNumber(ofDecimalText: text).flatMap { ValueRules.coerce(.integer($0), to: type) }
                }
                let (low, high): (Int64, Int64) = switch type {
                case .int16: (Int64(Int16.min), Int64(Int16.max))
                case .int32: (Int64(Int32.min), Int64(Int32.max))
                default: (Int64.min, Int64.max)
                }
                return .failure(ValueProblem("\(text.prefix(60)) is out of range for \(type.rawValue) (\(low) to \(high))"))
            default:
                let nearest = JSONValue.nearestDouble(text)
                if let problem = ValueParser.underflowProblem(text, nearest: nearest) { return .failure(problem) }
                return read(.double(nearest), as: type)
            }
        }
        // A number too large for a double is a mistake, not an infinity (which is written "Infinity").
        if case .double(let d) = json, !d.isFinite { return .failure(ValueProblem("a number too large for a double is not a finite number (a stored infinity is written \"Infinity\")")) }
        switch (type, json) {
        case (_, .null): return .success(.null)
        // A JSON number into a numeric attribute converts as any number does (ValueRules: range,
        // fraction, float and decimal limits); only what is particular to JSON is decided here.
        case (.int16, .integer(let n)), (.int32, .integer(let n)), (.int64, .integer(let n)),
             (.double, .integer(let n)), (.float, .integer(let n)), (.decimal, .integer(let n)):
            return ValueRules.coerce(.integer(n), to: type)
        case (.int16, .double(let d)), (.int32, .double(let d)), (.int64, .double(let d)):
            // A whole number written in JSON is a double here only when it is beyond int64 (its
            // text rounded, to -2^63 for values a little below it): out of range, not clamped.
            if d == -9.223372036854775808e18 { return .failure(ValueProblem("\(d) is out of range for \(type.rawValue) (\(Int64.min) to \(Int64.max))")) }
            return ValueRules.coerce(.double(d), to: type)
        case (.double, .double(let d)), (.float, .double(let d)), (.decimal, .double(let d)):
            return ValueRules.coerce(.double(d), to: type)
        // What `json(_:type:)` writes for a store's infinities (a JSON number is always finite).
        case (.double, .string("Infinity")), (.float, .string("Infinity")): return .success(.double(.infinity))
        case (.double, .string("-Infinity")), (.float, .string("-Infinity")): return .success(.double(-.infinity))
        // A decimal that is not a number, as Core Data stores write it.
        case (.decimal, .string("NaN")): return .success(.decimal(.nan))
        // A URI as a store holds it, checked by nothing: a dump gives back whatever text was kept.
        case (.uri, .string(let text)): return .success(.uri(text))
        case (.decimal, .string(let text)), (.int16, .string(let text)), (.int32, .string(let text)), (.int64, .string(let text)):
            if type != .decimal { return .failure(ValueProblem("expected a number for \(English.withArticle(type.rawValue)) attribute, found the string \"\(text.prefix(40))\"")) }
            return ValueParser.parse(text, as: .decimal)
        case (.string, .string(let text)): return ValueParser.parse(text, as: .string)
        case (.string, .object(let members)), (.uri, .object(let members)):
            // Text whose bytes are not UTF-8, as `json(_:type:)` writes it.
            guard members.count == 1, members[0].0 == nonUTF8TextKey, case .string(let encoded) = members[0].1 else {
                return .failure(ValueProblem("expected a string, or {\"\(nonUTF8TextKey)\": \"…\"} for text whose bytes are not UTF-8, for \(English.withArticle(type.rawValue)) attribute, found an object"))
            }
            guard let bytes = Data(base64Encoded: encoded) else {
                return .failure(ValueProblem("\"\(nonUTF8TextKey)\" holds \"\(encoded.prefix(40))\", which is not base64 text"))
            }
            // Bytes that are UTF-8 after all are that string: one value has one form.
            let text = bytes.withUnsafeBytes { Value.text(fromStored: $0.bindMemory(to: UInt8.self)) }
            if case .string(let string) = text { return ValueParser.parse(string, as: type) }
            return .success(text)
        case (.bool, .bool(let flag)): return .success(.bool(flag))
        case (.date, .string(let text)), (.binary, .string(let text)), (.transformable, .string(let text)), (.uuid, .string(let text)):
            return ValueParser.parse(text, as: type)
        default:
            let expected: String
            switch type {
            case .int16, .int32, .int64: expected = "a whole number"
            case .double, .float: expected = "a number"
            case .decimal: expected = "a decimal string such as \"12.50\""
            case .string: expected = "a string"
            case .bool: expected = "true or false"
            case .date: expected = "an ISO 8601 date string"
            case .binary, .transformable: expected = "a base64 string"
            case .uuid: expected = "a UUID string"
            case .uri: expected = "a URI string"
            }
            return .failure(ValueProblem("expected \(expected) for \(English.withArticle(type.rawValue)) attribute, found \(json.kindName)"))
        }
    }

    /// The member naming an object's identity: `"id"`, or `"$id"` (`alternateIdentityKey`) for an
    /// entity with a property named `id` (Core Data allows one; WooCommerce's models have them).
    package static func identityKey(of entity: Entity?, in schema: Schema) -> String {
        guard let entity, schema.property(named: "id", in: entity) != nil else { return "id" }
        return alternateIdentityKey
    }

    /// The identity's member for an entity with a property named `id`, accepted for any entity.
    package static let alternateIdentityKey = "$id"

    /// The JSON form of a value of the attribute type.
    public static func json(_ value: Value, type: AttributeType, dateEpoch: Timestamp.Epoch = .unix) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let n): return .integer(n)
        // JSON has no infinite number: a store's infinities are written as strings.
        case .double(let d) where d.isInfinite: return .string(d < 0 ? "-Infinity" : "Infinity")
        case .double(let d): return type == .float ? .float(Float(d)) : .double(d)
        case .decimal(let decimal): return .string(decimal.description)
        case .string(let text): return .string(text)
        case .date(let date): return .string(ISO8601.format(date, exactIn: dateEpoch))
        case .binary(let data): return .string(data.base64EncodedString())
        case .uuid(let uuid): return .string(uuid.uuidString.lowercased())
        case .uri(let text): return .string(text)
        case .nonUTF8Text(let bytes): return .object([(nonUTF8TextKey, .string(bytes.base64EncodedString()))])
        }
    }

    /// The one member of the object a data file writes text as when its bytes are not UTF-8,
    /// which a JSON string cannot hold: `{"base64": "wyj/"}`.
    package static let nonUTF8TextKey = "base64"


    /// The JSON of one object: `id`, then attributes and relationships in schema order
    /// (inherited ones first). Every stored property appears, null or empty when unset.
    /// Dates are written to read back exactly in `dateEpoch`'s count (the store's).
    public static func json(_ object: ObjectData, schema: Schema, dateEpoch: Timestamp.Epoch = .unix) -> JSONValue {
        let entity = schema.entity(named: object.entity)
        var pairs: [(String, JSONValue)] = [(identityKey(of: entity, in: schema), .string(object.id))]
        guard let entity else { return .object(pairs) }
        for attribute in schema.allAttributes(of: entity) where !attribute.isTransient {
            pairs.append((attribute.name, json(object.attributes[attribute.name] ?? .null, type: attribute.type, dateEpoch: dateEpoch)))
        }
        for relationship in schema.allRelationships(of: entity) where !relationship.isTransient {
            var ids = object.relationships[relationship.name] ?? []
            // A to-many is a set (ordered or not): a member a join table lists twice is one member,
            // as a migration carries it, and `load` refuses a list naming one twice.
            if relationship.isToMany {
                var seen = Set<ExactText>()
                ids = ids.filter { seen.insert(ExactText($0)).inserted }
            }
            pairs.append((relationship.name, relationship.isToMany ? .array(ids.map(JSONValue.string)) : (ids.first.map(JSONValue.string) ?? .null)))
        }
        return .object(pairs)
    }

    /// What `load` refuses of a dump that the store's own rules do not see (`Store.violations()`
    /// says the rest): two objects with one id (a dropped unique index), an empty id, and a
    /// required relationship written empty (its key named no object). A dump writes both sides
    /// of a relationship from one key, so each side alone tells. One pass, in `load`'s words (a
    /// full reading of the dump back took twice as long as the dump itself).
    package static func loadRefusal(ofDump json: JSONValue, schema: Schema) -> DataValidationError? {
        guard case .object(let groups)? = json["objects"] else { return nil }
        var refusal = DumpRefusal(schema: schema)
        for (entityName, list) in groups {
            guard case .array(let items) = list else { continue }
            for item in items { refusal.check(item, of: entityName) }
        }
        return refusal.found
    }

    /// What `load` refuses of a dump, found object by object as the dump is written
    /// (`loadRefusal(ofDump:schema:)` over a whole one).
    struct DumpRefusal {
        let schema: Schema
        private var problems = ProblemList()
        /// The entity of each id met so far.
        private var owners: [ExactText: String] = [:]
        /// Each entity's required relationships.
        private var required: [String: [Relationship]] = [:]
        /// Each entity's identity member.
        private var keys: [String: String] = [:]

        init(schema: Schema) { self.schema = schema }

        /// Checks one object of the dump, of `entityName`.
        mutating func check(_ item: JSONValue, of entityName: String) {
            // The identity's member, as `load` reads it ("$id" beside a property named "id").
            guard let entity = schema.entity(named: entityName) else { return }
            let key = keys[entityName] ?? identityKey(of: entity, in: schema)
            keys[entityName] = key
            guard case .string(let id)? = item[key] else { return }
            if id.isEmpty {
                problems.add(entityName, nil, key, ObjectGraphResolver.emptyIDMessage)
            } else if let first = owners[ExactText(id)] {
                problems.add(entityName, id, key, ObjectGraphResolver.idTakenMessage(id, by: first))
            } else {
                owners[ExactText(id)] = entityName
            }
            let rules = required[entityName] ?? schema.allRelationships(of: entity).filter { !$0.isTransient && RelationshipCountRule.rules(of: $0).contains(.required) }
            required[entityName] = rules
            for relationship in rules {
                let empty: Bool
                switch item[relationship.name] {
                case .array(let members)?: empty = members.isEmpty
                case .string?: empty = false
                default: empty = true
                }
                if empty { problems.add(entityName, id, relationship.name, ObjectGraphResolver.emptyRequiredMessage(relationship)) }
            }
        }

        /// What was found, or nil.
        var found: DataValidationError? { problems.total == 0 ? nil : DataValidationError(problems: problems.problems, total: problems.total) }
    }

    /// Writes a whole store as a data file's text, piece by piece: `write` receives pieces that
    /// together are `dump(store).serialized(pretty: true)`, each object read and written on its
    /// own, so a store of millions of objects is never held whole (as `dump(_:)`'s value is).
    /// Returns what `load` would refuse of it (`loadRefusal(ofDump:schema:)`), found on the way.
    package static func writeDump(_ store: Store, _ write: (String) throws -> Void) throws -> DataValidationError? {
        try store.checkEveryRowIsRecognised()
        var refusal = DumpRefusal(schema: store.schema)
        try write("{\n")
        for (key, value) in dumpHeader(store) { try write("  " + JSONValue.string(key).serialized() + ": " + value.serialized() + ",\n") }
        try write("  \"objects\": ")
        var entitiesWritten = 0
        for entity in store.schema.entities {
            var objectsWritten = 0
            try store.forEachObject(ofExactEntity: entity.name) { object in
                let item = json(object, schema: store.schema, dateEpoch: store.strategy.dateEpoch)
                refusal.check(item, of: entity.name)
                if objectsWritten == 0 {
                    try write((entitiesWritten == 0 ? "{\n" : ",\n") + "    " + JSONValue.string(entity.name).serialized() + ": [\n")
                    entitiesWritten += 1
                } else {
                    try write(",\n")
                }
                try write("      ")
                try item.writePretty(indent: 3, write)
                objectsWritten += 1
            }
            if objectsWritten > 0 { try write("\n    ]") }
        }
        try write(entitiesWritten == 0 ? "{}\n}" : "\n  }\n}")
        return refusal.found
    }

    /// Writes a whole store as a data file, entities in schema order, objects in the order they
    /// were stored. Entities without objects are left out.
    public static func dump(_ store: Store) throws -> JSONValue {
        try store.checkEveryRowIsRecognised()
        var groups: [(String, JSONValue)] = []
        for entity in store.schema.entities {
            var items: [JSONValue] = []
            try store.forEachObject(ofExactEntity: entity.name) { items.append(json($0, schema: store.schema, dateEpoch: store.strategy.dateEpoch)) }
            if !items.isEmpty { groups.append((entity.name, .array(items))) }
        }
        return .object(dumpHeader(store) + [("objects", .object(groups))])
    }

    /// What a dump says before its objects: the version, and where values may be in one
    /// layout's form (attributes that allow external storage), whose.
    private static func dumpHeader(_ store: Store) -> [(String, JSONValue)] {
        [("version", .string(store.schema.version))]
            + (CoreDataExternalValue.anyMarked(in: store.schema, format: .coreData) ? [(layoutKey, .string(store.format.layoutName))] : [])
    }
}
