import Foundation
import Testing

/// What a second probe of `mapc lsp` found, driving it as editors do on the example and on a
/// project of 120 versions (a check of one mapping 0.7 s there).
@Suite("Defects found by the second language-server probe", .serialized)
struct LSPProbe2FindingsTests {
    private func client(in folder: URL, capabilities: [String: Any] = [:]) throws -> (LSPClient, [String: Any]) {
        let client = try LSPClient(in: folder)
        let initialized = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": capabilities]) as? [String: Any] ?? [:]
        try client.send(["method": "initialized", "params": [:]])
        return (client, initialized)
    }

    private func open(_ client: LSPClient, _ path: URL, text: String? = nil) throws {
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": path.absoluteString, "languageId": "yaml", "version": 1,
                                                                                       "text": try text ?? String(contentsOf: path, encoding: .utf8)]]])
    }

    private func change(_ path: URL, version: Int, text: String) -> [String: Any] {
        ["method": "textDocument/didChange", "params": ["textDocument": ["uri": path.absoluteString, "version": version], "contentChanges": [["text": text]]]]
    }

    /// Each request first checked every edit waiting (a completion at each keystroke made each
    /// wait for the check of every keystroke before it: on the large project 170 s behind, and
    /// `$/cancelRequest` was ignored). Completion is answered from the text as it is, before the
    /// checks; the edits sent together are checked once, at the last; a request the client
    /// cancelled before it was handled is answered as cancelled.
    @Test func completionIsAnsweredBeforeTheChecksAndACancelledRequestIsRefused() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let (client, _) = try client(in: folder)
        try open(client, mapping)
        try client.settle()
        client.notifications.removeAll()
        let text = try String(contentsOf: mapping, encoding: .utf8)
        let position: [String: Any] = ["textDocument": ["uri": mapping.absoluteString], "position": ["line": 0, "character": 0]]
        try client.sendTogether([
            change(mapping, version: 2, text: text + "#a\n"),
            ["id": 900, "method": "textDocument/completion", "params": position],
            change(mapping, version: 3, text: text + "#ab\n"),
            ["id": 901, "method": "textDocument/completion", "params": position],
            ["method": "$/cancelRequest", "params": ["id": 901]],
        ])
        var order: [String] = []
        while order.count < 3 {
            let message = try client.next()
            if let id = message["id"] as? Int { order.append((message["error"] as? [String: Any])?["code"] as? Int == -32800 ? "cancelled \(id)" : "answer \(id)") }
            else if message["method"] as? String == "textDocument/publishDiagnostics" { order.append("diagnostics \((message["params"] as? [String: Any])?["version"] as? Int ?? 0)") }
        }
        #expect(order == ["answer 900", "cancelled 901", "diagnostics 3"], "\(order)")
        try client.close()
    }

    /// A message over 64 MiB ended the server (exit 1): every document then went unserved. It
    /// is skipped by its length, the editor told, and the server goes on.
    @Test func aMessageTooLongIsSkippedAndTheServerGoesOn() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (client, _) = try client(in: folder)
        let length = 64 * 1024 * 1024 + 10
        client.write(Data("Content-Length: \(length)\r\n\r\n".utf8) + Data(repeating: 0x20, count: length))
        let told = try client.next()
        #expect(told["method"] as? String == "window/showMessage" && ((told["params"] as? [String: Any])?["message"] as? String)?.contains("it was skipped") == true, "\(told)")
        let schema = folder.appendingPathComponent("schemas/v1.yaml").standardizedFileURL
        try open(client, schema, text: "model: M\nversion: v1\nentities:\n  Note:\n    attributes:\n      title: { type: strng }\n")
        #expect(try client.diagnostics(for: schema.absoluteString).contains { ($0["message"] as? String)?.contains("unknown type 'strng'") == true })
        try client.close()
        #expect(client.process.terminationStatus == 0)
    }

    /// An open versions.yaml was not checked again when a schema's version changed (`mapc check`
    /// and a reopen said "version 'v3' is listed, but no schema file declares it").
    @Test func anOpenVersionOrderIsCheckedAfterASchemasEdit() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let order = folder.appendingPathComponent("schemas/versions.yaml").standardizedFileURL
        let schema = folder.appendingPathComponent("schemas/v3.yaml").standardizedFileURL
        let (client, _) = try client(in: folder)
        try open(client, order)
        _ = try client.diagnostics(for: order.absoluteString)
        try open(client, schema)
        try client.settle()
        client.notifications.removeAll()
        try client.send(change(schema, version: 2, text: try String(contentsOf: schema, encoding: .utf8).replacingOccurrences(of: "version: v3", with: "version: v5")))
        let after = try client.diagnostics(for: order.absoluteString).compactMap { $0["message"] as? String }
        #expect(after.contains { $0.contains("'v3'") } , "\(after)")
        try client.close()
    }

    /// The server handled saves and files changed on disk but asked for neither: a client that
    /// follows LSP sends `didSave` only when `save` is in the capabilities, and watches files only
    /// for a server that registers watchers. A change to a document not open was applied to an
    /// empty text and kept as the file; a request without a method was -32601 "does not handle ".
    @Test func savesAndWatchedFilesAreAskedForAndStrayMessagesAreRefused() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let (client, initialized) = try client(in: folder, capabilities: ["workspace": ["didChangeWatchedFiles": ["dynamicRegistration": true]]])
        let sync = (initialized["capabilities"] as? [String: Any])?["textDocumentSync"] as? [String: Any]
        #expect(sync?["save"] != nil, "\(initialized)")
        let registration = try client.next()
        #expect(registration["method"] as? String == "client/registerCapability" && "\(registration)".contains("workspace/didChangeWatchedFiles"), "\(registration)")
        // The client's answer to the registration is taken quietly.
        try client.send(["id": registration["id"] ?? NSNull(), "result": NSNull()])
        // A stray change to a schema never opened is not taken for its text.
        let v3 = folder.appendingPathComponent("schemas/v3.yaml").standardizedFileURL
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": v3.absoluteString, "version": 9],
                                                                          "contentChanges": [["range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 0]], "text": "x"]]]])
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        try open(client, mapping)
        let found = try client.diagnostics(for: mapping.absoluteString).compactMap { $0["message"] as? String }
        #expect(!found.contains { $0.contains("unknown destination version") }, "\(found)")
        let nameless = try client.response("", [:])
        #expect((nameless["error"] as? [String: Any])?["code"] as? Int == -32601)
        try client.send(["id": 77, "params": [:]])
        let missing = try client.next()
        #expect(missing["id"] as? Int == 77 && (missing["error"] as? [String: Any])?["code"] as? Int == -32600, "\(missing)")
        try client.close()
    }

    private func labels(_ client: LSPClient, _ path: URL, line: Int, character: Int) throws -> [String] {
        let completion = try client.request("textDocument/completion", ["textDocument": ["uri": path.absoluteString], "position": ["line": line, "character": character]]) as? [String: Any]
        return ((completion?["items"] as? [[String: Any]]) ?? []).compactMap { $0["label"] as? String }
    }

    /// A key being typed (`    s`, before its colon) left the file no YAML, and completion
    /// offered nothing there (after Enter and a letter, key completion was never shown); the value
    /// of `name:` and the end of `attributes:` were offered 45 expression functions; after `$`,
    /// `$entityMapping` and `$propertyMapping` were missing.
    @Test func keysAreCompletedWhileTypedAndOnlyExpressionsGetFunctions() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let original = try String(contentsOf: mapping, encoding: .utf8)
        let text = original + "  - name: Copy\n    s\n"
        let (client, _) = try client(in: folder)
        try open(client, mapping, text: text)
        let line = text.components(separatedBy: "\n").count - 2
        let keys = try labels(client, mapping, line: line, character: 5)
        #expect(keys.contains("source") && keys.contains("sourceExpression"), "\(keys)")
        let nameLine = line - 1
        #expect(try labels(client, mapping, line: nameLine, character: 14).isEmpty, "the value of name: is a name")
        let lines = original.components(separatedBy: "\n")
        let attributes = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "attributes:" })
        #expect(try labels(client, mapping, line: attributes, character: lines[attributes].count).isEmpty, "the end of attributes:")
        try client.send(change(mapping, version: 2, text: original + "  - name: Copy\n    source: Note\n    destination: Note\n    attributes:\n      title: $\n"))
        let variables = try labels(client, mapping, line: lines.count + 3, character: 14)
        #expect(variables.contains("$entityMapping") && variables.contains("$propertyMapping") && variables.contains("$source"), "\(variables)")
        // A key unfinished on another line than the cursor's: completion goes on there.
        try client.send(change(mapping, version: 3, text: original + "  - name: Copy\n    source: Note\n    destination: Note\n    attributes:\n      title: $source.\n    s\n"))
        let properties = try labels(client, mapping, line: lines.count + 3, character: 22)
        #expect(properties.contains("title") && properties.contains("body"), "\(properties)")
        try client.close()
    }

    /// Did-you-mean fixes (offered as quick fixes too) that led to a new error: `now` (on the way
    /// to `now()`) was offered `NO`, a boolean, for a date; a destination version no longer there
    /// was offered `v1`, older than the source `v2`, while `v4` exists; an empty `policy:` was
    /// told to write "a class  inheriting … in policies/.swift".
    @Test func fixesLeadWhereTheyShould() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let step = try folder.read("mappings/mapping_v2_to_v3.yaml")
        try folder.write(step.replacingOccurrences(of: "dateCreated: $source.dateCreated", with: "dateCreated: now"), to: "mappings/mapping_v2_to_v3.yaml")
        let now = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(now.stderr.contains("unknown key 'now' on Note; did you mean 'now()'?"), "\(now.stderr)")
        try folder.write(step.replacingOccurrences(of: "destination: v3", with: "destination: v0"), to: "mappings/mapping_v2_to_v3.yaml")
        let version = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(version.stderr.contains("unknown destination version 'v0'") && version.stderr.contains("did you mean 'v3'?") && !version.stderr.contains("did you mean 'v1'"), "\(version.stderr)")
        try folder.write(step, to: "mappings/mapping_v2_to_v3.yaml")
        let policy = try folder.read("mappings/mapping_v3_to_v4.yaml")
        try folder.write(policy.replacingOccurrences(of: "policy: UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4", with: "policy: ''"), to: "mappings/mapping_v3_to_v4.yaml")
        let empty = try CLI.run(["check", "mappings/mapping_v3_to_v4.yaml"], in: folder, environment: ["MAPC_CACHE": CLI.policyCache.path])
        #expect(empty.stderr.contains("'policy:' names no class") && !empty.stderr.contains("policies/.swift"), "\(empty.stderr)")
    }

    /// A document starting with a byte order mark: the server dropped the mark, and its ranges
    /// on the first line were one unit short of the client's (which counts the mark), and an
    /// incremental edit there landed one unit to the right, leaving `v2x` where the editor
    /// showed `v2`.
    @Test func aByteOrderMarkIsCountedOnTheFirstLine() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let (client, _) = try client(in: folder)
        try open(client, mapping, text: "\u{FEFF}source: v2x\ndestination: v3\nentityMappings: []\n")
        let found = try client.diagnostics(for: mapping.absoluteString)
        let typo = try #require(found.first { ($0["message"] as? String)?.contains("unknown source version 'v2x'") == true }, "\(found)")
        let range = typo["range"] as? [String: Any]
        #expect((range?["start"] as? [String: Any])?["character"] as? Int == 9 && (range?["end"] as? [String: Any])?["character"] as? Int == 12, "\(typo)")
        // The client deletes the x: units 11 to 12 of its first line, the mark counted.
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": mapping.absoluteString, "version": 2],
                         "contentChanges": [["range": ["start": ["line": 0, "character": 11], "end": ["line": 0, "character": 12]], "text": ""]]]])
        let after = try client.diagnostics(for: mapping.absoluteString).compactMap { $0["message"] as? String }
        #expect(!after.contains { $0.contains("unknown source version") }, "\(after)")
        try client.close()
    }

    /// Files changed on disk checked every open document once per open document, each with what
    /// depends on it (a save, which also comes as a watched change, published 46 times with seven
    /// files open; the review): each open document is checked once, and a change to an open
    /// document's own file (its save) is left to `didSave`.
    @Test func filesChangedOnDiskCheckEachOpenDocumentOnce() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let documents = ["mappings/mapping_v2_to_v3.yaml", "mappings/mapping_v3_to_v4.yaml", "schemas/v3.yaml", "schemas/v4.yaml"].map { folder.appendingPathComponent($0).standardizedFileURL }
        let (client, _) = try client(in: folder)
        for document in documents { try open(client, document) }
        try client.settle()
        client.notifications.removeAll()
        func watched(_ file: URL) -> [String: Any] {
            ["method": "workspace/didChangeWatchedFiles", "params": ["changes": [["uri": file.absoluteString, "type": 2]]]]
        }
        try client.send(watched(documents[0]))
        try client.settle()
        #expect(client.notifications.isEmpty, "an open document's own file: \(client.notifications.count) published")
        client.notifications.removeAll()
        try client.send(watched(folder.appendingPathComponent("schemas/v1.yaml").standardizedFileURL))
        try client.settle()
        let published = client.notifications.compactMap { ($0["params"] as? [String: Any])?["uri"] as? String }
        #expect(published.sorted() == documents.map(\.absoluteString).sorted(), "\(published)")
        try client.close()
    }

    /// Messages read before input that cannot be framed were dropped with it: an `initialize`
    /// followed by a broken message went unanswered (the review).
    @Test func messagesBeforeBrokenInputAreAnswered() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try LSPClient(in: folder)
        let initialize = try JSONSerialization.data(withJSONObject: ["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["capabilities": [:]]])
        client.write(Data("Content-Length: \(initialize.count)\r\n\r\n".utf8) + initialize + Data("Content-Type: none\r\n\r\n{}".utf8))
        let answer = try client.next()
        #expect(answer["id"] as? Int == 1 && answer["result"] != nil, "\(answer)")
        client.endInput()
        #expect(client.process.terminationStatus == 1)
    }
}
