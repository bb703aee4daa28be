import Foundation

/// The text of one input file (a schema, a mapping, an expression), kept so that diagnostics
/// can quote the offending line.
public struct SourceFile: Sendable {
    /// The path as the user gave it; diagnostics print it unchanged.
    public let path: String
    /// The whole text.
    public let text: String
    /// Where each line starts in the text's UTF-8 (4 bytes a line: a file is at most 16 MiB). Its
    /// lines as substrings took 32 bytes each, kept with every open document: a 16 MiB file of
    /// blank lines held half a gigabyte in the language server.
    private let lineStarts: [UInt32]
    /// Where each of YAML's lines starts in the file's lines (line, column), when YAML counts more
    /// lines: libyaml (YAML 1.1) also breaks lines at U+0085, U+2028 and U+2029, which editors and
    /// `lines(of:)` do not. Nil when the text holds none of them (as files almost always do).
    private let yamlLineStarts: [(line: Int, column: Int)]?

    /// Creates a source file from text already in memory.
    public init(path: String, text: String) {
        self.path = path
        self.text = text
        self.lineStarts = Self.lineStarts(of: text)
        self.yamlLineStarts = Self.yamlLineStarts(of: text)
    }

    /// A line and column as libyaml counts them (its marks), as the file's lines count them.
    package func position(ofYAMLLine line: Int, column: Int) -> (line: Int, column: Int) {
        guard let starts = yamlLineStarts, line >= 1, line <= starts.count else { return (line, column) }
        let start = starts[line - 1]
        return (start.line, start.column + column - 1)
    }

    /// Whether a character is a line break to YAML 1.1 (libyaml) and to no editor.
    package static func isYAMLOnlyBreak(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\u{85}" || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// `yamlLineStarts` of a text: nil unless it holds a line break only YAML 1.1 counts.
    private static func yamlLineStarts(of text: String) -> [(line: Int, column: Int)]? {
        let bytes = text.utf8
        // U+0085 is C2 85 in UTF-8, U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
        var previous: UInt8 = 0, beforePrevious: UInt8 = 0, found = false
        for byte in bytes {
            if (previous == 0xC2 && byte == 0x85) || (beforePrevious == 0xE2 && previous == 0x80 && (byte == 0xA8 || byte == 0xA9)) { found = true; break }
            beforePrevious = previous
            previous = byte
        }
        guard found else { return nil }
        var starts: [(line: Int, column: Int)] = [(1, 1)]
        var line = 1, column = 1
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case "\n", "\r":
                if scalar == "\r", index < scalars.count, scalars[index] == "\n" { index += 1 }
                line += 1
                column = 1
                starts.append((line, column))
            case _ where isYAMLOnlyBreak(scalar):
                // A character on the file's line, and the end of YAML's.
                column += 1
                starts.append((line, column))
            default:
                column += 1
            }
        }
        return starts
    }

    /// A text's lines, whatever their endings: `\n`, `\r\n` or `\r` alone, as YAML counts lines
    /// and an editor does (LSP's positions). Found in the UTF-8 bytes by `lineStarts`, the one
    /// rule for where a line starts, and cut as substrings: a line built scalar by scalar cost a
    /// quarter of the language server's time.
    package static func lines(of text: String) -> [String] {
        let starts = lineStarts(of: text)
        return starts.indices.map { line(at: $0, of: starts, in: text) }
    }

    /// Where each of a text's lines starts in its UTF-8, lines ended as `lines(of:)` ends them.
    /// (A text past 4 GiB, which no file read is, has its later lines counted as its last.)
    static func lineStarts(of text: String) -> [UInt32] {
        var text = text
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { bytes -> [UInt32] in
            var starts: [UInt32] = [0]
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                guard byte == 0x0A || byte == 0x0D else { continue }
                if byte == 0x0D, index < bytes.count, bytes[index] == 0x0A { index += 1 }
                guard let start = UInt32(exactly: index) else { break }
                starts.append(start)
            }
            return starts
        } ?? [0]
    }

    /// The line and column (columns in Unicode scalars) of a byte offset into the text's UTF-8,
    /// lines ended as `lines(of:)` ends them: where libyaml's reader places what it refuses.
    package func location(ofUTF8Offset offset: Int) -> FileLocation {
        let bytes = Array(text.utf8.prefix(max(0, offset)))
        var line = 1, lineStart = 0, index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard byte == 0x0A || byte == 0x0D else { continue }
            if byte == 0x0D, index < bytes.count, bytes[index] == 0x0A { index += 1 }
            line += 1
            lineStart = index
        }
        // Scalars start at every byte that is not a continuation byte (10xxxxxx).
        let column = bytes[lineStart...].filter { $0 & 0xC0 != 0x80 }.count + 1
        return FileLocation(path: path, line: line, column: column)
    }

    /// The largest schema, mapping or version-order file read (hostile inputs must stay bounded):
    /// the same for `mapc check` and an editor's open documents.
    package static let maxBytes = 16 * 1024 * 1024

    /// Reads a file, refusing files larger than `maxBytes` (hostile inputs must stay bounded).
    package static func read(path: String, maxBytes: Int = SourceFile.maxBytes) throws -> SourceFile {
        let data = try Files.read(path, what: "the file", maxBytes: maxBytes)
        guard let text = String(data: data, encoding: .utf8) else {
            throw MapcError.input("\(path): file is not valid UTF-8")
        }
        return SourceFile(path: path, text: withoutByteOrderMark(text))
    }

    /// A text without the byte order mark an editor may keep at its start (YAML would take the
    /// mark for content, an assertion for part of an entity's name), as `mapc check` reads a file.
    package static func withoutByteOrderMark(_ text: String) -> String {
        text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
    }

    /// Whether a file name is a YAML file's: it ends in `.yaml` or `.yml`.
    package static func isYAMLName(_ name: String) -> Bool {
        name.hasSuffix(".yaml") || name.hasSuffix(".yml")
    }

    /// The `.yaml` and `.yml` files of a folder, in name order (none when the folder is missing).
    /// A folder that does not exist has none; one that exists but cannot be listed (no
    /// permission to read it, a file where a folder should be) throws, saying which and why:
    /// taken for empty, an unreadable mappings folder planned inferred steps that drop values.
    package static func yamlFiles(in folder: String) throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            switch Files.kind(of: Files.realPath(folder)) {
            case .missing:
                return []
            case .directory:
                throw MapcError.input("cannot read the folder \(folder) (\(Files.reason(of: error))): mapc needs to list its files; give this user read and search permission on it (chmod u+rx)")
            default:
                throw MapcError.input("\(folder) is not a folder: name the folder that holds the .yaml files")
            }
        }
        return names.sorted().filter(isYAMLName).map { (folder as NSString).appendingPathComponent($0) }
    }

    /// The text of a 1-based line, without its line break, or nil past the end.
    package func line(_ number: Int) -> String? {
        guard number >= 1, number <= lineStarts.count else { return nil }
        return Self.line(at: number - 1, of: lineStarts, in: text)
    }

    /// The line at `index` (from 0) of a text whose lines start at `starts`, without its break.
    private static func line(at index: Int, of starts: [UInt32], in text: String) -> String {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: Int(starts[index]))
        var end = index + 1 < starts.count ? utf8.index(utf8.startIndex, offsetBy: Int(starts[index + 1])) : utf8.endIndex
        // Without its break: `\n`, `\r\n` or `\r`.
        if end > start, utf8[utf8.index(before: end)] == 0x0A { end = utf8.index(before: end) }
        if end > start, utf8[utf8.index(before: end)] == 0x0D { end = utf8.index(before: end) }
        return String(text[start..<end])
    }
}

/// A position in a source file: 1-based line and column (columns count Unicode scalars, as libyaml does).
public struct FileLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file's path as given by the user.
    public var path: String
    /// Line, from 1.
    public var line: Int
    /// Column, from 1.
    public var column: Int

    /// Creates a location.
    public init(path: String, line: Int, column: Int) {
        self.path = path
        self.line = line
        self.column = column
    }

    /// `path:line:col`, the form compilers and editors understand.
    public var description: String { "\(path):\(line):\(column)" }
}
