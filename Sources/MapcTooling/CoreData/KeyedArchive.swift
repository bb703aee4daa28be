import Foundation
import MapcFoundation

/// An `NSKeyedArchiver` archive read as data, never as objects: the property list is parsed by
/// Foundation's `PropertyListSerialization`, and objects are dictionaries, arrays and values
/// reached through the archive's references. No class named in the archive is ever instantiated,
/// so an archive naming unexpected classes is reported, not obeyed. (Foundation's own
/// `NSKeyedUnarchiver` on Linux stops the process on some malformed archives, and would need
/// classes mapc does not have, such as `NSExpression`.)
struct KeyedArchive {
    /// The most objects an archive may hold.
    static let maxObjects = 2_000_000

    let objects: [Any]
    /// The root object's reference.
    let root: Int
    /// What the archive is, for messages ("the value expression of Note.title").
    let what: String

    /// Reads archive data; throws `MapcError.input` saying what is wrong with it.
    init(data: Data, what: String) throws {
        self.what = what
        let plist: Any
        do { plist = try PropertyList.decode(data) } catch {
            throw MapcError.input("\(what) is not a property list mapc reads (\(error))")
        }
        guard let top = Self.dictionary(plist), let objects = top["$objects"] as? [Any], let entries = top["$top"].flatMap(Self.dictionary) else {
            throw MapcError.input("\(what) is a property list but not a keyed archive (no $objects and $top)")
        }
        guard objects.count <= Self.maxObjects else { throw MapcError.input("\(what) holds \(objects.count) objects; at most \(Self.maxObjects) are read") }
        guard let rootReference = entries["root"].flatMap(Self.reference), objects.indices.contains(rootReference) else {
            throw MapcError.input("\(what) has no root object")
        }
        // A reference past the objects would read as nil, the same as no value: a receiver or an
        // argument left out without a word. The archive is refused instead.
        func check(_ value: Any) throws {
            guard let number = Self.reference(value) else { return }
            guard objects.indices.contains(number) else {
                throw MapcError.input("\(what) refers to object \(number), past its \(objects.count) objects: the archive is damaged")
            }
        }
        for object in objects {
            if let fields = Self.dictionary(object) {
                for value in fields.values {
                    try check(value)
                    if let items = value as? [Any] { for item in items { try check(item) } }
                }
            } else if let items = object as? [Any] {
                for item in items { try check(item) }
            }
        }
        self.objects = objects
        self.root = rootReference
    }

    /// A property-list dictionary with string keys (Foundation on Linux gives `AnyHashable` keys).
    static func dictionary(_ value: Any) -> [String: Any]? {
        if let strings = value as? [String: Any] { return strings }
        guard let any = value as? [AnyHashable: Any] else { return nil }
        var result: [String: Any] = [:]
        for (key, item) in any { if let name = key.base as? String { result[name] = item } }
        return result
    }

    /// The object number a reference (`CF$UID`) holds.
    static func reference(_ value: Any) -> Int? {
        // Foundation on Linux gives references as instances of an internal class holding `value`;
        // Darwin's print as "<CFKeyedArchiverUID …>{value = N}".
        if let dictionary = dictionary(value), let number = dictionary["CF$UID"] as? Int { return number }
        let className = String(describing: type(of: value))
        guard className.contains("UID") else { return nil }
        for child in Mirror(reflecting: value).children where child.label == "value" {
            if let number = child.value as? UInt32 { return Int(number) }
            if let number = child.value as? UInt64 { return Int(number) }
            if let number = child.value as? Int { return number }
        }
        let text = String(describing: value)
        if let range = text.range(of: "value = ") {
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }
        return nil
    }

    /// A value with references followed: the object it names, nil for `$null` or a dangling one.
    func resolve(_ value: Any?) -> Any? {
        guard let value else { return nil }
        guard let number = Self.reference(value) else { return value }
        guard objects.indices.contains(number) else { return nil }
        let object = objects[number]
        if let text = object as? String, text == "$null" { return nil }
        return object
    }

    /// The root object.
    var rootObject: [String: Any]? { Self.dictionary(objects[root]) }

    /// An object's field, references followed.
    func field(_ object: [String: Any], _ key: String) -> Any? { resolve(object[key]) }

    /// An object's field as an archived object (a dictionary).
    func objectField(_ object: [String: Any], _ key: String) -> [String: Any]? { field(object, key).flatMap(Self.dictionary) }

    /// An object's field as a string.
    func stringField(_ object: [String: Any], _ key: String) -> String? { field(object, key) as? String }

    /// The class name an archived object records.
    func className(of object: [String: Any]) -> String? {
        guard let description = objectField(object, "$class") else { return nil }
        return description["$classname"] as? String
    }

    /// The elements of an archived `NSArray`/`NSSet` (`NS.objects`), references followed.
    func elements(of object: [String: Any]) -> [Any] {
        (object["NS.objects"] as? [Any] ?? []).compactMap { resolve($0) }
    }

    /// The entries of an archived `NSDictionary` (`NS.keys`, `NS.objects`), keys as strings.
    func entries(of object: [String: Any]) -> [(key: String, value: Any)] {
        let keys = object["NS.keys"] as? [Any] ?? [], values = object["NS.objects"] as? [Any] ?? []
        return zip(keys, values).compactMap { key, value in
            guard let name = resolve(key) as? String, let item = resolve(value) else { return nil }
            return (name, item)
        }
    }
}
