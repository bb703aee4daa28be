import Foundation
package import Yams

/// A composed YAML document plus the diagnostics found while reading it.
///
/// Readers of mapc's YAML formats (schemas, mappings) walk the `Node` tree through this type, so
/// every value they take comes with its `file:line:col`, and every problem is recorded rather
/// than thrown: a file reports all its problems at once.
package struct YAMLDocument {
    /// The file being read.
    package let source: SourceFile
    /// The document's root node; nil for an empty document or one with a syntax error.
    package let root: Node?
    /// Problems found so far, in the order they were found.
    package var diagnostics: [Diagnostic] = []

    /// Composes the YAML text. A syntax error becomes a diagnostic and leaves `root` nil.
    package init(source: SourceFile) {
        self.source = source
        if let problem = YAMLGuard.problem(with: source.text) {
            root = nil
            diagnostics.append(.error(problem, at: FileLocation(path: source.path, line: 1, column: 1)))
            return
        }
        do {
            // Scalars are read as text with the type the reader expects (`string`, `count`, …), so
            // Yams' tag resolution, regular expressions per scalar (a third of loading 117 versions,
            // once for each duplicate-key check), has nothing to tell: `.basic` resolves none.
            root = try Yams.compose(yaml: source.text, .basic)
        } catch let error as YamlError {
            root = nil
            diagnostics.append(Self.diagnostic(for: error, in: source))
        } catch {
            root = nil
            diagnostics.append(.error("cannot read YAML: \(error)", at: FileLocation(path: source.path, line: 1, column: 1)))
        }
        if root == nil && diagnostics.isEmpty {
            diagnostics.append(.error("the file is empty", at: FileLocation(path: source.path, line: 1, column: 1)))
        }
    }

    /// The text of a top-level key's scalar value, when the document is a mapping holding one:
    /// what a file declares even when the rest of it has errors.
    package func topLevelScalar(_ key: String) -> String? {
        root?[key]?.scalar?.string
    }

    /// The position of a node; line 1, column 1 when Yams gives none.
    package func location(of node: Node) -> FileLocation {
        let mark = node.mark.map(source.place(of:))
        return FileLocation(path: source.path, line: mark?.line ?? 1, column: mark?.column ?? 1)
    }

    /// Records an error at a node, underlining its text when it is a one-line scalar.
    package mutating func error(_ message: String, at node: Node, fix: String? = nil) {
        diagnostics.append(.error(message, at: location(of: node), length: Self.length(of: node), fix: fix))
    }

    /// Records a warning at a node.
    mutating func warning(_ message: String, at node: Node, fix: String? = nil) {
        diagnostics.append(.warning(message, at: location(of: node), length: Self.length(of: node), fix: fix))
    }

    package static func length(of node: Node) -> Int {
        guard let scalar = node.scalar, !scalar.string.contains("\n") else { return 1 }
        let quotes = (scalar.style == .singleQuoted || scalar.style == .doubleQuoted) ? 2 : 0
        return max(1, scalar.string.unicodeScalars.count + quotes)
    }

    // MARK: Typed access

    /// A mapping's entries with string keys, or nil (and an error) when the node is not a mapping.
    package mutating func entries(of node: Node, what: String) -> [(key: String, keyNode: Node, value: Node)]? {
        guard let mapping = node.mapping else {
            error("\(what) must be a mapping (key: value pairs), found \(Self.kind(of: node))", at: node)
            return nil
        }
        var result: [(key: String, keyNode: Node, value: Node)] = []
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                error("keys of \(what) must be plain names", at: key)
                continue
            }
            // YAML 1.1's merge key (docker-compose files use it), which YAML 1.2 does not have.
            if name == "<<", key.scalar?.style == .plain {
                error("'<<' (a merge key of YAML 1.1) merges nothing here: these files are read as YAML 1.2, which has no merge keys", at: key,
                      fix: "write the keys out in \(what); an alias (*name) can stand for a whole value, not for some of its keys")
                continue
            }
            result.append((name, key, value))
        }
        return result
    }

    /// Reports keys not in `allowed`, suggesting the closest allowed key.
    package mutating func rejectUnknownKeys(_ entries: [(key: String, keyNode: Node, value: Node)], allowed: [String], in what: String) {
        for entry in entries where !allowed.contains(entry.key) {
            let fix = Suggestions.didYouMean(entry.key, in: allowed) ?? "allowed keys: \(allowed.joined(separator: ", "))"
            error("unknown key '\(entry.key)' in \(what)", at: entry.keyNode, fix: fix)
        }
    }

    /// A scalar's text, or nil (and an error) when the node is a mapping or sequence.
    package mutating func string(_ node: Node, what: String) -> String? {
        guard let scalar = node.scalar else {
            error("\(what) must be a single value, found \(Self.kind(of: node))", at: node)
            return nil
        }
        // A plain value starting with '!' is a YAML tag, not text (`version: !v1`, `filter: !done`,
        // an expression's NOT): its text is what follows the tag, most often nothing.
        let tag = scalar.tag.rawValue
        if tag.hasPrefix("!"), !tag.hasPrefix("!!") {
            error("\(what) starts with '\(tag)', which YAML reads as a tag, not as text (what follows it is '\(scalar.string)')", at: node,
                  fix: "quote the value to write the text: '\(tag)\(scalar.string.isEmpty ? "" : " " + scalar.string)'")
            return nil
        }
        return scalar.string
    }

    /// A non-empty identifier: a letter, then letters, digits or underscores.
    package mutating func identifier(_ node: Node, what: String) -> String? {
        guard let text = string(node, what: what) else { return nil }
        guard Self.isIdentifier(text) else {
            error("\(what) '\(text)' is not a valid name", at: node, fix: "use an ASCII letter (a-z, A-Z) followed by ASCII letters, digits or '_'")
            return nil
        }
        if let problem = Self.nameLengthProblem(text) {
            error("\(what) \(problem)", at: node, fix: "shorten it")
            return nil
        }
        return text
    }

    /// A boolean, read with YAML 1.1's spellings (true/false, yes/no, on/off) in any case.
    package mutating func bool(_ node: Node, what: String) -> Bool? {
        guard let text = string(node, what: what) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on", "y": return true
        case "false", "no", "off", "n": return false
        default:
            error("\(what) must be true or false, found '\(text)'", at: node)
            return nil
        }
    }

    /// A whole number of `least` or more (by default, not negative), read as decimal (a leading
    /// zero does not make it octal); `why` says why the least is what it is.
    package mutating func count(_ node: Node, what: String, least: Int = 0, why: String? = nil) -> Int? {
        guard let text = string(node, what: what) else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= least else {
            error("\(what) must be a whole number of \(least) or more\(why.map { " (\($0))" } ?? ""), found '\(text)'", at: node)
            return nil
        }
        return value
    }

    /// A sequence's items, or nil (and an error).
    package mutating func items(of node: Node, what: String) -> [Node]? {
        guard let sequence = node.sequence else {
            error("\(what) must be a list, found \(Self.kind(of: node))", at: node)
            return nil
        }
        return Array(sequence)
    }

    /// A mapping of names to single values, as `userInfo` is.
    package mutating func stringMap(_ node: Node, what: String) -> [String: String] {
        guard let entries = entries(of: node, what: what) else { return [:] }
        var result: [String: String] = [:]
        for entry in entries {
            if let value = string(entry.value, what: "\(what) value '\(entry.key)'") { result[entry.key] = value }
        }
        return result
    }

    /// Whether the node is YAML's null (`~`, `null`, or nothing at all): not when tagged as text
    /// (`!!str null`, YAML's way to write the word itself).
    package static func isNull(_ node: Node) -> Bool {
        guard let scalar = node.scalar, scalar.style == .plain, scalar.tag.rawValue != Tag.Name.str.rawValue else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    /// The longest name of an entity or property: files hold names as YAML keys, which are at
    /// most 1,024 characters, and a mapping's name joins two (`NoteToNote`).
    package static let maxNameLength = 500

    /// What is wrong with a name's length (`"'Abc…' is 1,030 characters long, …"`), or nil.
    package static func nameLengthProblem(_ name: String) -> String? {
        guard name.count > maxNameLength else { return nil }
        return "'\(name.prefix(20))…' is \(name.count) characters long, longer than the \(maxNameLength) characters a name may have (YAML reads keys of at most 1,024 characters, and a mapping's name joins two entities' names)"
    }

    /// A letter, then letters, digits or underscores.
    package static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    static func kind(of node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .scalar(let scalar): return "'\(scalar.string)'"
        case .alias: return "an alias"
        }
    }

    // MARK: Syntax errors

    static func diagnostic(for error: YamlError, in source: SourceFile) -> Diagnostic {
        func at(_ mark: TextMark) -> FileLocation { FileLocation(path: source.path, line: mark.line, column: mark.column) }
        switch error {
        case let .scanner(context, problem, yamlMark, _), let .parser(context, problem, yamlMark, _), let .composer(context, problem, yamlMark, _):
            let mark = source.place(of: yamlMark)
            // libyaml's own limit, in its API's words: said as what it means for the file.
            if problem.hasPrefix("Maximum nesting level reached") {
                return .error("the YAML nests more than \(YAMLGuard.maxDepth) levels deep", at: at(mark),
                              fix: "mapc files nest a few levels (entities, their properties, a property's settings): write the values out flat")
            }
            let contextText = context.map { " (\($0.text) at line \(source.place(of: $0.mark).line), column \(source.place(of: $0.mark).column))" } ?? ""
            // A line break only YAML 1.1 counts (U+2028 in a comment ends the comment: the rest of
            // the line is read as YAML) is the likelier cause than anything on the line shown.
            let lines = [mark.line] + (context.map { [source.place(of: $0.mark).line] } ?? [])
            if let line = lines.first(where: { source.line($0)?.unicodeScalars.contains(where: SourceFile.isYAMLOnlyBreak) == true }) {
                return .error("YAML syntax error: \(problem)\(contextText)", at: at(mark),
                              fix: "line \(line) holds U+2028, U+2029 or U+0085, which YAML takes for a line break (an editor shows none): what follows it is read as a new line, even in a comment; remove the character")
            }
            // A key without its colon: libyaml stops on the next line, and names the key in its
            // context; the key is the place (an editor underlines it, not the line after).
            if let context, context.text == "while scanning a simple key" {
                let key = source.place(of: context.mark)
                let rest = source.line(key.line).map { Array($0.unicodeScalars).dropFirst(max(0, key.column - 1)) } ?? []
                let length = max(1, rest.prefix { !CharacterSet.whitespaces.contains($0) && $0 != ":" }.count)
                return .error("YAML syntax error: \(problem)\(contextText)", at: at(key), length: length, fix: syntaxFix(problem, context: context.text, at: mark, in: source))
            }
            return .error("YAML syntax error: \(problem)\(contextText)", at: at(mark), fix: syntaxFix(problem, context: context?.text, at: mark, in: source))
        case let .duplicatedKeysInMapping(duplicates, context):
            // Yams reports the mapping's start; find the second occurrence of the key for a better position.
            let key = duplicates.first ?? "?"
            // Yams names a key it cannot print (a list or mapping used as a key) '<uncovertable>'.
            guard key != "<uncovertable>" else {
                return .error("duplicate key: a list or mapping is used twice as a key in the mapping starting here", at: at(source.place(of: context.mark)),
                              fix: "mapc files use plain names as keys; remove the complex keys ('? …')")
            }
            let location = secondOccurrence(of: key, after: source.place(of: context.mark), in: source) ?? at(source.place(of: context.mark))
            return .error("duplicate key '\(key)'", at: location, length: key.unicodeScalars.count,
                          fix: "a key may appear once among the keys indented alike under one parent; remove or rename one of them")
        case let .reader(problem, offset, value, _):
            // libyaml's reader gives a byte offset, and the character it refuses.
            let location = offset.map { source.location(ofUTF8Offset: $0) } ?? FileLocation(path: source.path, line: 1, column: 1)
            // libyaml gives -1 when no one character is at fault (an input too long).
            let code = value >= 0 ? Unicode.Scalar(UInt32(value)).map { String($0).scalarCodes } : nil
            return .error("cannot read YAML: \(problem)\(code.map { " (\($0))" } ?? "")", at: location,
                          fix: code.map { "remove it; a value that needs it writes it as an escape inside double quotes (\"\\u\($0.dropFirst(2).lowercased())\")" })
        default:
            return .error("cannot read YAML: \(error)", at: FileLocation(path: source.path, line: 1, column: 1))
        }
    }

    /// What usually causes libyaml's syntax errors, as a hint to fix them.
    static func syntaxFix(_ problem: String, context: String?, at mark: TextMark, in source: SourceFile) -> String? {
        let character = source.line(mark.line).flatMap { line in
            line.unicodeScalars.dropFirst(max(0, mark.column - 1)).first
        }
        switch problem {
        case _ where problem.hasPrefix("found character that cannot start any token"):
            return character == "\t" ? "YAML indents with spaces, never tabs: replace the tab" : "a value cannot start with this character; quote the value (\"…\")"
        case _ where problem.hasPrefix("mapping values are not allowed"):
            // A value holding double quotes (an expression's strings) is quoted with single ones.
            if source.line(mark.line)?.contains("\"") == true {
                return "a value holding ': ' must be quoted; this one holds double quotes, so use single quotes ('…', a ' inside written '') or a block scalar (|); otherwise check this line's indentation"
            }
            return "a value holding ': ' must be quoted (\"…\"); otherwise check this line's indentation"
        case _ where problem.hasPrefix("did not find expected key"):
            if let fix = textAfterClosingQuote(at: mark, in: source) ?? unclosedQuote(before: mark, in: source) { return fix }
            return "the keys of one block line up: indent this line like the keys around it (spaces only)"
        case _ where problem.hasPrefix("could not find expected ':'"):
            return "a key needs ': ' after it (a colon, then a space)"
        case _ where problem.hasPrefix("did not find expected ',' or '}'"):
            return "close the '{ … }' opened where shown, and separate its items with ','"
        case _ where problem.hasPrefix("did not find expected ',' or ']'"):
            return "close the '[ … ]' opened where shown, and separate its items with ','"
        case _ where problem.hasPrefix("found unexpected end of stream") && context?.contains("quoted scalar") == true:
            return "close the quote opened where shown"
        case _ where problem.hasPrefix("found undefined alias"):
            // The alias's name, as written after `*` where shown.
            let name = source.line(mark.line).map { line in
                String(line.unicodeScalars.dropFirst(max(0, mark.column)).prefix { !" \t,[]{}#".unicodeScalars.contains($0) })
            } ?? ""
            let alias = name.isEmpty ? "this alias" : "*\(name)"
            return "\(alias) names no anchor before it: define it with &\(name.isEmpty ? "name" : name) on a value above, or write the value itself (a '*' that starts a value is an alias: quote a value that starts with '*')"
        default:
            return nil
        }
    }

    /// The fix when a quoted value is followed by more text on its line (`body: "Note: " +
    /// $source.body`): YAML ends the value at its closing quote. The whole value, quoted.
    static func textAfterClosingQuote(at mark: TextMark, in source: SourceFile) -> String? {
        guard let line = source.line(mark.line) else { return nil }
        let scalars = Array(line.unicodeScalars)
        let before = scalars.prefix(max(0, mark.column - 1))
        guard let last = before.last(where: { $0 != " " && $0 != "\t" }), last == "\"" || last == "'",
              let separator = line.range(of: ": ") else { return nil }
        let key = line[..<separator.lowerBound]
        let value = line[separator.upperBound...].trimmingCharacters(in: .whitespaces)
        guard value.first == "\"" || value.first == "'" else { return nil }
        return "a quoted value ends at its closing quote, and text follows it on this line; quote the whole value in single quotes, "
            + "a ' inside written twice: \(key.trimmingCharacters(in: .whitespaces)): '\(value.replacingOccurrences(of: "'", with: "''"))'"
    }

    /// The fix when a quote opened on an earlier line is never closed there: YAML reads on, over
    /// lines, to the next quote of its kind, where the error is found.
    static func unclosedQuote(before mark: TextMark, in source: SourceFile) -> String? {
        guard let here = source.line(mark.line) else { return nil }
        var number = mark.line - 1
        while number >= max(1, mark.line - 200), let line = source.line(number) {
            defer { number -= 1 }
            for opener in ["\"", "'"] {
                guard here.contains(opener), let start = line.range(of: ": \(opener)") ?? (line.trimmingCharacters(in: .whitespaces).hasPrefix("- \(opener)") ? line.range(of: "- \(opener)") : nil) else { continue }
                let rest = line[start.upperBound...]
                // Quotes after the opening one; an escaped one (\") in double quotes does not close.
                let closers = opener == "\"" ? rest.replacingOccurrences(of: "\\\\", with: "").replacingOccurrences(of: "\\\"", with: "").filter { $0 == "\"" }.count
                                              : rest.filter { $0 == "'" }.count
                guard closers % 2 == 0 else { continue }
                let column = line.unicodeScalars.distance(from: line.unicodeScalars.startIndex, to: start.upperBound.samePosition(in: line.unicodeScalars) ?? line.unicodeScalars.endIndex)
                return "the quote opened at line \(number), column \(column) is not closed on its line, so YAML reads on to the next \(opener) (here); close it on its line"
            }
        }
        return nil
    }

    static func secondOccurrence(of key: String, after mark: TextMark, in source: SourceFile) -> FileLocation? {
        var found = 0
        var line = mark.line
        while let text = source.line(line) {
            var searchStart = text.startIndex
            if line == mark.line, let start = text.unicodeScalars.index(text.unicodeScalars.startIndex, offsetBy: max(0, mark.column - 1), limitedBy: text.unicodeScalars.endIndex) {
                searchStart = start
            }
            var range = searchStart..<text.endIndex
            while let match = text.range(of: key, range: range) {
                let before = match.lowerBound == text.startIndex ? " " : text[text.index(before: match.lowerBound)]
                let after = text[match.upperBound...].drop(while: { $0 == "\"" || $0 == "'" || $0 == " " })
                if (before == " " || before == "{" || before == "," || before == "\"" || before == "'" || before == "\t") && after.hasPrefix(":") {
                    found += 1
                    if found == 2 {
                        let column = text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: match.lowerBound) + 1
                        return FileLocation(path: source.path, line: line, column: column)
                    }
                }
                range = match.upperBound..<text.endIndex
            }
            line += 1
            if line > mark.line + 100_000 { break }
        }
        return nil
    }
}

/// A place in a file as its lines count them (`SourceFile.lines(of:)`, an editor's): a Yams
/// mark converted by `SourceFile.place(of:)`, as libyaml counts more lines than the file has.
package struct TextMark: Sendable {
    /// Line, from 1.
    package var line: Int
    /// Column in Unicode scalars, from 1.
    package var column: Int
}

extension SourceFile {
    /// A Yams mark (libyaml's line and column) as the file's lines count them.
    package func place(of mark: Mark) -> TextMark {
        let (line, column) = position(ofYAMLLine: mark.line, column: mark.column)
        return TextMark(line: line, column: column)
    }
}
