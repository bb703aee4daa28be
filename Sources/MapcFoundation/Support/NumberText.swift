/// Numbers as text: whether two texts name the same value, and whether a double keeps what a
/// text says. One rule for the JSON reader (which keeps a number's text when a double would
/// change it) and the expression checker (which warns where a literal loses digits).
package enum NumberText {
    /// Whether two numbers' texts (JSON's grammar, or Swift's description of a finite double)
    /// denote the same value: the same sign, significant digits and scale.
    package static func sameValue(_ a: String, _ b: String) -> Bool {
        guard let x = decimalParts(a), let y = decimalParts(b) else { return false }
        return x == y
    }

    /// A number's text as its sign, significant digits and the power of ten of the last digit
    /// ("-012.50" is (true, "125", -1); zero is (false, "", 0)); nil for text that is not a
    /// finite number or an exponent beyond nine digits.
    private static func decimalParts(_ text: String) -> (negative: Bool, digits: [UInt8], exponent: Int)? {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if bytes.first == UInt8(ascii: "-") { negative = true; bytes = bytes.dropFirst() }
        var digits: [UInt8] = [], exponent = 0, seenPoint = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") { seenPoint = true; continue }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            if digits.isEmpty && byte == UInt8(ascii: "0") { if seenPoint { exponent -= 1 }; continue }
            digits.append(byte)
            if seenPoint { exponent -= 1 }
        }
        if !bytes.isEmpty {
            bytes = bytes.dropFirst()
            var sign = 1
            if bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() } else if bytes.first == UInt8(ascii: "-") { sign = -1; bytes = bytes.dropFirst() }
            guard !bytes.isEmpty, bytes.count <= 9, let power = Int(String(decoding: bytes, as: UTF8.self)) else { return nil }
            exponent += sign * power
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast(); exponent += 1 }
        return digits.isEmpty ? (false, [], 0) : (negative, digits, exponent)
    }

    /// The significant digits of a number's text, leading and trailing zeros not counted, up to
    /// its exponent (`0.0150` has 2, `15`; `1e50` has 1; `1.500` has 2; `1000.5` has 5).
    package static func significantDigits(_ text: String) -> Int {
        var count = 0, zeros = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { continue }
            if byte == UInt8(ascii: "0") {
                // A zero counts once a later digit that is not one shows it was not trailing.
                if count > 0 { zeros += 1 }
            } else {
                count += zeros + 1
                zeros = 0
            }
        }
        return count
    }

    /// Whether the nearest double to a number's text (JSON's grammar) is the number written:
    /// `0.1` and `2.5e3` are, `1234567890.123456789` and `1e400` are not.
    package static func isKeptByDouble(_ text: String) -> Bool {
        guard let nearest = Double(text), nearest.isFinite else { return false }
        return sameValue(text, "\(nearest)")
    }
}
