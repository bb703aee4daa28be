import Foundation
import Testing

/// Defects a probe of positions and diagnostics as an editor user meets them found.
@Suite("Defects found by a probe of positions in the editor")
struct EditorProbeDefectTests {
    /// An error inside an expression written in YAML quotes with `''` or escapes, after a tag or
    /// an anchor, or over several lines (folded, or a block scalar) was placed by counting the
    /// value's characters from where the node starts: the caret, and the editor's "did you mean"
    /// fix, landed on other characters (accepting the fix rewrote `$source.body` as
    /// `$sourcbodyyy`). Each is placed on the characters it names now.
    @Test(arguments: [
        // Line 14 of the v2 -> v3 mapping as written.
        #"      body: 'TERNARY($source.title == ''🍣'', $source.bodyy, "x")'"#,
        #"      body: "TERNARY($source.title == \"\u00e9\U0001F363\", $source.bodyy, \"x\")""#,
        "      body: !!str $source.bodyy",
        "      body: &b $source.bodyy",
        "      body: TERNARY($source.title == \"x\",\n          $source.bodyy, \"x\")",
        "      body: |\n        TERNARY($source.title == \"x\",\n                $source.bodyy, \"x\")",
        "      body: >-\n        TERNARY($source.title == \"x\", $source.bodyy, \"x\")",
    ])
    func anErrorInsideAWrittenValueIsPlacedOnItsCharacters(line14: String) throws {
        // Where `bodyy` is in the file: its line, and its column in Unicode scalars.
        let written = line14.components(separatedBy: "\n")
        let offset = written.firstIndex { $0.contains("bodyy") } ?? 0
        let line = 14 + offset
        let column = written[offset].unicodeScalars.count - (written[offset].components(separatedBy: "bodyy").last ?? "").unicodeScalars.count - 5 + 1
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let path = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        var lines = try String(contentsOf: path, encoding: .utf8).components(separatedBy: "\n")
        #expect(lines[13] == "      body: $source.body")
        lines[13] = line14
        try lines.joined(separator: "\n").write(to: path, atomically: true, encoding: .utf8)
        let check = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(check.status == 1)
        #expect(check.stderr.contains("mappings/mapping_v2_to_v3.yaml:\(line):\(column): error: ") && check.stderr.contains("bodyy"), "\(check.stderr)")
        // The caret line underlines `bodyy` (`^~~~~`) under it, in the line quoted.
        let rendered = check.stderr.components(separatedBy: "\n")
        if let quoted = rendered.firstIndex(where: { $0.contains("$source.bodyy") }), quoted + 1 < rendered.count {
            let caret = rendered[quoted + 1]
            let text = rendered[quoted]
            let underlined = zip(text.unicodeScalars, caret.unicodeScalars).filter { $0.1 == "^" || $0.1 == "~" }.map { Character($0.0) }
            #expect(String(underlined) == "bodyy", "\(text)\n\(caret)")
        } else {
            Issue.record("no quoted line: \(check.stderr)")
        }
    }
}

extension EditorProbeDefectTests {
    /// Text after a quoted value on its line (`body: "Note: " + $source.body`, as the docs' advice
    /// to quote a value holding ': ' leads to) and an unclosed quote were told to indent the line.
    /// They are told what YAML saw, with the line quoted as it should be.
    @Test func quotingMistakesAreToldForWhatTheyAre() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let path = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        let original = try String(contentsOf: path, encoding: .utf8)
        try original.replacingOccurrences(of: "      body: $source.body", with: #"      body: "Note: " + $source.body"#).write(to: path, atomically: true, encoding: .utf8)
        let after = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(after.status == 1 && after.stderr.contains("a quoted value ends at its closing quote") && after.stderr.contains(#"body: '"Note: " + $source.body'"#)
                && !after.stderr.contains("indent this line"), "\(after.stderr)")
        try original.replacingOccurrences(of: "      body: $source.body", with: #"      body: "abc"#).write(to: path, atomically: true, encoding: .utf8)
        let unclosed = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(unclosed.status == 1 && unclosed.stderr.contains("the quote opened at line 14, column 13 is not closed on its line"), "\(unclosed.stderr)")
    }

    /// A schema file copied from another and its `version:` left as it was: the duplicate was
    /// placed at the file's first line (a comment), and the version order's entry for the file's
    /// own version suggested a similar name; a version left out of the order was placed at 1:1.
    @Test func versionDeclarationsArePlacedOnTheirLines() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v3 = folder.appendingPathComponent("schemas/v3.yaml")
        try (try String(contentsOf: v3, encoding: .utf8)).replacingOccurrences(of: "version: v3", with: "version: v2").write(to: v3, atomically: true, encoding: .utf8)
        let check = try CLI.run(["check"], in: folder)
        #expect(check.stderr.contains("schemas/v3.yaml:6:10: error: version 'v2' is also declared by"), "\(check.stderr)")
        #expect(check.stderr.contains("version 'v3' is listed, but no schema file declares it; ./schemas/v3.yaml declares version 'v2'"), "\(check.stderr)")
        // The file alone: the folder's word on it (another file declares its version) is said too.
        let alone = try CLI.run(["check", "schemas/v3.yaml"], in: folder)
        #expect(alone.status == 1 && alone.stderr.contains("schemas/v3.yaml:6:10: error: version 'v2' is also declared by") && alone.stderr.contains("version: v2\n         ^~"), "\(alone.stderr)")
        try (try String(contentsOf: v3, encoding: .utf8)).replacingOccurrences(of: "version: v2", with: "version: v3").write(to: v3, atomically: true, encoding: .utf8)
        try folder.write("versions: [v1, v2, v3]\n", to: "schemas/versions.yaml")
        let missing = try CLI.run(["check"], in: folder)
        #expect(missing.stderr.contains("schemas/versions.yaml:1:20: error: version 'v4'"), "\(missing.stderr)")
    }
}

extension EditorProbeDefectTests {
    /// A name with a letter outside ASCII (`Nöte`) was told to "use a letter", which ö is.
    @Test func aNameOutsideASCIIIsToldWhichLettersAreNames() throws {
        let folder = try CLI.project(versions: [("v1", "  Nöte:\n    attributes:\n      title: string\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("entity name 'Nöte' is not a valid name; use an ASCII letter (a-z, A-Z)"), "\(check.stderr)")
    }
}

extension EditorProbeDefectTests {
    /// A TERNARY whose branches are of two types (a string and an integer) was of no known type
    /// to the checker: a branch the attribute cannot hold passed `check` and failed the run.
    @Test func eachBranchOfATernaryIsCheckedAgainstItsAttribute() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let path = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        let original = try String(contentsOf: path, encoding: .utf8)
        try original.replacingOccurrences(of: "      body: $source.body", with: #"      body: TERNARY($source.title == "x", $source.body, 2)"#).write(to: path, atomically: true, encoding: .utf8)
        let check = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(check.status == 1 && check.stderr.contains("an integer result cannot be stored in attribute 'Note.body' (string)"), "\(check.stderr)")
        // A guard against nil in the condition still rules nil out of the whole.
        try original.replacingOccurrences(of: "      body: $source.body", with: #"      body: TERNARY($source.image != nil, "with a picture", $source.body)"#).write(to: path, atomically: true, encoding: .utf8)
        let guarded = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(guarded.status == 0 && !guarded.stderr.contains("can be nil"), "\(guarded.stderr)")
    }
}

/// The language server as an editor user met it while typing across files.
@Suite("Defects found by a probe of the language server", .serialized)
struct LanguageServerProbeDefectTests {
    private func opened(_ folder: URL) throws -> (client: LSPClient, mapping: String, uri: String) {
        let mappingPath = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL.path
        let client = try LSPClient(in: folder)
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        try client.send(["method": "initialized", "params": [:]])
        return (client, mappingPath, URL(fileURLWithPath: mappingPath).absoluteString)
    }

    /// An error in one version's schema file (half typed in another tab, or an old version no
    /// mapping uses) switched off every mapping's check: `check` reported only the schema's
    /// errors, the server one diagnostic at 0:0 and no completion. A mapping is checked against
    /// the versions that load; one naming the broken version is told why it is not checked.
    @Test func aBrokenVersionElsewhereDoesNotStopAMappingsCheck() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let v1 = folder.appendingPathComponent("schemas/v1.yaml")
        try (try String(contentsOf: v1, encoding: .utf8)).replacingOccurrences(of: "type: string", with: "type: strin").write(to: v1, atomically: true, encoding: .utf8)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        let original = try String(contentsOf: mapping, encoding: .utf8)
        try original.replacingOccurrences(of: "body: $source.body", with: "body: $source.bodyy").write(to: mapping, atomically: true, encoding: .utf8)
        let check = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        // v1's own errors are its file's: the mapping (v2 -> v3) does not use it.
        #expect(check.status == 1 && check.stderr.contains("unknown key 'bodyy' on Note") && !check.stderr.contains("schemas/v1.yaml:"), "\(check.stderr)")

        try original.write(to: mapping, atomically: true, encoding: .utf8)
        let (client, _, uri) = try opened(folder)
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1,
                                                                                       "text": original.replacingOccurrences(of: "body: $source.body", with: "body: $source.bodyy")]]])
        let diagnostics = try client.diagnostics(for: uri)
        #expect(diagnostics.contains { ($0["message"] as? String)?.contains("unknown key 'bodyy' on Note") == true }, "\(diagnostics)")
        #expect(!diagnostics.contains { ($0["message"] as? String)?.contains("has errors") == true }, "\(diagnostics)")
        // A mapping from the broken version is told so, at its version.
        let v1Mapping = folder.appendingPathComponent("mappings/mapping_v1_to_v2.yaml").standardizedFileURL
        try folder.write("source: v1\ndestination: v2\nentityMappings: []\n", to: "mappings/mapping_v1_to_v2.yaml")
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": v1Mapping.absoluteString, "languageId": "yaml", "version": 1,
                                                                                       "text": "source: v1\ndestination: v2\nentityMappings: []\n"]]])
        let fromBroken = try client.diagnostics(for: v1Mapping.absoluteString)
        #expect(fromBroken.contains { ($0["message"] as? String)?.contains("not checked against source version 'v1': its schema file has errors") == true }, "\(fromBroken)")
        try client.close()
    }

    /// Closing a schema edited and not saved left the open mappings with diagnostics of the
    /// text that was never saved: they are checked again against the file on disk.
    @Test func closingAnUnsavedSchemaChecksTheMappingsAgain() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let (client, mapping, uri) = try opened(folder)
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": try String(contentsOfFile: mapping, encoding: .utf8)]]])
        #expect(try client.diagnostics(for: uri).filter { $0["severity"] as? Int == 1 }.isEmpty)
        let schema = folder.appendingPathComponent("schemas/v3.yaml").standardizedFileURL
        let text = try String(contentsOf: schema, encoding: .utf8)
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": schema.absoluteString, "languageId": "yaml", "version": 1, "text": text]]])
        #expect(try client.diagnostics(for: uri).filter { $0["severity"] as? Int == 1 }.isEmpty)
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": schema.absoluteString, "version": 2],
                                                                        "contentChanges": [["text": text.replacingOccurrences(of: "title:", with: "titl:")]]]])
        #expect(try client.diagnostics(for: uri).contains { $0["severity"] as? Int == 1 })
        try client.send(["method": "textDocument/didClose", "params": ["textDocument": ["uri": schema.absoluteString]]])
        #expect(try client.diagnostics(for: schema.absoluteString).isEmpty)
        let after = try client.diagnostics(for: uri)
        #expect(after.filter { $0["severity"] as? Int == 1 }.isEmpty, "\(after)")
        try client.close()
    }

    /// `check --update-hashes` of a file with CRLF line endings (written on Windows) did nothing
    /// and said again to run `check --update-hashes`; the server offered no action for it. Both
    /// record the hashes now, keeping the file's line endings; the action's edit ends inside the
    /// document.
    @Test func hashesAreRecordedInAFileWithCRLFLineEndings() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let v3 = folder.appendingPathComponent("schemas/v3.yaml")
        try (try String(contentsOf: v3, encoding: .utf8)).replacingOccurrences(of: "      body:         { type: string }\n", with: "      body:         { type: string }\n      extra: {type: string, optional: true}\n")
            .write(to: v3, atomically: true, encoding: .utf8)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml")
        let crlf = (try String(contentsOf: mapping, encoding: .utf8)).replacingOccurrences(of: "\n", with: "\r\n")
        try crlf.write(to: mapping, atomically: true, encoding: .utf8)
        let stale = try CLI.run(["check", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(stale.status == 1 && stale.stderr.contains("stale destination hash"), "\(stale.stderr)")

        let (client, path, uri) = try opened(folder)
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": crlf]]])
        let diagnostics = try client.diagnostics(for: uri).filter { ($0["message"] as? String)?.hasPrefix("stale ") == true }
        #expect(!diagnostics.isEmpty)
        let actions = try client.request("textDocument/codeAction", ["textDocument": ["uri": uri], "range": diagnostics.first?["range"] as Any, "context": ["diagnostics": diagnostics]]) as? [[String: Any]] ?? []
        let record = try #require(actions.first { ($0["title"] as? String)?.hasPrefix("Record the current entity hashes") == true }, "\(actions)")
        let edit = ((((record["edit"] as? [String: Any])?["changes"] as? [String: Any])?[uri] as? [[String: Any]])?.first)
        let end = (edit?["range"] as? [String: Any])?["end"] as? [String: Any]
        let lineCount = crlf.components(separatedBy: "\r\n").count
        #expect(end?["line"] as? Int == lineCount - 1, "\(end ?? [:])")
        try client.close()
        _ = path

        let update = try CLI.run(["check", "--update-hashes", "mappings/mapping_v2_to_v3.yaml"], in: folder)
        #expect(update.status == 0, "\(update.stderr)")
        let updated = try String(contentsOf: mapping, encoding: .utf8)
        #expect(updated != crlf && updated.contains("extra: ") && !updated.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "line endings kept")
    }

    /// On a line that continues an expression (a block scalar's), completion after `$source.`
    /// offered the destination's attribute names, as if a key were being typed there.
    @Test func completionInsideABlockScalarIsAnExpressions() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let (client, mapping, uri) = try opened(folder)
        let text = try String(contentsOfFile: mapping, encoding: .utf8)
            .replacingOccurrences(of: "      body: $source.body\n", with: "      body: |\n        TERNARY($source.title == \"x\",\n                $source.body, \"x\")\n")
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": text]]])
        let lines = text.components(separatedBy: "\n")
        let line = try #require(lines.firstIndex { $0.hasPrefix("                $source.body") })
        let character = "                $source.".utf16.count
        let completion = try client.request("textDocument/completion", ["textDocument": ["uri": uri], "position": ["line": line, "character": character]]) as? [String: Any]
        let labels = ((completion?["items"] as? [[String: Any]]) ?? []).compactMap { $0["label"] as? String }
        #expect(labels.contains("image") && labels.contains("title"), "the source's properties (v2 Note has image): \(labels)")
        try client.close()
    }

    /// A request before `initialize` was answered with a null result, where LSP says -32002; the
    /// diagnostics carried no document version, so a client could not drop stale ones.
    @Test func protocolDetailsAreAsLSPSays() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let mapping = folder.appendingPathComponent("mappings/mapping_v2_to_v3.yaml").standardizedFileURL
        let client = try LSPClient(in: folder)
        let early = try client.response("textDocument/hover", ["textDocument": ["uri": mapping.absoluteString], "position": ["line": 0, "character": 0]])
        #expect((early["error"] as? [String: Any])?["code"] as? Int == -32002, "\(early)")
        _ = try client.request("initialize", ["processId": NSNull(), "rootUri": folder.absoluteString, "capabilities": [:]])
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": mapping.absoluteString, "languageId": "yaml", "version": 7,
                                                                                       "text": try String(contentsOf: mapping, encoding: .utf8)]]])
        #expect(try client.published(for: mapping.absoluteString)["version"] as? Int == 7)
        try client.close()
    }

    /// With an editor configured for every YAML file, another tool's file (`docker-compose.yaml`)
    /// got four errors, and a Markdown document "the file is empty": neither is mapc's.
    @Test func otherFilesGetNoDiagnostics() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (client, _, _) = try opened(folder)
        for (name, language, text) in [("docker-compose.yaml", "yaml", "services:\n  web:\n    image: nginx\n"), ("README.md", "markdown", "")] {
            let uri = folder.appendingPathComponent(name).standardizedFileURL.absoluteString
            try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": language, "version": 1, "text": text]]])
            #expect(try client.diagnostics(for: uri).isEmpty, "\(name)")
        }
        // A schema file outside the schemas folder is still one, by its keys.
        let uri = folder.appendingPathComponent("draft.yaml").standardizedFileURL.absoluteString
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1,
                                                                                       "text": "model: M\nversion: x\nentities:\n  Note:\n    attributes:\n      title: strin\n"]]])
        #expect(try client.diagnostics(for: uri).contains { ($0["message"] as? String)?.contains("strin") == true })
        try client.close()
    }

    /// A document whose text starts with a byte order mark was a YAML syntax error at 1:0 in the
    /// server only (`check` reads the file without it).
    @Test func aByteOrderMarkIsNoSyntaxError() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let (client, mapping, uri) = try opened(folder)
        let content = try String(contentsOfFile: mapping, encoding: .utf8).components(separatedBy: "\n").drop { $0.hasPrefix("#") }.joined(separator: "\n")
        let text = "\u{FEFF}" + content
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": text]]])
        let diagnostics = try client.diagnostics(for: uri)
        #expect(diagnostics.filter { $0["severity"] as? Int == 1 }.isEmpty, "\(diagnostics)")
        try client.close()
    }

    /// `mapc check` refuses a file over 16 MiB; the server parsed an open document of any size
    /// its framing allows (64 MiB), for seconds on every keystroke. Said as `check` says it.
    @Test func aDocumentPastTheFileLimitIsRefusedAsCheckRefusesTheFile() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let (client, mapping, uri) = try opened(folder)
        let content = try String(contentsOfFile: mapping, encoding: .utf8)
        let text = content + String(repeating: "# a comment line of padding\n", count: 16 * 1024 * 1024 / 28 + 1)
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": text]]])
        let diagnostics = try client.diagnostics(for: uri)
        #expect(diagnostics.count == 1, "\(diagnostics)")
        #expect((diagnostics.first?["message"] as? String)?.contains("the limit is 16777216 bytes") == true, "\(diagnostics)")
        // Under the limit, the same document is checked again.
        try client.send(["method": "textDocument/didChange", "params": ["textDocument": ["uri": uri, "version": 2], "contentChanges": [["text": content + "# one line\n"]]]])
        #expect(try client.diagnostics(for: uri).filter { $0["severity"] as? Int == 1 }.isEmpty)
        try client.close()
    }

    /// An oversized open schema was still parsed into the project's versions (a review: the one
    /// limit diagnostic came, and a mapping was checked against the version the oversized text
    /// declared); a schema file on disk saved with a byte order mark was "unknown source version"
    /// to the mapping, which `check` reads as it should. The oversized text is no part of the
    /// project (its file on disk is read), and the mark is dropped wherever a file is read.
    @Test func anOversizedSchemaIsNoPartOfTheProjectAndAMarkOnDiskIsNone() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try CLI.addMappingsAndPolicies(to: folder)
        let v2 = try folder.read("schemas/v2.yaml")
        try folder.write("\u{FEFF}" + v2, to: "schemas/v2.yaml")
        let (client, _, uri) = try opened(folder)
        let mappingText = try folder.read("mappings/mapping_v2_to_v3.yaml")
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": uri, "languageId": "yaml", "version": 1, "text": mappingText]]])
        #expect(try client.diagnostics(for: uri).filter { $0["severity"] as? Int == 1 }.isEmpty)
        let schemaURI = folder.appendingPathComponent("schemas/v2.yaml").standardizedFileURL.absoluteString
        let huge = v2.replacingOccurrences(of: "version: v2", with: "version: v9") + String(repeating: "# padding line of a comment\n", count: 16 * 1024 * 1024 / 28 + 1)
        try client.send(["method": "textDocument/didOpen", "params": ["textDocument": ["uri": schemaURI, "languageId": "yaml", "version": 1, "text": huge]]])
        let own = try client.diagnostics(for: schemaURI)
        #expect(own.count == 1 && (own.first?["message"] as? String)?.contains("the limit is 16777216 bytes") == true, "\(own)")
        // The open mapping, checked again after the schema changed, still finds v2 (from disk).
        let again = try client.diagnostics(for: uri)
        #expect(again.filter { $0["severity"] as? Int == 1 }.isEmpty, "\(again)")
        try client.close()
    }
}
