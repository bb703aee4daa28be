import Foundation
import Testing
@testable import MapcCLI
import MapcKit

/// A `didChange` with ranges (which a client may send though the server asks for whole texts)
/// replaced the whole document with the fragment: each range edits its part now.
@Suite("Language server changes")
struct LSPChangesTests {
    private func change(_ text: String, from: (Int, Int)? = nil, to: (Int, Int)? = nil) -> JSONValue {
        guard let from, let to else { return .object([("text", .string(text))]) }
        func point(_ place: (Int, Int)) -> JSONValue { .object([("line", .integer(Int64(place.0))), ("character", .integer(Int64(place.1)))]) }
        return .object([("range", .object([("start", point(from)), ("end", point(to))])), ("text", .string(text))])
    }

    @Test func rangesEditTheirPartAndAWholeTextReplacesIt() {
        let text = "source: v1\r\ndestination: v2\nentityMappings:\r  - name: 🍣ToNote\n"
        // Line 1 (CRLF before it), character 13: "v2" → "v3".
        #expect(LanguageServer.applying([change("v3", from: (1, 13), to: (1, 15))], to: text) == "source: v1\r\ndestination: v3\nentityMappings:\r  - name: 🍣ToNote\n")
        // After the emoji (two UTF-16 units), on a line after a lone CR.
        #expect(LanguageServer.applying([change("Sushi", from: (3, 10), to: (3, 12))], to: text) == "source: v1\r\ndestination: v2\nentityMappings:\r  - name: SushiToNote\n")
        // Changes apply in order; past a line's end is its end; a whole text replaces all.
        #expect(LanguageServer.applying([change("!", from: (0, 99), to: (0, 99)), change("?", from: (0, 0), to: (0, 0))], to: "ab\ncd") == "?ab!\ncd")
        #expect(LanguageServer.applying([change("x", from: (0, 0), to: (0, 1)), change("whole")], to: "ab") == "whole")
        #expect(LanguageServer.applying([change("end", from: (9, 0), to: (9, 0))], to: "ab") == "abend")
    }

    /// A change whose range ends before it starts (line 900 to line 2) replaced the whole
    /// document with its fragment, silently: the server's copy then differed from the editor's.
    /// It is not applied, and the editor is told.
    @Test func aRangeThatEndsBeforeItStartsIsNotApplied() throws {
        #expect(LanguageServer.applying([change("x", from: (1, 0), to: (0, 0))], to: "ab\ncd") == nil)
        #expect(LanguageServer.applying([.object([("range", .object([("start", .string("no"))])), ("text", .string("x"))])], to: "ab") == nil)
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("schemas/v1.yaml").standardizedFileURL.path
        let uri = URL(fileURLWithPath: path).absoluteString
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        try client.send(["method": "initialized", "params": [:]])
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": try String(contentsOfFile: path, encoding: .utf8)]]])
        #expect(try client.diagnostics(for: uri).isEmpty)
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": uri, "version": 2],
                                                                        "contentChanges": [["range": ["start": ["line": 900, "character": 0], "end": ["line": 2, "character": 0]], "text": "x"]]]])
        // Not "x": its diagnostics are cleared, and the editor told.
        #expect(try client.diagnostics(for: uri).isEmpty)
        let told = client.notifications.first { $0["method"] as? String == "window/showMessage" }
        #expect(((told?["params"] as? [String: Any])?["message"] as? String)?.contains("whose range ends before it starts") == true, "\(client.notifications)")
        // Out of step, it is answered nothing from its file on disk, which may be another text.
        // (Line 10 of the file on disk is `      title:        { type: string }`: types were offered.)
        let onDisk = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        #expect(onDisk[9].contains("{ type: "))
        let column = try #require(onDisk[9].range(of: "{ type: ")).upperBound.utf16Offset(in: onDisk[9])
        let offered = try client.request("textDocument/completion", ["textDocument": ["uri": uri], "position": ["line": 9, "character": column]])
        #expect((offered as? [Any])?.isEmpty == true, "\(String(describing: offered))")
        // Out of step, the document is not checked on its lost copy (a ranged change is passed
        // over, the review found stale diagnostics published under the new version) until a
        // whole text comes: then it is checked again, at that version.
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": uri, "version": 3],
                                                                        "contentChanges": [["range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 0]], "text": "#"]]]])
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": uri, "version": 4], "contentChanges": [["text": "model: S\n"]]]])
        let published = try client.published(for: uri)
        #expect(published["version"] as? Int == 4 && ((published["diagnostics"] as? [[String: Any]])?.isEmpty == false), "\(published)")
        try client.close()
    }
}

extension LSPChangesTests {
    /// `mapc lsp --schemas nope` started, and told each mapping its versions were unknown there.
    @Test func foldersNamedToTheServerMustExist() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schemas = try CLI.run(["lsp", "--schemas", "nope"], in: folder)
        #expect(schemas.status == 2 && schemas.stderr.contains("schemas folder 'nope' does not exist"), "\(schemas.stderr)")
        let mappings = try CLI.run(["lsp", "--mappings", "nope"], in: folder)
        #expect(mappings.status == 2 && mappings.stderr.contains("mappings folder 'nope' does not exist"), "\(mappings.stderr)")
    }
}

extension LSPChangesTests {
    /// A second `initialize` succeeded, and requests after `shutdown` were answered as usual:
    /// both are refused with JSON-RPC's -32600, saying why.
    @Test func initializeOnceAndNothingButExitAfterShutdown() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        let again = try client.response("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        #expect((again["error"] as? [String: Any])?["code"] as? Int == -32600, "\(again)")
        _ = try client.request("shutdown", [:])
        let late = try client.response("textDocument/hover", ["textDocument": ["uri": folder.appendingPathComponent("schemas/v1.yaml").absoluteString], "position": ["line": 0, "character": 0]])
        #expect(((late["error"] as? [String: Any])?["message"] as? String)?.contains("only exit is accepted after shutdown") == true, "\(late)")
        try client.send(["method": "exit"])
        client.process.waitUntilExit()
        #expect(client.process.terminationStatus == 0)
    }
}
