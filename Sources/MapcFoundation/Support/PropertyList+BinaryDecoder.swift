import Foundation

extension PropertyList {
    /// Decodes the objects of a binary property list that `binaryProblem` accepted, each once.
    struct BinaryDecoder {
        let bytes: [UInt8]
        let offsetSize: Int, referenceSize: Int, count: Int, top: Int, table: Int, trailer: Int

        init?(bytes: [UInt8]) {
            guard bytes.count >= 40 else { return nil }
            self.bytes = bytes
            trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            func word(_ position: Int) -> Int? {
                var value: UInt64 = 0
                for byte in bytes[position..<position + 8] { value = value << 8 | UInt64(byte) }
                return value <= UInt64(Int.max) ? Int(value) : nil
            }
            guard let count = word(trailer + 8), let top = word(trailer + 16), let table = word(trailer + 24),
                  (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count <= bytes.count, top < count,
                  table <= trailer, count <= (trailer - table) / offsetSize else { return nil }
            (self.count, self.top, self.table) = (count, top, table)
        }

        /// A value decoded as near as Foundation's types come, not as it is: where (the keys
        /// and indexes leading to it) and what it is.
        struct Inexact { var path: [String]; var what: String }

        /// The top object, and the first value in it that Foundation's types could not hold as it is.
        func decode(rewritten: Set<String> = []) -> (Any, inexact: Inexact?)? {
            var decoded = [Any?](repeating: nil, count: count)
            var inexact: [Int: Inexact] = [:]
            guard let value = object(top, &decoded, &inexact, depth: 0) else { return nil }
            // The top dictionary's first inexact value under a key not rewritten.
            var found = inexact[top]
            if let path = found?.path.first, rewritten.contains(path), let dictionary = value as? [String: Any] {
                found = nil
                for key in dictionary.keys.sorted() where !rewritten.contains(key) {
                    if let inside = firstInexact(under: key, &decoded, &inexact) { found = inside; break }
                }
            }
            return (value, found)
        }

        /// The inexact value under one key of the top dictionary, found again through its reference.
        private func firstInexact(under key: String, _ decoded: inout [Any?], _ inexact: inout [Int: Inexact]) -> Inexact? {
            guard let position = integer(at: table + top * offsetSize, size: offsetSize), position < UInt64(trailer),
                  let (length, start) = length(at: Int(position)) else { return nil }
            for index in 0..<length {
                guard let keyReference = integer(at: start + index * referenceSize, size: referenceSize),
                      let valueReference = integer(at: start + (length + index) * referenceSize, size: referenceSize),
                      object(Int(keyReference), &decoded, &inexact, depth: 1) as? String == key else { continue }
                if let inside = inexact[Int(valueReference)] { return Inexact(path: [key] + inside.path, what: inside.what) }
            }
            return nil
        }

        private func integer(at position: Int, size: Int) -> UInt64? {
            guard size >= 1, size <= 8, position >= 0, position + size <= trailer else { return nil }
            var value: UInt64 = 0
            for byte in bytes[position..<position + size] { value = value << 8 | UInt64(byte) }
            return value
        }

        /// The length in an object's marker, or in the integer that follows it; and where its contents start.
        private func length(at offset: Int) -> (Int, start: Int)? {
            let nibble = Int(bytes[offset] & 0x0F)
            guard nibble == 0x0F else { return (nibble, offset + 1) }
            guard offset + 1 < trailer, bytes[offset + 1] >> 4 == 0x1 else { return nil }
            let size = 1 << Int(bytes[offset + 1] & 0x0F)
            guard let value = integer(at: offset + 2, size: size), value <= UInt64(trailer) else { return nil }
            return (Int(value), offset + 2 + size)
        }

        private func object(_ reference: Int, _ decoded: inout [Any?], _ inexact: inout [Int: Inexact], depth: Int) -> Any? {
            guard reference >= 0, reference < count, depth <= PropertyList.maxDepth else { return nil }
            if let done = decoded[reference] { return done }
            guard let position = integer(at: table + reference * offsetSize, size: offsetSize), position < UInt64(trailer) else { return nil }
            let offset = Int(position)
            let marker = bytes[offset]
            var result: Any?
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: result = NSNumber(value: false)
                case 0x09: result = NSNumber(value: true)
                default: return nil
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                if size == 16 {
                    // 128-bit integers hold 64-bit values in their low half: unsigned ones past
                    // Int64.max (Foundation writes a UInt64 so) when the high half is 0.
                    guard let high = integer(at: offset + 1, size: 8), let low = integer(at: offset + 9, size: 8) else { return nil }
                    result = high == 0 && low > UInt64(Int64.max) ? NSNumber(value: low) : NSNumber(value: Int64(bitPattern: low))
                    // Any other high half (but a negative Int64's sign) is a number no NSNumber holds.
                    if !(high == 0 || (high == UInt64.max && low > UInt64(Int64.max))) {
                        let whole = Int128(bitPattern: UInt128(high) << 64 | UInt128(low))
                        inexact[reference] = Inexact(path: [], what: "an integer of 128 bits (\(whole))")
                    }
                } else {
                    guard let value = integer(at: offset + 1, size: size) else { return nil }
                    result = size == 8 ? NSNumber(value: Int64(bitPattern: value)) : NSNumber(value: Int64(value))
                }
            case 0x2:
                let size = 1 << Int(marker & 0x0F)
                guard let bits = integer(at: offset + 1, size: size) else { return nil }
                if size == 4 { result = NSNumber(value: Float(bitPattern: UInt32(truncatingIfNeeded: bits))) }
                else if size == 8 { result = NSNumber(value: Double(bitPattern: bits)) }
                else { return nil }
            case 0x3:
                guard marker == 0x33, let bits = integer(at: offset + 1, size: 8) else { return nil }
                result = Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
            case 0x4, 0x5, 0x6, 0x7:
                guard let (length, start) = length(at: offset) else { return nil }
                let size = marker >> 4 == 0x6 ? length.multipliedReportingOverflow(by: 2).partialValue : length
                guard size >= 0, start + size <= trailer else { return nil }
                let slice = bytes[start..<start + size]
                switch marker >> 4 {
                case 0x4: result = Data(slice)
                case 0x5:
                    result = String(decoding: slice, as: Unicode.ASCII.self)
                    if let byte = slice.first(where: { $0 > 0x7F }) {
                        inexact[reference] = Inexact(path: [], what: "ASCII text with a byte past 127 (0x\(String(byte, radix: 16, uppercase: true)))")
                    }
                case 0x7: result = String(decoding: slice, as: UTF8.self)
                default:
                    let units = stride(from: start, to: start + size, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
                    result = String(decoding: units, as: UTF16.self)
                    var decoder = UTF16(), iterator = units.makeIterator()
                    decoding: while true {
                        switch decoder.decode(&iterator) {
                        case .scalarValue: continue
                        case .emptyInput: break decoding
                        case .error:
                            inexact[reference] = Inexact(path: [], what: "UTF-16 text with a lone surrogate")
                            break decoding
                        }
                    }
                }
            case 0x8:
                guard let value = integer(at: offset + 1, size: Int(marker & 0x0F) + 1) else { return nil }
                result = ["CF$UID": Int(truncatingIfNeeded: value)] as [String: Any]
                inexact[reference] = Inexact(path: [], what: "a keyed archive's reference (UID), which would be written back as a dictionary")
            case 0xA, 0xB, 0xC, 0xD:
                guard let (length, start) = length(at: offset) else { return nil }
                let isDictionary = marker >> 4 == 0xD
                let references = isDictionary ? length.multipliedReportingOverflow(by: 2).partialValue : length
                guard references >= 0, references <= (trailer - start) / referenceSize else { return nil }
                var items: [Any] = []
                items.reserveCapacity(references)
                for index in 0..<references {
                    guard let child = integer(at: start + index * referenceSize, size: referenceSize),
                          let value = object(Int(child), &decoded, &inexact, depth: depth + 1) else { return nil }
                    items.append(value)
                    // The first inexact value inside, found again through its keys or index.
                    if inexact[reference] == nil, let inside = inexact[Int(child)] {
                        let step = isDictionary ? (index >= length ? (items[index - length] as? String ?? "?") : "a key") : "[\(index)]"
                        inexact[reference] = Inexact(path: [step] + inside.path, what: inside.what)
                    }
                }
                if marker >> 4 == 0xB || marker >> 4 == 0xC, inexact[reference] == nil {
                    inexact[reference] = Inexact(path: [], what: "a set, which would be written back as an array")
                }
                if isDictionary {
                    var dictionary: [String: Any] = [:]
                    for index in 0..<length {
                        guard let key = items[index] as? String else { return nil }
                        // The dictionary's own problem before one inside a value (which may be
                        // under a key the caller replaces: the key twice would then go unsaid).
                        if dictionary[key] != nil {
                            inexact[reference] = Inexact(path: [], what: "the key '\(key)' twice, of which one value would be written back")
                        }
                        dictionary[key] = items[length + index]
                    }
                    result = dictionary
                } else {
                    result = items
                }
            default:
                return nil
            }
            decoded[reference] = result
            return result
        }
    }
}
