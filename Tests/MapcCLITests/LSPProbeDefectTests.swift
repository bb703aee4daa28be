import Foundation
import Testing

/// Defects a probe of the language server on real apps' imported projects found: diagnostics
/// `mapc check` gives that the server did not, positions lost, and every open mapping checked
/// again on each keystroke in any schema.
@Suite("Defects found by a probe of the language server", .serialized)
struct LSPProbeDefectTests {
    /// A client started in a project, initialized.
    private func client(in folder: URL) throws -> LSPClient {
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        try client.send(["method": "initialized", "params": [:]])
        return client
    }

    private func open(_ client: LSPClient, _ path: URL, text: String? = nil, version: Int = 1) throws {
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": path.absoluteString, "languageId": "yaml", "version": version,
                                                                                       "text": try text ?? String(contentsOf: path, encoding: .utf8)]]])
    }

    private func messages(_ diagnostics: [[String: Any]]) -> [String] { diagnostics.compactMap { $0["message"] as? String } }

    /// The diagnostics messages published for a document before the answer to a request sent now
    /// (the server publishes what edits call for before it answers a request other than completion, hover, definition or a fix): each publication's, without
    /// waiting for one that may never come.
    private func publishedBeforeAnAnswer(_ client: LSPClient, for path: URL) throws -> [[String]] {
        client.notifications.removeAll { ($0["params"] as? [String: Any])?["uri"] as? String != path.absoluteString }
        let kept = client.notifications
        client.notifications.removeAll()
        try client.settle()
        return (kept + client.notifications).filter { ($0["params"] as? [String: Any])?["uri"] as? String == path.absoluteString }
            .map { messages((($0["params"] as? [String: Any])?["diagnostics"] as? [[String: Any]]) ?? []) }
    }

    /// Two mapping files of one step, and a version the order leaves out: `mapc check` says both,
    /// the server said neither (it published no diagnostics).
    @Test func theServerSaysWhatCheckSaysOfTheFolder() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mappings = folder.appendingPathComponent("mappings").standardizedFileURL
        try FileManager.default.copyItem(at: mappings.appendingPathComponent("mapping_v2_to_v3.yaml"), to: mappings.appendingPathComponent("mapping_v2_to_v3_copy.yaml"))
        let schemas = folder.appendingPathComponent("schemas").standardizedFileURL
        try String(contentsOf: schemas.appendingPathComponent("v4.yaml"), encoding: .utf8).replacingOccurrences(of: "version: v4", with: "version: v5")
            .write(to: schemas.appendingPathComponent("v5.yaml"), atomically: true, encoding: .utf8)
        let client = try client(in: folder)
        let copy = mappings.appendingPathComponent("mapping_v2_to_v3_copy.yaml")
        try open(client, copy)
        let clash = messages(try client.diagnostics(for: copy.absoluteString))
        #expect(clash.contains { $0.hasPrefix("this file maps v2 to v3, and so does") }, "\(clash)")
        let order = schemas.appendingPathComponent("versions.yaml")
        try open(client, order)
        let missing = messages(try client.diagnostics(for: order.absoluteString))
        #expect(missing.contains { $0.hasPrefix("version 'v5' (") && $0.contains("is missing from the version order") }, "\(missing)")
        try client.close()
        // What `check` says of the same files.
        let check = try CLI.run(["check"], in: folder)
        #expect(check.stderr.contains("this file maps v2 to v3, and so does") && check.stderr.contains("version 'v5' (./schemas/v5.yaml) is missing from the version order"), "\(check.stderr)")
    }

    /// A schema half typed (its YAML unreadable) made its version unknown to the mappings of it,
    /// which were told "did you mean 'v2'?", a fix that rewrote them to the wrong version: they
    /// are told its file has errors, in the editor and in `mapc check`.
    @Test func aHalfTypedSchemasMappingsAreToldItsFileHasErrors() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let schema = folder.appendingPathComponent("schemas/v3.yaml").standardizedFileURL
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let halfTyped = try String(contentsOf: schema, encoding: .utf8) + "      caption: { type: strin\n"
        let client = try client(in: folder)
        try open(client, mapping)
        _ = try client.diagnostics(for: mapping.absoluteString)
        try open(client, schema, text: halfTyped)
        let told = messages(try client.diagnostics(for: mapping.absoluteString))
        #expect(told.contains { $0.contains("this mapping is not checked against destination version 'v3': its schema file has errors") }
                && !told.contains { $0.contains("did you mean") }, "\(told)")
        try client.close()
        try halfTyped.write(to: schema, atomically: true, encoding: .utf8)
        let check = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(check.stderr.contains("not checked against destination version 'v3': its schema file has errors") && !check.stderr.contains("did you mean 'v2'"), "\(check.stderr)")
    }

    /// Lines ended by a carriage return alone (old Mac files): YAML and LSP count them as lines,
    /// but the server's lines did not, and every position became column 0 of its line.
    @Test func positionsInAFileOfCarriageReturnsAreKept() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let text = try String(contentsOf: mapping, encoding: .utf8).replacingOccurrences(of: "$source.title", with: "$source.titl").replacingOccurrences(of: "\n", with: "\r")
        let lines = text.components(separatedBy: "\r")
        let line = try #require(lines.firstIndex { $0.contains("$source.titl") })
        let column = try #require(lines[line].range(of: "$source.titl")).lowerBound.utf16Offset(in: lines[line]) + "$source.".utf16.count
        let client = try client(in: folder)
        try open(client, mapping, text: text)
        let found = try client.diagnostics(for: mapping.absoluteString)
        let typo = try #require(found.first { ($0["message"] as? String)?.contains("unknown key 'titl'") == true }, "\(found)")
        let range = typo["range"] as? [String: Any], start = range?["start"] as? [String: Any], end = range?["end"] as? [String: Any]
        #expect(start?["line"] as? Int == line && start?["character"] as? Int == column && end?["character"] as? Int == column + 4, "\(typo)")
        try client.close()
    }

    /// A keystroke in a schema checked every open mapping again (with 24 documents open, 115 ms a
    /// keystroke; typed faster, diagnostics 2.4 s behind): only the mappings of its version, or
    /// across it, are. Edits the client sent together are checked once, at the last text.
    @Test func anEditChecksWhatItMayChangeOnceTheInputIsRead() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let schema = folder.appendingPathComponent("schemas/v4.yaml").standardizedFileURL
        let near = folder.appendingPathComponent("mappings/mapping_v3_to_v4.yaml").standardizedFileURL
        let far = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let client = try client(in: folder)
        for path in [near, far, schema] { try open(client, path) }
        // Everything the opening published comes before a request's answer.
        try client.settle()
        client.notifications.removeAll()
        // Three edits sent at once: the schema's diagnostics are published for the last.
        let original = try String(contentsOf: schema, encoding: .utf8)
        try client.sendTogether(["# a", "# ab", "# abc"].enumerated().map { version, typed in
            ["method": "textDocument/didChange", "params": ["textDocument": ["uri": schema.absoluteString, "version": version + 2], "contentChanges": [["text": original + typed + "\n"]]]]
        })
        try client.settle()
        let published = client.notifications.filter { ($0["params"] as? [String: Any])?["uri"] as? String == schema.absoluteString }
        #expect(published.count == 1 && (published.first?["params"] as? [String: Any])?["version"] as? Int == 4, "\(published)")
        // The mapping into v4 was checked again; the one from v2 to v3 was not.
        let mappings = client.notifications.compactMap { ($0["params"] as? [String: Any])?["uri"] as? String }.filter { $0 != schema.absoluteString }
        #expect(mappings == [near.absoluteString], "\(mappings)")
        try client.close()
    }
    /// A definition's range was one character wide; an unknown version was "in the schemas",
    /// naming no folder; `mapc check` of a version order file with a YAML error said it twice
    /// (once as named, once as the folder reads it).
    @Test func definitionsCoverTheNameAndMessagesNameTheFolder() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let text = try String(contentsOf: mapping, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let line = try #require(lines.firstIndex { $0.contains("$source.title") })
        let column = try #require(lines[line].range(of: "$source.title")).lowerBound.utf16Offset(in: lines[line]) + "$source.".utf16.count + 1
        let client = try client(in: folder)
        try open(client, mapping, text: text.replacingOccurrences(of: "source: v2", with: "source: v9"))
        let unknown = messages(try client.diagnostics(for: mapping.absoluteString))
        let schemas = folder.appendingPathComponent("schemas").standardizedFileURL.path
        #expect(unknown.contains { $0.contains("unknown source version 'v9' in \(schemas)") }, "\(unknown)")
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": mapping.absoluteString, "version": 2], "contentChanges": [["text": text]]]])
        let definition = try client.request("textDocument/definition", ["textDocument": ["uri": mapping.absoluteString], "position": ["line": line, "character": column]]) as? [String: Any]
        let range = definition?["range"] as? [String: Any]
        let start = (range?["start"] as? [String: Any])?["character"] as? Int, end = (range?["end"] as? [String: Any])?["character"] as? Int
        #expect(start != nil && end.map { $0 - (start ?? 0) } == "title".count, "\(String(describing: definition))")
        try client.close()
        try "versions: [v1, v2, v3, v4\n".write(to: folder.appendingPathComponent("schemas/versions.yaml"), atomically: true, encoding: .utf8)
        let check = try CLI.run(["check", "schemas/versions.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.components(separatedBy: "did not find expected ',' or ']'").count == 2, "\(check.stderr)")
    }
    /// A review's finds: a schema's version was recorded only while a mapping was open, so a
    /// mapping opened after the schema was not checked again when the schema's version changed;
    /// and which mappings clash was kept for the last project checked, so in a server of two
    /// projects a clash that ended in one stayed on screen.
    @Test func editsAreFollowedAcrossTheOrderOfOpeningAndAcrossProjects() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-lsp-\(UUID().uuidString)").standardizedFileURL
        defer { try? FileManager.default.removeItem(at: parent) }
        var projects: [URL] = []
        for name in ["a", "b"] {
            let folder = try CLI.project()
            try CLI.addMappingsAndPolicies(to: folder)
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            try FileManager.default.moveItem(at: folder, to: parent.appendingPathComponent(name))
            projects.append(parent.appendingPathComponent(name))
        }
        let (a, b) = (projects[0], projects[1])
        let client = try client(in: parent)
        // The schema first, then a mapping of its version; then the schema's version changes.
        let schema = a.appendingPathComponent("schemas/v3.yaml"), mapping = a.appendingPathComponent("mappings/mapping_v3_to_v4.yaml")
        try open(client, schema)
        _ = try client.diagnostics(for: schema.absoluteString)
        try open(client, mapping)
        _ = try client.diagnostics(for: mapping.absoluteString)
        let renamed = try String(contentsOf: schema, encoding: .utf8).replacingOccurrences(of: "version: v3", with: "version: v3x")
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": schema.absoluteString, "version": 2], "contentChanges": [["text": renamed]]]])
        let told = try publishedBeforeAnAnswer(client, for: mapping)
        #expect(told.count == 1 && told[0].contains { $0.contains("unknown source version 'v3'") }, "\(told)")
        // Two mapping files of one step in b, then a mapping of a, then the clash in b ends.
        let first = b.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"), second = b.appendingPathComponent("mappings/mapping_v2_to_v3_again.yaml")
        let text = try String(contentsOf: first, encoding: .utf8)
        try text.write(to: second, atomically: true, encoding: .utf8)
        try open(client, first)
        _ = try client.diagnostics(for: first.absoluteString)
        try open(client, second)
        #expect(messages(try client.diagnostics(for: second.absoluteString)).contains { $0.hasPrefix("this file maps v2 to v3") })
        try open(client, a.appendingPathComponent("mappings/mapping_v2_to_v3.yaml"))
        _ = try client.diagnostics(for: a.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").absoluteString)
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": first.absoluteString, "version": 2],
                                                                          "contentChanges": [["text": text.replacingOccurrences(of: "destination: v3", with: "destination: v4")]]]])
        let cleared = try publishedBeforeAnAnswer(client, for: second)
        #expect(cleared.count == 1 && !cleared[0].contains { $0.hasPrefix("this file maps v2 to v3") }, "\(cleared)")
        try client.close()
    }
}

extension LSPProbeDefectTests {
    /// Definitions the probe found missing, through the server: a mapping's policy leads to its
    /// class in the project's policy files (named with a module, as the shipped mapping names
    /// it), a property mapping's key to the destination's property, and hover on the key says
    /// both what the expression gives and what it sets.
    @Test func aPolicyAndADestinationKeyHaveDefinitions() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mapping = folder.appendingPathComponent("mappings/mapping_v3_to_v4.yaml").standardizedFileURL
        let lines = try String(contentsOf: mapping, encoding: .utf8).components(separatedBy: "\n")
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        try open(client, mapping)
        func request(_ method: String, _ line: Int, _ character: Int) throws -> [String: Any]? {
            try client.request(method, ["textDocument": ["uri": mapping.absoluteString], "position": ["line": line, "character": character]]) as? [String: Any]
        }
        let policyLine = try #require(lines.firstIndex { $0.contains("policy: UnCloudNotes.") })
        let definition = try request("textDocument/definition", policyLine, lines[policyLine].utf16.count - 3)
        let policies = folder.appendingPathComponent("policies/UnCloudNotesPolicies.swift").standardizedFileURL
        let classLine = try #require(String(contentsOf: policies, encoding: .utf8).components(separatedBy: "\n").firstIndex { $0.contains("class AttachmentToImageAttachmentMigrationPolicyV3toV4") })
        #expect(definition?["uri"] as? String == policies.absoluteString, "\(definition ?? [:])")
        let start = (definition?["range"] as? [String: Any])?["start"] as? [String: Any]
        #expect(start?["line"] as? Int == classLine && start?["character"] as? Int == "public final class ".count, "\(definition ?? [:])")
        let hover = try request("textDocument/hover", policyLine, lines[policyLine].utf16.count - 3)
        #expect(((hover?["contents"] as? [String: Any])?["value"] as? String)?.hasPrefix("policy UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4") == true, "\(hover ?? [:])")
        // A destination key.
        let keyLine = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("image: $source.image") })
        let column = try #require(lines[keyLine].range(of: "image")).lowerBound.utf16Offset(in: lines[keyLine]) + 1
        let key = try request("textDocument/definition", keyLine, column)
        #expect((key?["uri"] as? String)?.hasSuffix("schemas/v4.yaml") == true, "\(key ?? [:])")
        let summary = try request("textDocument/hover", keyLine, column)
        let said = (summary?["contents"] as? [String: Any])?["value"] as? String ?? ""
        #expect(said.hasPrefix("image = $source.image: binary") && said.hasSuffix("\n\ninto ImageAttachment.image: binary, optional (can be nil) in v4"), "\(said)")
        try client.close()
    }
}

extension LSPProbeDefectTests {
    /// Diagnostics went back under mapc's spelling of a document's URI (`@` for the client's
    /// `%40`, `+` for `%2B`): a client that matches by its own spelling never saw them.
    @Test func diagnosticsGoBackUnderTheClientsURI() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-lsp-\(UUID().uuidString)")
        let folder = parent.appendingPathComponent("app@1+2")
        defer { try? FileManager.default.removeItem(at: parent) }
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: try CLI.project(), to: folder)
        try CLI.addMappingsAndPolicies(to: folder)
        let path = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL.path
        let written = "file://" + path.replacingOccurrences(of: "@", with: "%40").replacingOccurrences(of: "+", with: "%2B")
        let client = try client(in: folder)
        let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "$source.title", with: "$source.titel")
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": written, "languageId": "yaml", "version": 1, "text": text]]])
        try client.settle()
        let published = client.notifications.compactMap { ($0["params"] as? [String: Any])?["uri"] as? String }
        #expect(published.contains(written), "\(published)")
        try client.close()
    }
}
