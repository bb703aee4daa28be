/// Bytes written as hexadecimal digits: one definition for digests, SQL blob literals and messages.
///
/// `String(format: "%02x")` per byte goes through Foundation's format machinery and was half the
/// time of planning a 117-version chain (every entity and property hash is printed as hex); this
/// writes the digits directly.
package enum Hex {
    private static let lowerDigits = Array("0123456789abcdef".utf8)
    private static let upperDigits = Array("0123456789ABCDEF".utf8)

    /// The bytes as lowercase digits, two per byte, nothing between them (`"c328ff"`).
    package static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        digits(bytes, lowerDigits, separator: nil)
    }

    /// The bytes as uppercase digits, two per byte, with an optional separator between bytes
    /// (`"C3 28 FF"`).
    package static func uppercase<Bytes: Sequence>(_ bytes: Bytes, separator: UInt8? = nil) -> String where Bytes.Element == UInt8 {
        digits(bytes, upperDigits, separator: separator)
    }

    private static func digits<Bytes: Sequence>(_ bytes: Bytes, _ table: [UInt8], separator: UInt8?) -> String where Bytes.Element == UInt8 {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(bytes.underestimatedCount * 3)
        for byte in bytes {
            if let separator, !utf8.isEmpty { utf8.append(separator) }
            utf8.append(table[Int(byte >> 4)])
            utf8.append(table[Int(byte & 0x0F)])
        }
        return String(decoding: utf8, as: UTF8.self)
    }
}
