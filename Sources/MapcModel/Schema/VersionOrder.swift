import Foundation
import MapcFoundation

/// The order of a model's versions, oldest first: what decides which way a migration goes.
///
/// The order is declared, not guessed: a schemas folder says it in `versions.yaml`
///
/// ```yaml
/// # Oldest first; the last is the current version.
/// versions: [v1, v2, v3, v4]
/// ```
///
/// (the role Xcode's `.xccurrentversion` and Flyway's version numbers play). Without that file, the
/// order is read from the version names only when they give exactly one answer: every name has the
/// same shape and differs only in its numbers (`v1`, `v2`, `v10`; `1.9`, `1.10`; `books_5` … `books_18`),
/// optionally with one unnumbered first version whose name starts the others (`Moody`, `Moody 2`, …).
/// Anything else (`initial`, `tags`, `subtitle`) has no order until it is declared.
package struct VersionOrder: Sendable, Equatable {
    /// Where an order came from.
    package enum Origin: Sendable, Equatable {
        /// Declared in a version order file at this path.
        case file(String)
        /// Read from version names that allow only one order.
        case names
        /// Given in code (`SchemaCatalog(schemas:)`).
        case code
    }

    /// The file name a schemas folder declares its order in.
    package static let fileName = "versions.yaml"

    /// Version names, oldest first; the last is the current version.
    package var versions: [String]
    /// Where the order came from.
    package var origin: Origin

    /// Creates an order.
    package init(versions: [String], origin: Origin) {
        self.versions = versions
        self.origin = origin
    }

    /// Where the order came from, in words: "declared in schemas/versions.yaml", "from the version names".
    package var originDescription: String {
        switch origin {
        case .file(let path): return "declared in \(path)"
        case .names: return "from the version names"
        case .code: return "as given"
        }
    }

    /// The position of a version, oldest first.
    package func index(of version: String) -> Int? { versions.firstIndex(of: version) }

    /// Reads a version order file: `versions:` followed by a list of version names. Returns the
    /// names with their positions and every problem found.
    package static func parse(source: SourceFile) -> (versions: [(name: String, location: FileLocation)]?, diagnostics: [Diagnostic]) {
        var document = YAMLDocument(source: source)
        guard let root = document.root, let top = document.entries(of: root, what: "a version order file") else {
            return (nil, document.diagnostics)
        }
        document.rejectUnknownKeys(top, allowed: ["versions"], in: "the version order file")
        guard let entry = top.first(where: { $0.key == "versions" }) else {
            document.diagnostics.append(.error("missing 'versions:', the list of version names oldest first", at: FileLocation(path: source.path, line: 1, column: 1),
                                               fix: "write 'versions: [v1, v2, v3]'"))
            return (nil, document.diagnostics)
        }
        guard let items = document.items(of: entry.value, what: "versions") else { return (nil, document.diagnostics) }
        var result: [(name: String, location: FileLocation)] = []
        var seen: [String: Int] = [:]
        for item in items {
            guard let name = document.string(item, what: "a version name") else { continue }
            if let line = seen[name] {
                document.error("version '\(name)' is listed twice (first at line \(line))", at: item, fix: "list each version once")
                continue
            }
            let location = document.location(of: item)
            seen[name] = location.line
            result.append((name, location))
        }
        return (result, document.diagnostics)
    }

    /// The only order the names allow, or nil when they allow none or several.
    package static func fromNames(_ names: [String]) -> [String]? {
        guard names.count > 1 else { return names }
        struct Parsed { var name: String; var shape: String; var numbers: [Number] }
        func parse(_ name: String) -> Parsed {
            var shape = "", numbers: [Number] = [], digits = ""
            func flush() {
                guard !digits.isEmpty else { return }
                numbers.append(Number(digits: digits))
                shape += "#"
                digits = ""
            }
            for character in name {
                if character.isASCII && character.isNumber { digits.append(character); continue }
                flush()
                shape.append(character)
            }
            flush()
            return Parsed(name: name, shape: shape, numbers: numbers)
        }
        let parsed = names.map(parse)
        var numbered = parsed
        var first: Parsed?
        let shapes = Set(parsed.map(\.shape))
        if shapes.count == 2 {
            // One unnumbered first version whose name starts the numbered ones: Moody, Moody 2, Moody 3.
            let bases = parsed.filter { $0.numbers.isEmpty }
            guard bases.count == 1, let base = bases.first else { return nil }
            numbered = parsed.filter { !$0.numbers.isEmpty }
            guard let shape = numbered.first?.shape, shape.hasPrefix(base.name) else { return nil }
            first = base
        } else if shapes.count != 1 {
            return nil
        }
        guard let shape = numbered.first?.shape, shape.contains("#"), numbered.allSatisfy({ $0.shape == shape }),
              Set(numbered.map(\.numbers)).count == numbered.count else { return nil }
        let sorted = numbered.sorted { $0.numbers.lexicographicallyPrecedes($1.numbers) }
        return (first.map { [$0.name] } ?? []) + sorted.map(\.name)
    }

    /// A run of digits in a version name, as the number it writes, of any length (`007` is 7;
    /// a stamp of 25 digits is not cut or refused): the one rule both orders compare numbers by.
    struct Number: Hashable, Comparable {
        /// The digits without leading zeros ("0" for zero).
        let digits: Substring
        init(digits: String) {
            let significant = digits.drop { $0 == "0" }
            self.digits = significant.isEmpty ? "0" : significant
        }
        static func < (a: Number, b: Number) -> Bool {
            a.digits.count != b.digits.count ? a.digits.count < b.digits.count : a.digits < b.digits
        }
    }

    /// Whether `a` sorts before `b`, runs of digits compared as numbers ("Moody" < "Moody 2" <
    /// "Moody 10", "v2.0" < "v2.5" < "v2.5.1" < "v2.7.0"), the spaces beside a number aside
    /// ("Model" < "Model 2" < "Model3" < "Model 4"; names equal but for them by their text): the
    /// order an imported model's versions take, whether the whole model is imported or one
    /// version joins the others.
    package static func naturalOrder(_ a: String, _ b: String) -> Bool {
        func chunks(_ text: String) -> [(text: String, number: Number?)] {
            var result: [(String, Number?)] = []
            var current = ""
            var digits = false
            func close() {
                // A text's spaces next to a number are no part of the name's order ("Model 2", "Model3").
                let kept = digits ? current : current.trimmingCharacters(in: .whitespaces)
                if !kept.isEmpty { result.append((kept, digits ? Number(digits: kept) : nil)) }
                current = ""
            }
            for character in text {
                let isDigit = character.isASCII && character.isNumber
                if !current.isEmpty && isDigit != digits { close() }
                digits = isDigit
                current.append(character)
            }
            close()
            return result
        }
        let left = chunks(a), right = chunks(b)
        for (x, y) in zip(left, right) {
            if let m = x.number, let n = y.number, m != n { return m < n }
            if x.text != y.text { return x.text < y.text }
        }
        return left.count != right.count ? left.count < right.count : a < b
    }

    /// The order of names numbered in base 36 (`DataModel 01` … `DataModel 09`, `DataModel 0A`:
    /// after a start they share, a code of letters and digits as wide in every name, running a
    /// digit into a letter in some), by the code's text, so `0A` follows `09` where the natural
    /// order reads it as 0; an unnumbered first version (`DataModel`, which every other name
    /// starts with) first. Nil for names not numbered so (`Model 2`, `Model 10`; `App3D 2`).
    package static func base36Order(_ names: [String]) -> [String]? {
        let base = names.first { name in names.allSatisfy { $0 == name || $0.hasPrefix(name) } }
        let numbered = names.filter { $0 != base }
        guard numbered.count > 1 else { return nil }
        func isCodeCharacter(_ character: Character) -> Bool { character.isASCII && (character.isLetter || character.isNumber) }
        // The start they share, cut back to before a code it began (`DataModel 0` of `0A`, `01`).
        var start = numbered.dropFirst().reduce(Substring(numbered[0])) { shared, name in shared.prefix(zip(shared, name).prefix { $0 == $1 }.count) }
        while let last = start.last, isCodeCharacter(last) { start.removeLast() }
        let codes = numbered.map { String($0.dropFirst(start.count).prefix(while: isCodeCharacter)) }
        guard let width = codes.first?.count, width >= 2, codes.allSatisfy({ $0.count == width }), Set(codes).count == codes.count,
              codes.contains(where: { code in zip(code, code.dropFirst()).contains { $0.isNumber && $1.isLetter } }) else { return nil }
        let ordered = zip(codes, numbered).sorted { $0.0.unicodeScalars.map(\.value).lexicographicallyPrecedes($1.0.unicodeScalars.map(\.value)) }.map(\.1)
        return (base.map { [$0] } ?? []) + ordered
    }

    /// An order with one more version: where the names' base-36 order (`base36Order`) or else
    /// their natural order (`naturalOrder`: the rules a whole model's import orders by) places it
    /// among the others, when the others follow it; last (the newest) when they are in an order
    /// of their own; unchanged when it is there.
    package static func adding(_ version: String, to versions: [String]) -> [String] {
        guard !versions.contains(version) else { return versions }
        // Numbered in base 36 (`0A` joining `01` … `09`), by that numbering when the others follow it.
        if let order = base36Order(versions + [version]), order.filter({ $0 != version }) == versions { return order }
        guard versions.sorted(by: naturalOrder) == versions else { return versions + [version] }
        let index = versions.firstIndex { naturalOrder(version, $0) } ?? versions.count
        var result = versions
        result.insert(version, at: index)
        return result
    }

    /// The text of a version order file listing `versions`.
    package static func fileText(_ versions: [String]) -> String {
        "# The model's versions, oldest first; the last is the current version.\n"
            + "# mapc migrates forward along this list, and backward only with a mapping file.\n"
            + "versions:\n" + versions.map { "  - \(YAMLText.scalar($0))\n" }.joined()
    }
}
