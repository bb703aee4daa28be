import Foundation

/// Small helpers that keep messages grammatical: "an Author object", "1 object", "2 objects".
package enum English {
    /// "a" or "an" for a word, by its first letter (vowel sound approximated by a vowel letter),
    /// except words read with a "you" sound first: "a uuid", "a uri", "a unique".
    package static func article(_ word: String) -> String {
        let lower = word.lowercased()
        guard let first = lower.first else { return "a" }
        if ["uu", "uri", "url", "uni", "use", "usu"].contains(where: lower.hasPrefix) { return "a" }
        return "aeiou".contains(first) ? "an" : "a"
    }

    /// A name as one word of a shell command, for the commands messages suggest: as it is when
    /// it holds only letters, digits and `._/:@%+=,-`, otherwise in single quotes (`'Journal 2'`,
    /// a quote inside as `'\''`), so that the command can be pasted as it is shown.
    package static func shellWord(_ name: String) -> String {
        let plain = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._/:@%+=,-".unicodeScalars.contains($0)) }
        return plain ? name : "'" + name.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// An option and its value in a suggested command: `--from 'Edge 1'`, or `--from=-a` for a value
    /// the argument parser would otherwise take for an option.
    package static func option(_ flag: String, _ value: String) -> String {
        value.hasPrefix("-") ? "\(flag)=\(shellWord(value))" : "\(flag) \(shellWord(value))"
    }

    /// Operands of a suggested command, after `--` when one begins with `-` (`mapc diff -- -a -b`).
    package static func operands(_ values: [String]) -> String {
        (values.contains { $0.hasPrefix("-") } ? "-- " : "") + values.map(shellWord).joined(separator: " ")
    }

    /// The word with its article: "an Author", "a Note".
    package static func withArticle(_ word: String) -> String { "\(article(word)) \(word)" }

    /// A count and a noun, the noun plural unless the count is one: "1 object", "3 entities".
    package static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : (plural ?? Self.plural(singular)))"
    }

    /// A value's text cut for a message, when longer than `limit` characters: its first three
    /// quarters of that, and how long it is (a message naming a 5,000-character value once per
    /// object is unreadable).
    package static func abbreviated(_ text: String, limit: Int = 160) -> String {
        guard text.utf8.count > limit, text.count > limit else { return text }
        return String(text.prefix(limit * 3 / 4)) + "… (\(text.count) characters)"
    }

    /// A size in bytes as people read it: "512 bytes", "1.2 MB" (powers of 1,000, as Finder shows them).
    package static func size(_ bytes: Int64) -> String {
        if bytes < 1_000 { return count(Int(bytes), "byte") }
        var value = Double(bytes) / 1_000
        for unit in ["kB", "MB", "GB", "TB"] {
            if value < 999.95 || unit == "TB" { return String(format: value < 10 ? "%.1f" : "%.0f", value) + " " + unit }
            value /= 1_000
        }
        return "\(bytes) bytes"
    }

    /// The plural of a regular English noun: entity → entities, step → steps, match → matches.
    package static func plural(_ singular: String) -> String {
        if singular.hasSuffix("y"), let beforeY = singular.dropLast().last, !"aeiou".contains(beforeY) { return singular.dropLast() + "ies" }
        if singular.hasSuffix("s") || singular.hasSuffix("x") || singular.hasSuffix("ch") || singular.hasSuffix("sh") { return singular + "es" }
        return singular + "s"
    }
}
