import Foundation
import Testing

/// What a hostile and sloppy client found in `mapc lsp` (framing, protocol and document abuse).
@Suite("Defects found by the hostile-client probe of the language server")
struct LSPHostileClientFindingsTests {
    private func raw(_ client: LSPClient, _ bodies: [String]) {
        var data = Data()
        for body in bodies { data += Data("Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8) }
        client.write(data)
    }

    /// JSON-RPC 2.0: a notification is never answered (`initialize` without an id was answered
    /// with `"id": null` and initialized the server); a request is always answered (`didSave`,
    /// `initialized`, `$/cancelRequest` with an id never were); an invalid request, not an object
    /// or with an id of another type, is answered -32600 with a null id (`5` and `{}` were
    /// dropped, `"id": true` echoed); before `initialize` a notification is dropped (a `didOpen`
    /// was checked and published).
    @Test func requestsAndNotificationsAreTreatedAsJSONRPCSays() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try LSPClient(in: folder)
        let uri = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL.absoluteString
        raw(client, [
            #"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"\#(uri)","languageId":"yaml","version":1,"text":"source: v2\n"}}}"#,
            #"{"jsonrpc":"2.0","method":"initialize","params":{"capabilities":{}}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}"#,
        ])
        let refused = try client.next()
        #expect(refused["id"] as? Int == 1 && (refused["error"] as? [String: Any])?["code"] as? Int == -32002, "\(refused)")
        let initialized = try client.response("initialize", ["capabilities": [:]])
        #expect(initialized["result"] != nil, "\(initialized)")
        raw(client, [
            "5", "{}", #"{"jsonrpc":"2.0","id":true,"method":"foo"}"#,
            #"{"jsonrpc":"2.0","id":"s","method":"initialized","params":{}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"$/cancelRequest","params":{"id":99}}"#,
        ])
        var answers: [[String: Any]] = []
        for _ in 0..<5 { answers.append(try client.next()) }
        let invalid = answers.prefix(3)
        #expect(invalid.allSatisfy { $0["id"] is NSNull && ($0["error"] as? [String: Any])?["code"] as? Int == -32600 }, "\(answers)")
        #expect(answers[3]["id"] as? String == "s" && answers[3]["result"] is NSNull, "\(answers)")
        #expect(answers[4]["id"] as? Int == 7 && answers[4]["result"] is NSNull, "\(answers)")
        try client.settle()
        // Nothing was published for the document opened before `initialize`.
        #expect(!client.notifications.contains { ($0["params"] as? [String: Any])?["uri"] as? String == uri }, "\(client.notifications)")
        try client.close()
    }

    /// Members a client adds are its own: `"mapc.skippedBytes": 5` on a `shutdown` showed "the
    /// editor sent a message of 5 bytes … it was skipped" and left it unanswered, and
    /// `"mapc.parseError"` on a hover answered it "not JSON".
    @Test func aClientsMembersDoNotMarkItsMessage() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["capabilities": [:]])
        raw(client, [#"{"jsonrpc":"2.0","id":50,"method":"textDocument/hover","mapc.parseError":1,"params":{"textDocument":{"uri":"file:///nowhere.yaml"},"position":{"line":0,"character":0}}}"#])
        let hover = try client.next()
        #expect(hover["id"] as? Int == 50 && hover["error"] == nil, "\(hover)")
        raw(client, [#"{"jsonrpc":"2.0","id":51,"method":"shutdown","mapc.skippedBytes":5}"#])
        let shutdown = try client.next()
        #expect(shutdown["id"] as? Int == 51 && shutdown["result"] is NSNull, "\(shutdown)")
        try client.send(["method": "exit"])
        client.process.waitUntilExit()
        #expect(client.process.terminationStatus == 0)
    }

    /// A diagnostic quoted what the file held whole: a version of a million characters was sent
    /// in a message of a million characters (and `check` of a link to /etc/passwd printed it).
    @Test func aDiagnosticQuotesABoundedPartOfALongValue() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: UnCloudNotes\nversion: " + String(repeating: "v", count: 1_000_000) + "\nentities: {}\n", to: "schemas/long.yaml")
        let check = try CLI.run(["check", "schemas/long.yaml"], in: folder)
        #expect(check.status == 1 && check.stdout.count + check.stderr.count < 10_000 && (check.stdout + check.stderr).contains("characters left out"),
                "\((check.stdout + check.stderr).count) characters")
    }

    /// A policy file that does not compile (half typed) stopped the server before `initialize`
    /// was answered, exit 1, the reason on standard error only: every schema and mapping feature
    /// was gone. The server starts without the policies and tells the editor why.
    @Test func aPolicyThatDoesNotCompileLeavesTheServerWorking() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let policies = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("policies").path).filter { $0.hasSuffix(".swift") }
        let file = "policies/" + (try #require(policies.first))
        try folder.write(try folder.read(file) + "\nthis is not swift {\n", to: file)
        let client = try LSPClient(in: folder)
        let initialized = try client.response("initialize", ["capabilities": [:]])
        #expect(initialized["result"] != nil, "\(initialized)")
        try client.settle()
        let shown = client.notifications.compactMap { $0["method"] as? String == "window/showMessage" ? ($0["params"] as? [String: Any])?["message"] as? String : nil }
        #expect(shown.contains { $0.contains("policies were not loaded") }, "\(shown)")
        // Schema features work: a hover in a schema file is answered.
        let schema = folder.appendingPathComponent("schemas/v1.yaml").standardizedFileURL
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": schema.absoluteString, "languageId": "yaml", "version": 1, "text": try folder.read("schemas/v1.yaml")]]])
        #expect(try client.diagnostics(for: schema.absoluteString).isEmpty)
        // A mapping naming one of its policies is told they were not loaded, not to write the class.
        let mapping = folder.appendingPathComponent("mappings/mapping_v3_to_v4.yaml").standardizedFileURL
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": mapping.absoluteString, "languageId": "yaml", "version": 1, "text": try folder.read("mappings/mapping_v3_to_v4.yaml")]]])
        let messages = try client.diagnostics(for: mapping.absoluteString).compactMap { $0["message"] as? String }
        #expect(messages.contains { $0.contains("policy files were not loaded") } && !messages.contains { $0.contains("write a class") }, "\(messages)")
        try client.close()
    }

    /// A notification's method sent with an id is a request, refused as any before `initialize`
    /// (-32002) and after `shutdown` (-32600): it was answered `null`, and done after `shutdown`
    /// (the review).
    @Test func aNotificationWithAnIdKeepsTheLifecycleRules() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try LSPClient(in: folder)
        let uri = folder.appendingPathComponent("schemas/v1.yaml").standardizedFileURL.absoluteString
        let open: [String: Any] = ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": "model: M\n"]]
        let before = try client.response("textDocument/didOpen", open)
        #expect((before["error"] as? [String: Any])?["code"] as? Int == -32002, "\(before)")
        _ = try client.request("initialize", ["capabilities": [:]])
        _ = try client.request("shutdown", [:])
        let after = try client.response("textDocument/didOpen", open)
        #expect((after["error"] as? [String: Any])?["code"] as? Int == -32600, "\(after)")
        #expect(!client.notifications.contains { $0["method"] as? String == "textDocument/publishDiagnostics" }, "\(client.notifications)")
        try client.send(["method": "exit"])
        client.process.waitUntilExit()
    }
}
