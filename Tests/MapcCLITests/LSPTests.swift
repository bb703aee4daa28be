import Foundation
import Testing

/// A scripted JSON-RPC client of `mapc lsp`, as an editor drives it.
final class LSPClient {
    let process = Process()
    private let input = Pipe(), output = Pipe()
    private var buffer = Data()
    private var nextID = 1

    init(in folder: URL) throws {
        process.executableURL = CLI.executable
        process.arguments = ["lsp"]
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(["MAPC_CACHE": CLI.policyCache.path]) { _, new in new }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func send(_ message: [String: Any]) throws {
        try sendTogether([message])
    }

    /// Sends messages in one write, as a client that queued them does: the server reads them
    /// before it answers any.
    func sendTogether(_ messages: [[String: Any]]) throws {
        var data = Data()
        for var message in messages {
            message["jsonrpc"] = "2.0"
            let body = try JSONSerialization.data(withJSONObject: message)
            data += Data("Content-Length: \(body.count)\r\n\r\n".utf8) + body
        }
        input.fileHandleForWriting.write(data)
    }

    /// Sends a request and returns its response's result (notifications met meanwhile are kept).
    func request(_ method: String, _ params: [String: Any]) throws -> Any? {
        try response(method, params)["result"]
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    func response(_ method: String, _ params: [String: Any]) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        try send(["id": id, "method": method, "params": params])
        while true {
            let message = try read()
            if message["id"] as? Int == id { return message }
            notifications.append(message)
        }
    }

    var notifications: [[String: Any]] = []

    /// Waits until every diagnostic of the edits sent so far is in `notifications`: a request
    /// other than completion, hover, definition or a fix is answered after them (an unknown one
    /// too, with an error).
    func settle() throws {
        _ = try response("mapc/settle", [:])
    }

    /// The next diagnostics published for a document.
    func diagnostics(for uri: String) throws -> [[String: Any]] {
        (try published(for: uri)["diagnostics"] as? [[String: Any]]) ?? []
    }

    /// The parameters of the next diagnostics published for a document (`uri`, `version`, `diagnostics`).
    func published(for uri: String) throws -> [String: Any] {
        while true {
            if let index = notifications.firstIndex(where: { ($0["params"] as? [String: Any])?["uri"] as? String == uri && $0["method"] as? String == "textDocument/publishDiagnostics" }) {
                return (notifications.remove(at: index)["params"] as? [String: Any]) ?? [:]
            }
            notifications.append(try read())
        }
    }

    /// The next message the server sends, in the order sent.
    func next() throws -> [String: Any] { try read() }

    /// Writes bytes as they are (a framing a test makes itself).
    func write(_ data: Data) { input.fileHandleForWriting.write(data) }

    private func read() throws -> [String: Any] {
        while true {
            if let end = buffer.range(of: Data("\r\n\r\n".utf8)) {
                let header = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                let length = Int(header.components(separatedBy: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                if buffer.count - end.upperBound >= length {
                    let body = buffer[end.upperBound..<(end.upperBound + length)]
                    buffer = Data(buffer[(end.upperBound + length)...])
                    return try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
                }
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw CocoaError(.fileReadUnknown) }
            buffer += chunk
        }
    }

    /// Ends the input without `shutdown` or `exit` (the client gone) and waits for the server.
    func endInput() {
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
    }

    func close() throws {
        _ = try request("shutdown", [:])
        try send(["method": "exit"])
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
    }
}

@Suite("mapc lsp", .serialized)
struct LSPTests {
    /// Its input ending after `initialize` without `shutdown` (the client gone) ended with 0,
    /// as a clean end: 1 now, as `exit` alone gives; an input that ends before `initialize`, 0.
    @Test func anInputThatEndsWithoutShutdownIsNoCleanEnd() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        client.endInput()
        #expect(client.process.terminationStatus == 1)
        let idle = try LSPClient(in: folder)
        idle.endInput()
        #expect(idle.process.terminationStatus == 0)
    }

    @Test func diagnosticsCompletionHoverDefinitionAndFixes() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mappingPath = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL.path
        let uri = URL(fileURLWithPath: mappingPath).absoluteString
        let original = try String(contentsOfFile: mappingPath, encoding: .utf8)
        let client = try LSPClient(in: folder)
        let initialized = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]]) as? [String: Any]
        #expect((initialized?["capabilities"] as? [String: Any])?["hoverProvider"] as? Bool == true)
        try client.send(["method": "initialized", "params": [:]])

        // A mistake, reported as `mapc check` reports it.
        let broken = original.replacingOccurrences(of: "$source.dateCreated", with: "$source.dateCreatd")
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": broken]]])
        let diagnostics = try client.diagnostics(for: uri)
        let typo = try #require(diagnostics.first { ($0["message"] as? String)?.contains("unknown key 'dateCreatd' on Note") == true }, "\(diagnostics)")
        // The same message, at the same place, as `mapc check` of the file as it stands.
        try broken.write(toFile: mappingPath, atomically: true, encoding: .utf8)
        let check = try CLI.run(["check", "--format", "json", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        try original.write(toFile: mappingPath, atomically: true, encoding: .utf8)
        let reported = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [[String: Any]])
        let same = try #require(reported.first { ($0["message"] as? String)?.contains("unknown key 'dateCreatd' on Note") == true })
        let start = (typo["range"] as? [String: Any])?["start"] as? [String: Any]
        #expect(start?["line"] as? Int == (same["line"] as? Int ?? 0) - 1 && start?["character"] as? Int == (same["column"] as? Int ?? 0) - 1)
        // Its fix as a code action.
        let actions = try client.request("textDocument/codeAction", ["textDocument": ["uri": uri], "range": typo["range"] as Any, "context": ["diagnostics": [typo]]]) as? [[String: Any]]
        #expect(actions?.first?["title"] as? String == "Change to 'dateCreated'", "\(actions ?? [])")

        // Fixed: no diagnostics.
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": uri, "version": 2], "contentChanges": [["text": original]]]])
        #expect(try client.diagnostics(for: uri).filter { ($0["severity"] as? Int) == 1 }.isEmpty)

        // Completion after `$source.` on the line of an expression.
        let lines = original.components(separatedBy: "\n")
        let line = try #require(lines.firstIndex { $0.contains("$source.dateCreated") })
        let column = try #require(lines[line].range(of: "$source.")).upperBound.utf16Offset(in: lines[line])
        let completion = try client.request("textDocument/completion", ["textDocument": ["uri": uri], "position": ["line": line, "character": column]]) as? [String: Any]
        let labels = ((completion?["items"] as? [[String: Any]]) ?? []).compactMap { $0["label"] as? String }
        #expect(labels.contains("title") && labels.contains("image") && labels.contains("dateCreated"), "\(labels)")
        #expect(!labels.contains("uppercase:"), "after $source. only its properties")
        // At the start of an expression: properties of the source object, and functions.
        let expressionStart = try #require(lines[line].range(of: "$source.")).lowerBound.utf16Offset(in: lines[line])
        let bare = try client.request("textDocument/completion", ["textDocument": ["uri": uri], "position": ["line": line, "character": expressionStart]]) as? [String: Any]
        let bareLabels = ((bare?["items"] as? [[String: Any]]) ?? []).compactMap { $0["label"] as? String }
        #expect(bareLabels.contains("uppercase:") && bareLabels.contains("TERNARY") && bareLabels.contains("title"), "\(bareLabels)")

        // Hover and definition of the property under the cursor.
        let hover = try client.request("textDocument/hover", ["textDocument": ["uri": uri], "position": ["line": line, "character": column + 2]]) as? [String: Any]
        #expect(((hover?["contents"] as? [String: Any])?["value"] as? String)?.hasPrefix("Note.dateCreated: date, required in v2") == true, "\(hover ?? [:])")
        // On the property mapping's key: what its expression gives.
        let key = try #require(lines[line].range(of: "dateCreated:")).lowerBound.utf16Offset(in: lines[line])
        let summary = try client.request("textDocument/hover", ["textDocument": ["uri": uri], "position": ["line": line, "character": key + 1]]) as? [String: Any]
        #expect(((summary?["contents"] as? [String: Any])?["value"] as? String) == "dateCreated = $source.dateCreated: date, never nil\n\ninto Note.dateCreated: date, required in v3", "\(summary ?? [:])")
        let definition = try client.request("textDocument/definition", ["textDocument": ["uri": uri], "position": ["line": line, "character": column + 2]]) as? [String: Any]
        #expect((definition?["uri"] as? String)?.hasSuffix("schemas/v2.yaml") == true, "\(definition ?? [:])")
        try client.close()
        #expect(client.process.terminationStatus == 0)
    }
}

extension LSPTests {
    /// A real editor: Neovim, headless, with docs/editors.md's setup (editor/nvim-lsp-check.lua),
    /// gets the diagnostics of a mistake and the completions after `$source.`.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/nvim"), "Neovim is not installed"))
    func neovimGetsDiagnosticsAndCompletions() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        let text = try String(contentsOf: mapping, encoding: .utf8).replacingOccurrences(of: "$source.dateCreated", with: "$source.dateCreatd")
        try text.write(to: mapping, atomically: true, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let line = try #require(lines.firstIndex { $0.contains("$source.dateCreatd") })
        let column = try #require(lines[line].range(of: "$source.")).upperBound.utf16Offset(in: lines[line])
        let script = CLI.packageRoot.appendingPathComponent("editor/nvim-lsp-check.lua").path
        let run = try CLI.run(["--headless", "-u", "NONE", "-c", "luafile \(script)", "mappings/mapping_v2_to_v3.yaml"], in: folder,
                              environment: ["MAPC": CLI.executable.path, "LINE": String(line), "COL": String(column)], program: URL(fileURLWithPath: "/usr/bin/nvim"))
        let output = run.stdout + run.stderr
        #expect(output.contains("diagnostic \(line + 1):\(column + 1) unknown key 'dateCreatd' on Note; did you mean 'dateCreated'?"), "\(output)")
        #expect(output.contains("completion title") && output.contains("completion image"), "\(output)")
    }
}

extension LSPTests {
    /// A stale recorded hash is fixed by a code action writing what `check --update-hashes` writes.
    @Test func staleHashesAreRecordedByACodeAction() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        #expect(try CLI.run(["check", "--update-hashes", "mappings/mapping_v2_to_v3.yaml"], in: folder).status == 0)
        let schema = try folder.read("schemas/v3.yaml")
        try folder.write(schema.replacingOccurrences(of: "      displayIndex: { type: int64, default: 0 }", with: "      displayIndex: { type: int64, default: 0 }\n      pinned:       { type: bool, optional: true }"), to: "schemas/v3.yaml")
        let mappingPath = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL.path
        let uri = URL(fileURLWithPath: mappingPath).absoluteString
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": try String(contentsOfFile: mappingPath, encoding: .utf8)]]])
        let stale = try client.diagnostics(for: uri).filter { ($0["message"] as? String)?.hasPrefix("stale destination hash") == true }
        #expect(!stale.isEmpty)
        let actions = try client.request("textDocument/codeAction", ["textDocument": ["uri": uri], "range": stale.first?["range"] as Any, "context": ["diagnostics": stale]]) as? [[String: Any]] ?? []
        let record = try #require(actions.first { ($0["title"] as? String)?.hasPrefix("Record the current entity hashes") == true }, "\(actions)")
        let edits = ((record["edit"] as? [String: Any])?["changes"] as? [String: Any])?[uri] as? [[String: Any]]
        let newText = try #require(edits?.first?["newText"] as? String)
        // What the command line writes.
        #expect(try CLI.run(["check", "--update-hashes", "mappings/mapping_v2_to_v3.yaml"], in: folder).status == 0)
        #expect(newText == (try folder.read("mappings/mapping_v2_to_v3.yaml")))
        try client.close()
    }
}

extension LSPTests {
    /// What a client may send that no editor should: a negative position, a body that is not
    /// JSON, a file with CRLF line endings. The server answers and goes on.
    @Test func oddInputIsAnsweredNotATrap() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let path = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL.path
        let uri = URL(fileURLWithPath: path).absoluteString
        let crlf = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "\n", with: "\r\n")
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "capabilities": [:]])
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": crlf]]])
        #expect(try client.diagnostics(for: uri).filter { ($0["severity"] as? Int) == 1 }.isEmpty)
        // Answered, as JSON-RPC answers params of the wrong shape (a probe found `null` for them).
        let negative = try client.response("textDocument/completion", ["textDocument": ["uri": uri], "position": ["line": -1, "character": 0]])
        #expect((negative["error"] as? [String: Any])?["code"] as? Int == -32602, "\(negative)")
        let typed = try client.response("textDocument/hover", ["textDocument": ["uri": uri], "position": ["line": "3", "character": 0]])
        #expect((typed["error"] as? [String: Any])?["message"] as? String == "invalid params: position.line must be a whole number from 0", "\(typed)")
        let lines = crlf.components(separatedBy: "\r\n")
        let line = try #require(lines.firstIndex { $0.contains("$source.dateCreated") })
        let column = try #require(lines[line].range(of: "$source.")).upperBound.utf16Offset(in: lines[line])
        let completion = try client.request("textDocument/completion", ["textDocument": ["uri": uri], "position": ["line": line, "character": column]]) as? [String: Any]
        #expect(((completion?["items"] as? [[String: Any]]) ?? []).contains { $0["label"] as? String == "title" }, "completion in a CRLF file")
        try client.close()
        #expect(client.process.terminationStatus == 0)
    }
}
