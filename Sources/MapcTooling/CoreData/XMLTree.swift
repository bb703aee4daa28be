import Foundation
import MapcFoundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of an XML document, with where its start tag is, as read by Foundation's
/// `XMLParser` (libxml2 on Linux): the Xcode model and mapping files are read through it.
struct XMLNode {
    /// The element's name.
    var name: String
    /// Its attributes.
    var attributes: [String: String]
    /// Its child elements, in document order.
    var children: [XMLNode] = []
    /// Its text content (character data directly inside it), when it has any.
    var text = ""
    /// Where its start tag is.
    var location: FileLocation

    /// The child elements with a name.
    func children(named name: String) -> [XMLNode] { children.filter { $0.name == name } }

    /// The first child element with a name.
    func child(named name: String) -> XMLNode? { children.first { $0.name == name } }
}

/// Reads an XML file into `XMLNode`s, bounded in size and depth, external entities never resolved.
enum XMLTree {
    /// The largest file read (Xcode mapping models with embedded models reach a few MiB).
    static let maxBytes = 64 * 1024 * 1024
    /// The deepest nesting accepted.
    static let maxDepth = 256
    /// The most elements accepted.
    static let maxElements = 2_000_000

    /// The root element of an XML file, or a `MapcError.input` saying where the XML is malformed.
    static func read(path: String) throws -> XMLNode {
        let data = try Files.read(path, what: "an Xcode XML file", maxBytes: maxBytes)
        if data.starts(with: Files.sqliteHeader) {
            throw MapcError.input("\(path) is a SQLite database (a store?), not an Xcode model file; `mapc import` reads .xcdatamodeld, .xcdatamodel and .xcmappingmodel, and `mapc status` describes a store")
        }
        return try parse(data, path: path)
    }

    /// The root element of XML data.
    static func parse(_ data: Data, path: String) throws -> XMLNode {
        // Foundation's parser stops the process on some bytes that are not UTF-8 (in an element or
        // attribute name): what Xcode writes is UTF-8, so anything else is refused before parsing.
        if let (line, column, byte) = firstByteNotUTF8(data) {
            throw malformed("malformed XML: byte 0x\(String(format: "%02X", byte)) is not UTF-8 text; Xcode writes its model files in UTF-8 (open and save the file in Xcode, or fix the text there)",
                            at: FileLocation(path: path, line: line, column: column))
        }
        if let (message, line, column) = entityProblem(data) {
            throw malformed(message, at: FileLocation(path: path, line: line, column: column))
        }
        if let offset = textPastParserLimit(data) {
            throw malformed("this element holds a text or attribute value of more than \(maxTextLength) bytes, the most the XML parser reads in one (libxml2's limit); mapc cannot read this file",
                            at: SourceFile(path: path, text: String(decoding: data, as: UTF8.self)).location(ofUTF8Offset: offset))
        }
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        let builder = Builder(path: path, parser: parser, lines: Array(data).split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init))
        parser.delegate = builder
        let parsed = parser.parse()
        if let problem = builder.problem { throw malformed(problem.message, at: problem.location) }
        guard parsed, let root = builder.root else {
            // The parser places an early end on the empty line after the last newline: report it
            // at the end of the last line, which an editor shows.
            // Lines of bytes, as libxml2 counts them (a CRLF file too: `\r` ends no line).
            let lines = Array(data).split(separator: 0x0A, omittingEmptySubsequences: false)
            let lastLine = lines.last?.isEmpty == true ? lines.count - 1 : lines.count
            var line = max(1, parser.lineNumber), column = max(1, parser.columnNumber)
            if line > lastLine, lastLine > 0 {
                line = lastLine
                column = lines[lastLine - 1].filter { $0 != 0x0D }.count + 1
            }
            throw malformed("malformed XML: \(reason(parser.parserError)); is the file complete?", at: FileLocation(path: path, line: line, column: column))
        }
        if let extra = contentAfterRoot(named: root.name, in: Array(data)) {
            // The text is UTF-8 (checked above): placed by the one rule for a byte offset.
            throw malformed("malformed XML: something follows the root element <\(root.name)>, which ends the file: remove it",
                            at: SourceFile(path: path, text: String(decoding: data, as: UTF8.self)).location(ofUTF8Offset: extra))
        }
        return root
    }

    /// The most bytes libxml2 reads in one text node or attribute value (its `XML_MAX_TEXT_LENGTH`,
    /// which Foundation's parser does not lift): a longer one is "not well-formed" to it.
    static let maxTextLength = 10_000_000

    /// Where a run of bytes without `<` or `>` longer than `maxTextLength` starts (a text, or a
    /// tag with an attribute value), or nil. A guess at what libxml2 will refuse, made to say why
    /// before it does: a value holding `>` is not seen (the parser's own message then stands),
    /// and a tag of several large values may be taken for one (Xcode writes neither).
    static func textPastParserLimit(_ data: Data) -> Int? {
        guard data.count > maxTextLength else { return nil }
        var start = 0
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
            for index in 0...bytes.count {
                guard index == bytes.count || bytes[index] == 0x3C || bytes[index] == 0x3E else { continue }
                if index - start > maxTextLength { return start }
                start = index + 1
            }
            return nil
        }
    }

    /// The byte offset of content after the root element's closing tag (an element, text), or
    /// nil: only white space and comments may follow it. Foundation's parser on Linux lets such
    /// content pass.
    static func contentAfterRoot(named name: String, in bytes: [UInt8]) -> Int? {
        let closing = Array("</\(name)>".utf8)
        guard bytes.count >= closing.count else { return nil }
        var start = bytes.count - closing.count
        while start >= 0, Array(bytes[start..<(start + closing.count)]) != closing { start -= 1 }
        guard start >= 0 else { return nil }
        var index = start + closing.count
        while index < bytes.count {
            if [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1; continue }
            if bytes[index...].starts(with: Array("<!--".utf8)), let end = (index..<max(index, bytes.count - 2)).first(where: { bytes[$0] == 0x2D && bytes[$0 + 1] == 0x2D && bytes[$0 + 2] == 0x3E }) {
                index = end + 3
                continue
            }
            return index
        }
        return nil
    }

    /// An error at its place in the file: reported as a compiler reports one, and kept with its
    /// position by whoever collects it (an import reports a version it could not read there).
    static func malformed(_ message: String, at location: FileLocation) -> DiagnosticsError {
        DiagnosticsError([.error(message, at: location)])
    }

    /// Entities beyond XML's five (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`) and character
    /// references, with where they are: Xcode writes no others. libxml2 expands entities a
    /// document declares itself (so a name would not be the text written) and drops, silently,
    /// references to entities of an external DTD it never reads (`&ext;` read as nothing).
    static func entityProblem(_ data: Data) -> (message: String, line: Int, column: Int)? {
        let bytes = [UInt8](data)
        let predefined: Set<String> = ["amp", "lt", "gt", "quot", "apos"]
        var line = 1, column = 1, index = 0
        func starts(_ text: StaticString, at position: Int) -> Bool {
            let count = text.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            return text.withUTF8Buffer { pattern in (0..<count).allSatisfy { bytes[position + $0] == pattern[$0] } }
        }
        func skip(past end: StaticString) {
            while index < bytes.count, !starts(end, at: index) { advance() }
            for _ in 0..<end.utf8CodeUnitCount where index < bytes.count { advance() }
        }
        func advance() {
            if bytes[index] == 0x0A { line += 1; column = 1 } else if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<") {
                if starts("<!--", at: index) { skip(past: "-->"); continue }
                if starts("<![CDATA[", at: index) { skip(past: "]]>"); continue }
            }
            if bytes[index] == UInt8(ascii: "<"), starts("<!ENTITY", at: index) {
                return ("the file declares its own XML entities (<!ENTITY …>), which Xcode never writes; mapc reads only XML's own (&amp; &lt; &gt; &quot; &apos;)", line, column)
            }
            if bytes[index] == UInt8(ascii: "&") {
                var end = index + 1
                while end < bytes.count, end - index < 64, bytes[end] != UInt8(ascii: ";"), bytes[end] != UInt8(ascii: "<"), bytes[end] > 0x20 { end += 1 }
                if end < bytes.count, bytes[end] == UInt8(ascii: ";") {
                    let name = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                    if !name.hasPrefix("#") && !predefined.contains(name) {
                        return ("the entity &\(name); is not one of XML's own (&amp; &lt; &gt; &quot; &apos;), and mapc reads no others (Xcode never writes them): write its text instead", line, column)
                    }
                }
            }
            advance()
        }
        return nil
    }

    /// The line, column (in characters) and value of the first byte that is not part of UTF-8
    /// text, or nil when all of it is UTF-8.
    static func firstByteNotUTF8(_ data: Data) -> (line: Int, column: Int, byte: UInt8)? {
        let bytes = [UInt8](data)
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        var line = 1, column = 1, index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let length: Int
            switch byte {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return (line, column, byte)
            }
            guard index + length <= bytes.count, String(validating: bytes[index..<index + length], as: UTF8.self) != nil else { return (line, column, byte) }
            if byte == 0x0A { line += 1; column = 1 } else { column += 1 }
            index += length
        }
        return nil
    }

    /// What went wrong, in words. Foundation on Linux gives most of XMLParser's errors only as
    /// "The operation could not be completed (NSXMLParserErrorDomain error N)", N being libxml2's
    /// error number (`xmlParserErrors`), the meanings of the common ones below.
    private static func reason(_ error: Error?) -> String {
        guard let error = error as NSError? else { return "the document ended early" }
        switch error.code {
        case 4: return "the file holds no XML"
        case 9: return "a character XML does not allow"
        case 26, 27, 28, 29, 30:
            return "the document refers to an entity that is not declared, or is external or a parameter entity; mapc reads no entities but XML's own (&amp; &lt; &gt; &quot; &apos;), as Xcode writes none"
        case 31, 32: return "the document declares an encoding mapc does not read; Xcode writes UTF-8"
        case 5: return "the document does not end where it should: an element is left open, an end tag does not match its start tag, or something follows the root element"
        case 73: return "a tag is not closed with '>' (an attribute without quotes?)"
        case 76: return "an end tag does not match its start tag"
        case 77: return "the file ends inside an element"
        default:
            let text = cleaned(error.localizedDescription)
            return text.contains("NSXMLParserErrorDomain") ? "not well-formed (libxml2 error \(error.code))" : text
        }
    }

    /// libxml2's messages carry a trailing newline and sometimes a code only.
    private static func cleaned(_ message: String) -> String {
        let text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "not well-formed" : text
    }

    private final class Builder: NSObject, XMLParserDelegate {
        let path: String
        weak var parser: XMLParser?
        var stack: [XMLNode] = []
        var root: XMLNode?
        var count = 0
        var problem: (message: String, location: FileLocation)?
        /// The file's lines, as bytes: where an element's tag starts is found in them.
        let lines: [[UInt8]]

        init(path: String, parser: XMLParser, lines: [[UInt8]]) {
            self.path = path
            self.parser = parser
            self.lines = lines
        }

        /// Where the start tag of an element ends (the parser's place when it reports the element)
        /// taken back to its `<`, which is where a diagnostic of the element belongs: a caret
        /// under `/>` pointed at nothing. Searched on that line and the few above (a tag written
        /// over lines); the end itself when no `<name` is found.
        func tagStart(of name: String, endingAt line: Int, column: Int) -> FileLocation {
            let opening = Array("<\(name)".utf8)
            var number = line
            while number >= max(1, line - 20), number <= lines.count {
                let bytes = lines[number - 1]
                let characters = charactersBefore(line: number)
                // The parser's column counts characters on this line: its byte offset (past the
                // column's character), then back from it.
                var limit = bytes.count
                if number == line {
                    var low = 0, high = bytes.count
                    while low < high {
                        let middle = (low + high) / 2
                        if characters[middle] >= column { high = middle } else { low = middle + 1 }
                    }
                    limit = low
                }
                var start = limit - opening.count
                while start >= 0 {
                    if bytes[start..<(start + opening.count)].elementsEqual(opening) {
                        let following = start + opening.count < bytes.count ? bytes[start + opening.count] : 0x20
                        // `<entity` and not `<entityX`: a name ends at a space, `/`, `>` or the line's end.
                        if [0x20, 0x09, 0x0D, 0x2F, 0x3E].contains(following) {
                            return FileLocation(path: path, line: number, column: characters[start] + 1)
                        }
                    }
                    start -= 1
                }
                number -= 1
            }
            return FileLocation(path: path, line: line, column: column)
        }

        /// For each byte offset of a line (and its end), the characters before it; the last
        /// line's kept, as elements come line by line: each element placed in the time of its
        /// tag, not of its line (8,000 entities on one line took 30 s).
        private var counted: (line: Int, characters: [Int]) = (0, [])
        private func charactersBefore(line number: Int) -> [Int] {
            if counted.line == number { return counted.characters }
            var characters = [Int](), total = 0
            characters.reserveCapacity(lines[number - 1].count + 1)
            for byte in lines[number - 1] {
                characters.append(total)
                if byte & 0xC0 != 0x80 { total += 1 }
            }
            characters.append(total)
            counted = (number, characters)
            return characters
        }

        private func stop(_ message: String) {
            guard problem == nil else { return }
            problem = (message, FileLocation(path: path, line: parser?.lineNumber ?? 0, column: max(1, parser?.columnNumber ?? 1)))
            parser?.abortParsing()
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            count += 1
            guard count <= XMLTree.maxElements else { return stop("more than \(XMLTree.maxElements) elements; the file is not read") }
            guard stack.count < XMLTree.maxDepth else { return stop("elements nested more than \(XMLTree.maxDepth) deep; the file is not read") }
            stack.append(XMLNode(name: elementName, attributes: attributeDict,
                                 location: tagStart(of: elementName, endingAt: parser.lineNumber, column: max(1, parser.columnNumber))))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += String(decoding: CDATABlock, as: UTF8.self)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            guard let node = stack.popLast() else { return }
            if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
            Data()
        }
    }
}
