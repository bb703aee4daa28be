import Foundation

/// Property lists (Core Data's store metadata, Xcode's version files, keyed archives), decoded
/// within bounds.
///
/// A binary property list refers to its objects by number, and one object may be referred to
/// many times: 12 KB of arrays, each holding a thousand references to the next, stand for 1000^12
/// objects, and Foundation's `PropertyListSerialization` builds every one of them. One pass over
/// the objects' table counts what each would expand to (shared objects counted once per
/// reference, without building anything) and refuses a list beyond `maxExpandedObjects`, or whose
/// references loop or nest deeper than `maxDepth`. A binary list is then decoded here, each
/// object once: Foundation on Linux copies a data value into Swift byte by byte (a large value in
/// a store's metadata took seconds to read: docs/performance.md). Other formats (XML, which Xcode writes) go to Foundation.
///
/// Values come as Foundation gives them: `[String: Any]`, `[Any]`, `String`, `Data`, `Date`,
/// numbers and booleans as `NSNumber`, and a keyed archive's references as `["CF$UID": n]`.
package enum PropertyList {
    /// The most objects a property list may expand to by default: an Xcode model's archive holds
    /// a few thousand; Foundation needs about 100 bytes for each.
    package static let maxExpandedObjects = 1_000_000
    /// The deepest nesting of arrays and dictionaries accepted.
    package static let maxDepth = 512

    /// A property list that cannot or may not be decoded, with the reason.
    package struct Problem: Error, CustomStringConvertible {
        package var description: String
        /// Whether the data is no property list at all (damaged), rather than one past a limit.
        package var isMalformed = false
        /// Whether the list is whole, but holds a value that would not be written back as it is
        /// (refused by an `exact` decode).
        package var isInexact = false
    }

    /// A property list's boolean as a Bool: a Swift `Bool`, or an `NSNumber` made from one (the
    /// binary decoder's `true`, Foundation's), told from a number by its kind; nil for anything
    /// else (an `NSNumber` of 1 is a number, not `true`, though it casts to one).
    package static func boolean(_ value: Any) -> Bool? {
        if let flag = value as? Bool, type(of: value) == Bool.self { return flag }
        // An NSNumber of any class (`__NSCFBoolean`, a decoder's `true`, is not an `NSNumber.Type`
        // on Linux), never a Swift number bridged to one.
        if let number = value as? NSNumber, !(value is any BinaryInteger), !(value is any BinaryFloatingPoint),
           ["c", "B"].contains(String(cString: number.objCType)) { return number.boolValue }
        return nil
    }

    /// A property list's number, as its kind says it was written.
    package enum Number: Equatable, Sendable {
        case integer(Int64)
        case double(Double)
    }

    /// A property list's number told by its kind, not by what it casts to: a real that is whole
    /// (`100.0`) is a double, though an `NSNumber` of it casts to `Int` (which made
    /// `$source.cents / 100.0` an integer division). Nil for a boolean and anything not a number;
    /// an unsigned integer past `Int64.max` is a double.
    package static func number(_ value: Any) -> Number? {
        if boolean(value) != nil { return nil }
        if let number = value as? NSNumber, !(value is any BinaryInteger), !(value is any BinaryFloatingPoint) {
            switch String(cString: number.objCType) {
            case "f", "d": return .double(number.doubleValue)
            case "Q" where number.uint64Value > UInt64(Int64.max): return .double(number.doubleValue)
            default: return .integer(number.int64Value)
            }
        }
        switch value {
        case let n as Int: return .integer(Int64(n))
        case let n as Int64: return .integer(n)
        case let d as Double: return .double(d)
        case let f as Float: return .double(Double(f))
        default: return nil
        }
    }

    /// Decodes property-list data (binary, XML or OpenStep), or throws `Problem`.
    /// `maxExpandedObjects` may be lowered for a list that should be small, with
    /// `perObject`: then a list expanding to more than that many objects is refused only if it
    /// also expands to more than `perObject` times the objects it holds (many objects are a
    /// large value, which costs what its bytes cost; few objects standing for many are sharing).
    ///
    /// `exact` refuses a binary list holding a value Foundation's types cannot hold as it is, so
    /// that writing the list back would change it (an integer of 128 bits, text with a lone
    /// surrogate or, marked ASCII, a byte past 127): what is kept for someone else (a store's
    /// metadata, which an app wrote) is kept exactly or not rewritten. Without it, such a value
    /// is decoded as near as Foundation's types come (U+FFFD, the low 64 bits).
    /// `rewritten`: top-level keys whose values the caller replaces, so that theirs need not be exact.
    package static func decode(_ data: Data, maxExpandedObjects: Int = maxExpandedObjects, perObject: Int? = nil, exact: Bool = false,
                               rewritten: Set<String> = []) throws -> Any {
        if let problem = binaryProblem(data, maxExpandedObjects: maxExpandedObjects, perObject: perObject) { throw Problem(description: problem) }
        if data.starts(with: Array("bplist0".utf8)) {
            guard let (value, inexact) = BinaryDecoder(bytes: [UInt8](data))?.decode(rewritten: rewritten) else {
                throw Problem(description: "the binary property list is malformed", isMalformed: true)
            }
            if exact, let inexact {
                let place = inexact.path.isEmpty ? "the property list" : "'\(inexact.path.joined(separator: "."))'"
                throw Problem(description: "\(place) holds \(inexact.what), which cannot be written back as it is", isInexact: true)
            }
            return value
        }
        if let depth = xmlNesting(data), depth > maxDepth { throw Problem(description: "it nests more than \(maxDepth) levels deep") }
        do {
            return try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            // Foundation's words ("The operation could not be completed. The data is not in the
            // correct format.") say nothing a reader can act on.
            throw Problem(description: "it is not a property list (neither binary, XML nor text)", isMalformed: true)
        }
    }

    /// How deep the arrays and dictionaries of an XML property list nest (Foundation's parser
    /// gives up past a depth with no word of why); nil for data that is not XML.
    static func xmlNesting(_ data: Data) -> Int? {
        guard data.prefix(64).firstIndex(of: UInt8(ascii: "<")) != nil else { return nil }
        var depth = 0, deepest = 0
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var index = 0
            func starts(_ text: String, at position: Int) -> Bool {
                let utf8 = Array(text.utf8)
                return position + utf8.count <= bytes.count && bytes[position..<position + utf8.count].elementsEqual(utf8)
            }
            /// Past the end of a comment or CDATA section (tags in it are text).
            func skip(to end: String, from position: Int) -> Int {
                var at = position
                while at < bytes.count, !starts(end, at: at) { at += 1 }
                return at + end.utf8.count - 1
            }
            while index + 1 < bytes.count {
                defer { index += 1 }
                guard bytes[index] == UInt8(ascii: "<") else { continue }
                if starts("<!--", at: index) { index = skip(to: "-->", from: index + 4); continue }
                if starts("<![CDATA[", at: index) { index = skip(to: "]]>", from: index + 9); continue }
                let closing = bytes[index + 1] == UInt8(ascii: "/")
                let name = index + (closing ? 2 : 1)
                func named(_ word: String) -> Bool {
                    let utf8 = Array(word.utf8)
                    guard name + utf8.count < bytes.count, bytes[name..<name + utf8.count].elementsEqual(utf8) else { return false }
                    let after = bytes[name + utf8.count]
                    return after == UInt8(ascii: ">") || after == UInt8(ascii: " ") || after == UInt8(ascii: "/")
                }
                guard named("array") || named("dict") else { continue }
                // `<array/>` opens nothing.
                var end = name
                while end < bytes.count, bytes[end] != UInt8(ascii: ">") { end += 1 }
                if closing { depth -= 1 } else if bytes[end - 1] != UInt8(ascii: "/") { depth += 1; deepest = max(deepest, depth) }
            }
        }
        return deepest
    }

    /// Why a binary property list is refused before decoding, or nil (also for data that is not
    /// one, or that Foundation will refuse on its own).
    static func binaryProblem(_ data: Data, maxExpandedObjects lowered: Int = maxExpandedObjects, perObject: Int? = nil) -> String? {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist0".utf8)) else { return nil }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
        func integer(at position: Int, size: Int) -> Int? {
            guard size >= 1, size <= 8, position >= 0, position + size <= bytes.count else { return nil }
            var value: UInt64 = 0
            for byte in bytes[position..<position + size] { value = value << 8 | UInt64(byte) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        guard let count = integer(at: trailer + 8, size: 8), let top = integer(at: trailer + 16, size: 8), let table = integer(at: trailer + 24, size: 8),
              count > 0, count <= bytes.count, top < count,
              table + count * offsetSize <= trailer else { return nil }
        /// The objects an array, set or dictionary refers to; empty for any other object.
        func children(of object: Int) -> [Int]? {
            guard let offset = integer(at: table + object * offsetSize, size: offsetSize), offset < trailer else { return nil }
            let marker = bytes[offset]
            let kind = marker >> 4
            guard kind == 0xA || kind == 0xC || kind == 0xD else { return [] }
            var length = Int(marker & 0x0F), start = offset + 1
            if length == 0x0F {
                guard start < trailer, bytes[start] >> 4 == 0x1 else { return nil }
                let size = 1 << Int(bytes[start] & 0x0F)
                guard let extended = integer(at: start + 1, size: size) else { return nil }
                length = extended
                start += 1 + size
            }
            let references = kind == 0xD ? length.multipliedReportingOverflow(by: 2).partialValue : length
            guard references >= 0, references <= (trailer - start) / max(referenceSize, 1) else { return nil }
            var result: [Int] = []
            result.reserveCapacity(references)
            for index in 0..<references {
                guard let reference = integer(at: start + index * referenceSize, size: referenceSize), reference < count else { return nil }
                result.append(reference)
            }
            return result
        }
        let maxExpandedObjects = min(Self.maxExpandedObjects, max(lowered, perObject.map { count.multipliedReportingOverflow(by: $0).partialValue } ?? 0))
        // Depth-first from the top object, without recursion: each object's expanded size once.
        var expanded = [Int](repeating: -1, count: count)
        var onPath = [Bool](repeating: false, count: count)
        var stack: [(object: Int, children: [Int], next: Int, size: Int)] = []
        guard let first = children(of: top) else { return nil }
        stack.append((top, first, 0, 1))
        onPath[top] = true
        while !stack.isEmpty {
            let depth = stack.count
            let frame = stack[depth - 1]
            if frame.next == frame.children.count {
                stack.removeLast()
                onPath[frame.object] = false
                expanded[frame.object] = frame.size
                if !stack.isEmpty { stack[depth - 2].size = min(stack[depth - 2].size + frame.size, maxExpandedObjects + 1) }
                if frame.size > maxExpandedObjects {
                    // Many objects of its own, or a few referred to again and again.
                    return count > maxExpandedObjects / 2 ? "it holds more than \(maxExpandedObjects) objects, more than mapc reads in one property list"
                        : "it expands to more than \(maxExpandedObjects) objects (its objects are referred to again and again); it is not one Core Data or Xcode writes"
                }
                continue
            }
            let child = frame.children[frame.next]
            stack[depth - 1].next += 1
            if expanded[child] >= 0 {
                stack[depth - 1].size = min(frame.size + expanded[child], maxExpandedObjects + 1)
                continue
            }
            if onPath[child] { return "its objects refer to themselves in a loop" }
            guard depth < maxDepth else { return "it nests more than \(maxDepth) levels deep" }
            guard let grandchildren = children(of: child) else { return nil }
            onPath[child] = true
            stack.append((child, grandchildren, 0, 1))
        }
        return nil
    }

    /// A property list as binary `bplist00` data: dictionaries (with string keys, written in key
    /// order), arrays, strings, data, dates, booleans and numbers. Written here rather than by
    /// Foundation, which on Linux copies a data value byte by byte (docs/performance.md); nil for
    /// a value of any other kind.
    package static func binaryData(_ value: Any) -> Data? {
        var objects: [[UInt8]] = []
        func fixed(_ marker: UInt8, _ bits: UInt64, bytes count: Int) -> [UInt8] {
            [marker] + (0..<count).reversed().map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) }
        }
        func integer(_ n: Int64) -> [UInt8] {
            switch n {
            case 0...0xFF: return fixed(0x10, UInt64(n), bytes: 1)
            case 0...0xFFFF: return fixed(0x11, UInt64(n), bytes: 2)
            case 0...0xFFFF_FFFF: return fixed(0x12, UInt64(n), bytes: 4)
            default: return fixed(0x13, UInt64(bitPattern: n), bytes: 8)
            }
        }
        func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
            count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0x0F] + integer(Int64(count))
        }
        /// Adds an object with its children (written as placeholders until every object is
        /// numbered); returns its number.
        var references: [Int: [Int]] = [:]
        func add(_ value: Any) -> Int? {
            let index = objects.count
            objects.append([])
            var bytes: [UInt8]
            switch value {
            case _ where PropertyList.boolean(value) != nil: bytes = [PropertyList.boolean(value) == true ? 0x09 : 0x08]
            // An NSNumber (as read back from a store's metadata) keeps its kind: on Linux it also
            // casts to Int, which made true 1 and 2.0 the integer 2.
            case let number as NSNumber where type(of: value) is NSNumber.Type:
                switch String(cString: number.objCType) {
                case "f": bytes = fixed(0x22, UInt64(number.floatValue.bitPattern), bytes: 4)
                case "d": bytes = fixed(0x23, number.doubleValue.bitPattern, bytes: 8)
                case "Q" where number.uint64Value > UInt64(Int64.max): bytes = fixed(0x14, 0, bytes: 8) + fixed(0, number.uint64Value, bytes: 8).dropFirst()
                default: bytes = integer(number.int64Value)
                }
            case let n as Int: bytes = integer(Int64(n))
            case let n as Int64: bytes = integer(n)
            case let d as Double: bytes = fixed(0x23, d.bitPattern, bytes: 8)
            case let date as Date: bytes = fixed(0x33, date.timeIntervalSinceReferenceDate.bitPattern, bytes: 8)
            case let data as Data: bytes = header(0x4, data.count) + data
            case let text as String:
                if text.utf8.allSatisfy({ $0 < 0x80 }) {
                    bytes = header(0x5, text.utf8.count) + Array(text.utf8)
                } else {
                    let units = Array(text.utf16)
                    bytes = header(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                }
            case let dictionary as [String: Any]:
                let keys = dictionary.keys.sorted()
                var children: [Int] = []
                for key in keys { guard let child = add(key) else { return nil }; children.append(child) }
                for key in keys { guard let value = dictionary[key], let child = add(value) else { return nil }; children.append(child) }
                references[index] = children
                bytes = header(0xD, keys.count)
            case let array as [Any]:
                var children: [Int] = []
                for item in array { guard let child = add(item) else { return nil }; children.append(child) }
                references[index] = children
                bytes = header(0xA, array.count)
            default:
                return nil
            }
            objects[index] = bytes
            return index
        }
        guard add(value) != nil else { return nil }
        let referenceSize = objects.count <= 0xFF ? 1 : (objects.count <= 0xFFFF ? 2 : 4)
        var data = Data("bplist00".utf8)
        var offsets: [Int] = []
        for (index, bytes) in objects.enumerated() {
            offsets.append(data.count)
            data.append(contentsOf: bytes)
            for child in references[index] ?? [] {
                data.append(contentsOf: (0..<referenceSize).reversed().map { UInt8(truncatingIfNeeded: child >> (8 * $0)) })
            }
        }
        let table = data.count
        let offsetSize = table <= 0xFF ? 1 : (table <= 0xFFFF ? 2 : (table <= 0xFFFF_FFFF ? 4 : 8))
        for offset in offsets { data.append(contentsOf: (0..<offsetSize).reversed().map { UInt8(truncatingIfNeeded: offset >> (8 * $0)) }) }
        data.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)])
        for value in [objects.count, 0, table] { data.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }) }
        return data
    }
}
