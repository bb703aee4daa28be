import ArgumentParser
import Foundation
import MapcKit

/// `mapc lsp`: a Language Server Protocol server over standard input and output for the YAML
/// files mapc reads. The protocol layer is here (framing, JSON-RPC, the few messages an editor
/// sends); what it answers comes from MapcKit's `EditorProject`, the same checks as `mapc check`.
struct LSPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lsp",
        abstract: "Run a language server for schema and mapping files over stdio (diagnostics, completion, hover, definition, fixes).",
        discussion: "Editors start it themselves; see docs/editors.md. A document's project is the folder holding its schemas/ and mappings/ (or --schemas and --mappings)."
    )

    @Option(help: ArgumentHelp("The schemas folder, when documents are not in a project's schemas/ or mappings/.", valueName: "dir"))
    var schemas: String?

    @Option(help: ArgumentHelp("The mappings folder, likewise.", valueName: "dir"))
    var mappings: String?

    /// Read before parsing (`PolicyLoader`): the policies mapping files name are checked as `check` checks them.
    @OptionGroup var policyOptions: PolicyOptions

    /// The most messages taken at once before answering (a client sends a few per keystroke).
    static let batchLimit = 1_000

    func run() throws {
        // Folders named on purpose must exist, as for every command (a misspelt one was taken, and
        // each mapping was told its versions are unknown in it).
        try reportingErrors {
            if let schemas { try SchemaCatalog.requireFolder(schemas) }
            if let mappings { try MappingCatalog.requireFolder(mappings) }
        }
        var server = LanguageServer(schemas: schemas, mappings: mappings, policies: policyOptions.folder)
        var input = LSPInput()
        do {
            while let first = try input.next() {
                // Everything the client has sent is taken before anything is answered: a request
                // it cancelled meanwhile is answered as cancelled, and the others from the texts
                // as they are now. Edits are checked once the client has sent what it had: typed
                // faster than a check takes, the texts in between are never checked (each a wait
                // behind the last), and a completion asked at each key waits for none of them.
                var batch = [first]
                // Input that cannot be cut into messages ends the server, once the messages
                // before it are handled (an `initialize` before a broken message was left unanswered).
                var broken: LSPInput.FramingError?
                do {
                    while batch.count < Self.batchLimit, input.hasMoreNow(), let more = try input.next() { batch.append(more) }
                } catch let error as LSPInput.FramingError { broken = error }
                let cancelled = batch.compactMap { $0.json?["method"] == .string("$/cancelRequest") ? $0.json?["params"]?["id"] : nil }
                for message in batch {
                    if let json = message.json, let id = json["id"], id != .null, json["method"] != nil, json["method"] != .string("$/cancelRequest"), cancelled.contains(id) {
                        server.refuseCancelled(id)
                        continue
                    }
                    if let status = server.handle(message) { throw ExitCodeError(status) }
                }
                if let broken { throw broken }
                if !input.hasMoreNow() { server.publishPending() }
            }
            server.publishPending()
            // The input ended without `exit`: the client is gone. After `initialize` and no
            // `shutdown`, that is an end the protocol does not ask for (1, as `exit` alone gives).
            if server.initialized && !server.shuttingDown { throw ExitCodeError(1) }
        } catch let error as LSPInput.FramingError {
            // The rest of the input cannot be cut into messages: said, and the server ends.
            Console.err("error: mapc lsp: \(error.message)")
            throw ExitCodeError(MapcExitCode.invalidInput)
        }
    }
}

/// Reads `Content-Length`-framed JSON-RPC messages from standard input.
struct LSPInput {
    fileprivate var buffer = Data()
    /// Where to look for the end of the header next: before it, the buffer has none.
    private var searchedTo = 0
    let handle = FileHandle.standardInput
    /// The longest header accepted (a client's is a few dozen bytes).
    static let maxHeaderBytes = 64 * 1024
    /// The longest message read; a longer one is skipped (`Message.skipped`).
    static let maxBodyBytes = 64 * 1024 * 1024
    /// The longest message skipped; a longer length is taken for a broken header.
    static let maxSkippedBytes = 1024 * 1024 * 1024

    /// What one framed message was. Kept apart from the JSON a client sends: a member of the
    /// client's (`"mapc.skippedBytes": 5`) marked a request as skipped, unanswered.
    enum Message {
        /// A JSON value, as sent.
        case json(JSONValue)
        /// A body that is not JSON.
        case notJSON
        /// A message longer than `maxBodyBytes`, skipped: its length.
        case skipped(bytes: Int)

        /// The JSON sent, if any.
        var json: JSONValue? { if case .json(let value) = self { return value } else { return nil } }
    }

    /// Input that cannot be cut into messages.
    struct FramingError: Error {
        var message: String
    }

    /// The next message, or nil at the end of the input.
    mutating func next() throws -> Message? {
        while true {
            // Only what arrived since the last look is searched (with the 3 bytes before it).
            let from = buffer.startIndex + max(0, searchedTo - 3)
            if let headerEnd = Self.headerEnd(in: buffer, from: from) {
                guard headerEnd.lowerBound - buffer.startIndex <= Self.maxHeaderBytes else {
                    throw FramingError(message: "a message's header is longer than \(Self.maxHeaderBytes) bytes")
                }
                let header = String(decoding: buffer[buffer.startIndex..<headerEnd.lowerBound], as: UTF8.self)
                let declared = header.split(separator: "\r\n").compactMap { line -> Substring? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-length" else { return nil }
                    return parts[1]
                }.first
                guard let declared else { throw FramingError(message: "a message's header has no Content-Length, so the message cannot be read") }
                guard let length = Int(declared.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                    throw FramingError(message: "a message's Content-Length is '\(declared.trimmingCharacters(in: .whitespaces))', not a number of bytes")
                }
                let bodyStart = headerEnd.upperBound
                // A length past any message a client sends is a broken header, not a message to skip.
                guard length <= Self.maxSkippedBytes else {
                    throw FramingError(message: "a message's Content-Length is \(length) bytes, more than any message an editor sends (a broken header?)")
                }
                guard length <= Self.maxBodyBytes else {
                    // Skipped, as its length says where the next one starts: the server goes on
                    // (the editor told), where it ended and left every document unserved.
                    let here = min(length, buffer.endIndex - bodyStart)
                    buffer = Data(buffer[(bodyStart + here)...])
                    searchedTo = 0
                    var left = length - here
                    while left > 0 {
                        let chunk = try readAvailable()
                        guard !chunk.isEmpty else { throw FramingError(message: "the input ended inside a message (\(length - left) of its \(length) bytes read)") }
                        if chunk.count > left { buffer += chunk[(chunk.startIndex + left)...] }
                        left -= min(left, chunk.count)
                    }
                    return .skipped(bytes: length)
                }
                // The rest of the body, read to its end here: searching the buffer again per
                // read (Foundation copies it whole to search) made a 50 MB message take 15 s.
                if buffer.endIndex - bodyStart < length { buffer.reserveCapacity(bodyStart - buffer.startIndex + length) }
                while buffer.endIndex - bodyStart < length {
                    let chunk = try readAvailable()
                    guard !chunk.isEmpty else { throw FramingError(message: "the input ended inside a message (\(buffer.endIndex - bodyStart) of its \(length) bytes read)") }
                    buffer += chunk
                }
                let body = buffer[bodyStart..<(bodyStart + length)]
                buffer = Data(buffer[(bodyStart + length)...])
                searchedTo = 0
                // A body that is not JSON is answered as JSON-RPC says (a parse error), not dropped.
                return (try? JSONValue.parse(Data(body), path: "message")).map(Message.json) ?? .notJSON
            } else {
                searchedTo = buffer.count
                if buffer.count > Self.maxHeaderBytes {
                    throw FramingError(message: "no end of a message's header (an empty line) in \(Self.maxHeaderBytes) bytes")
                }
            }
            let chunk = try readAvailable()
            if chunk.isEmpty {
                // The end of the input: between messages it is the end of the session; inside one,
                // the client stopped mid-message, which is said.
                guard buffer.allSatisfy({ $0 == 0x0D || $0 == 0x0A || $0 == 0x20 || $0 == 0x09 }) else {
                    throw FramingError(message: "the input ended inside a message (\(buffer.count) bytes of it read)")
                }
                return nil
            }
            buffer += chunk
        }
    }
}

extension LSPInput {
    /// Whether more input is already here: a message (or part of one) read and not handed out,
    /// or bytes (or the input's end) waiting on the descriptor.
    func hasMoreNow() -> Bool {
        if buffer.contains(where: { $0 != 0x0D && $0 != 0x0A && $0 != 0x20 && $0 != 0x09 }) { return true }
        var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Where the empty line ending a header is in `buffer`, searched from `from`: the range of
    /// its `\r\n\r\n`, or nil.
    static func headerEnd(in buffer: Data, from: Int) -> Range<Int>? {
        buffer.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Range<Int>? in
            let start = from - buffer.startIndex, count = bytes.count
            guard count >= 4, start <= count - 4 else { return nil }
            for offset in max(0, start)...(count - 4) where bytes[offset] == 0x0D && bytes[offset + 1] == 0x0A && bytes[offset + 2] == 0x0D && bytes[offset + 3] == 0x0A {
                return (buffer.startIndex + offset)..<(buffer.startIndex + offset + 4)
            }
            return nil
        }
    }

    /// What standard input has now (at least a byte; empty at its end), as a pipe gives it: a
    /// client waits for each answer. A descriptor that cannot be read (closed, a folder) is said,
    /// where Foundation's `availableData` traps.
    func readAvailable() throws -> Data {
        var bytes = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(handle.fileDescriptor, &bytes, bytes.count)
            if count >= 0 { return Data(bytes[0..<count]) }
            let failure = errno
            if failure == EINTR { continue }
            throw FramingError(message: "standard input cannot be read (\(String(cString: strerror(failure)))): an editor starts the server with a pipe to it")
        }
    }
}

/// The server's state: open documents and whether a shutdown was asked for.
struct LanguageServer {
    var schemas: String?
    var mappings: String?
    /// The policies folder given (`--policies`); else each project's `policies/`.
    var policies: String?
    /// The schema files read so far, by path and text: an edit reads its own file again, not the folder.
    let schemaReadings = SchemaReadings()
    /// The mapping files read so far, likewise: the folder's are read on each edit (for the
    /// clashes between them), and unchanged ones are not read again.
    let mappingReadings = MappingReadings()
    /// Open documents, by path.
    var open: [String: String] = [:]
    /// Open documents whose copy was lost to a change that could not be applied: left unchecked
    /// (not open to the server) until the editor sends the whole text again, or reopens them.
    var outOfSync: Set<String> = []
    var shuttingDown = false
    /// Whether the client registers file watchers when asked (`client/registerCapability`).
    var watchesFiles = false
    /// Whether the client has sent `initialize`: requests before it are refused (LSP's -32002).
    var initialized = false
    /// Each open document's version, as the client numbers its edits, for its diagnostics.
    var versions: [String: JSONValue] = [:]
    /// The model version each schema file declared when it was last checked (nil: none readable).
    var schemaVersions: [String: String?] = [:]
    /// The mapping files that clashed with another of their step when last checked, by mappings folder.
    var clashed: [String: Set<String>] = [:]
    /// Documents opened or changed whose diagnostics are not yet published.
    var pending: [String] = []
    /// Each open document's URI as the client wrote it, by path.
    var uris: [String: String] = [:]

    /// The URI of a file for the client: the one it opened the document under, else mapc's spelling.
    func uri(of path: String) -> String { uris[path] ?? Self.uri(path) }

    init(schemas: String?, mappings: String?, policies: String? = nil) {
        self.schemas = schemas
        self.mappings = mappings
        self.policies = policies
    }

    /// Handles one message; returns the exit status once the client says `exit`.
    mutating func handle(_ framed: LSPInput.Message) -> Int32? {
        let message: JSONValue
        switch framed {
        case .notJSON:
            respondError(.null, code: -32700, "the message is not JSON")
            return nil
        case .skipped(let bytes):
            showMessage(type: 1, "mapc: the editor sent a message of \(bytes) bytes, more than the \(LSPInput.maxBodyBytes) mapc lsp reads; it was skipped (a document that large is not checked: `mapc check` checks its file)")
            return nil
        case .json(let json):
            message = json
        }
        func invalid(_ id: JSONValue, _ why: String) { respondError(id, code: -32600, why) }
        // A JSON-RPC batch (an array): no LSP client sends one; answered as an invalid request, not ignored.
        if case .array = message {
            invalid(.null, "batches of messages are not supported; send one message at a time")
            return nil
        }
        // Not an object (`5`), or an id other than JSON-RPC allows (a string, a number or null):
        // an invalid request, answered with a null id, as JSON-RPC 2.0 answers one.
        guard case .object = message else {
            invalid(.null, "a message must be a JSON object with a method")
            return nil
        }
        let id = message["id"]
        switch id {
        case nil, .null?, .string?, .integer?, .double?, .number?: break
        default:
            invalid(.null, "a request's id must be a string or a number")
            return nil
        }
        // A response to a request of the server's (`client/registerCapability`): nothing to do.
        if message["method"] == nil, message["result"] != nil || message["error"] != nil { return nil }
        guard let method = string(message["method"]) else {
            invalid(id ?? .null, "a request must name its method, a string")
            return nil
        }
        let isRequest = id != nil && id != .null
        // A request sent as a notification (no id) is not answered, as JSON-RPC says of any
        // notification, nor done: `initialize` without an id initialized the server.
        if !isRequest, Self.requests.contains(method) { return nil }
        // A notification sent with an id is answered (the client waits for every request's
        // answer), and done: its edits kept, the document in step.
        if isRequest, Self.notifications.contains(method), method != "exit", let id {
            // As any request: refused before `initialize` and after `shutdown`.
            if !initialized || shuttingDown {
                respondError(id, code: initialized ? -32600 : -32002,
                             initialized ? "the server is shutting down: only exit is accepted after shutdown" : "the server is not initialized: send initialize first")
                return nil
            }
            defer { respond(id, .null) }
            return handleMethod(method, message, id: nil)
        }
        return handleMethod(method, message, id: id)
    }

    /// The requests mapc answers (with an id) and the notifications it takes (without one).
    static let requests: Set<String> = ["initialize", "shutdown", "textDocument/completion", "textDocument/hover", "textDocument/definition", "textDocument/codeAction"]
    static let notifications: Set<String> = ["initialized", "exit", "$/cancelRequest", "workspace/didChangeConfiguration", "textDocument/didOpen", "textDocument/didChange",
                                             "textDocument/didSave", "textDocument/didClose", "workspace/didChangeWatchedFiles"]

    /// Handles a message of a method, `id` nil for a notification.
    private mutating func handleMethod(_ method: String, _ message: JSONValue, id: JSONValue?) -> Int32? {
        let params = message["params"] ?? .null
        // What an editor asks while typing (completion, hover, definition, fixes) is answered from
        // the texts as they are, before the checks of the edits waiting (one per keystroke had
        // every answer wait for them all); any other request comes after those diagnostics.
        if let id, id != .null, !Self.answeredBeforeChecks.contains(method) { publishPending() }
        // A request before `initialize` is refused, as LSP says, and a notification dropped
        // (a document opened before it was checked and published).
        if !initialized, method != "initialize", method != "exit" {
            if let id, id != .null {
                respondError(id, code: -32002, "the server is not initialized: send initialize first")
            }
            return nil
        }
        // LSP: `initialize` once; after `shutdown`, only `exit` (a request is refused, as the
        // protocol asks, rather than answered as if the server were still at work).
        if let id, id != .null, (method == "initialize" && initialized) || (shuttingDown && method != "exit") {
            let why = method == "initialize" && initialized ? "the server is initialized already: send initialize once" : "the server is shutting down: only exit is accepted after shutdown"
            respondError(id, code: -32600, why)
            return nil
        }
        // A position request's params of the wrong shape are the client's mistake, said as
        // JSON-RPC says it (-32602), not answered as if nothing were there.
        if ["textDocument/completion", "textDocument/hover", "textDocument/definition"].contains(method), let id, let problem = Self.positionProblem(params) {
            respondError(id, code: -32602, problem)
            return nil
        }
        switch method {
        case "initialize":
            initialized = true
            watchesFiles = params["capabilities"]?["workspace"]?["didChangeWatchedFiles"]?["dynamicRegistration"] == .bool(true)
            // Saves are asked for (LSP: a client sends `didSave` only when `save` is given).
            let capabilities = JSONValue.object([
                ("textDocumentSync", .object([("openClose", .bool(true)), ("change", .integer(1)), ("save", .object([("includeText", .bool(false))]))])),
                ("completionProvider", .object([("triggerCharacters", .array([".", "$", "\"", " "].map(JSONValue.string)))])),
                ("hoverProvider", .bool(true)), ("definitionProvider", .bool(true)), ("codeActionProvider", .bool(true)),
            ])
            respond(id, .object([("capabilities", capabilities), ("serverInfo", .object([("name", .string("mapc")), ("version", .string(MapcVersion.described))]))]))
            if let failure = PolicyLoader.loadFailure {
                showMessage(type: 1, "mapc: the project's policies were not loaded, so a mapping naming one is checked without it (restart the server once they compile): \(failure)")
            }
        case "initialized":
            // Files changed on disk (a checkout, a schema deleted) are told only to a server that
            // asks for them: the project's files, where the client can watch them.
            if watchesFiles {
                send(.object([("jsonrpc", .string("2.0")), ("id", .string("mapc-watch-files")), ("method", .string("client/registerCapability")),
                              ("params", .object([("registrations", .array([.object([
                                  ("id", .string("mapc-watch-files")), ("method", .string("workspace/didChangeWatchedFiles")),
                                  ("registerOptions", .object([("watchers", .array(["**/*.yaml", "**/*.yml", "**/*.swift"].map { .object([("globPattern", .string($0))]) }))])),
                              ])]))]))]))
            }
        case "$/cancelRequest", "workspace/didChangeConfiguration":
            break
        case "shutdown":
            shuttingDown = true
            respond(id, .null)
        case "exit":
            return shuttingDown ? 0 : 1
        case "textDocument/didOpen":
            guard let path = Self.path(params["textDocument"]?["uri"]) else { break }
            // The document's URI as the client wrote it: diagnostics go back under it (a client
            // matches them by its own spelling: `%40` or `@`, `%2B` or `+`, a host, a case).
            if let uri = string(params["textDocument"]?["uri"]) { uris[path] = uri }
            // As the client sent it, a byte order mark included: its positions count the mark.
            open[path] = string(params["textDocument"]?["text"]) ?? ""
            outOfSync.remove(path)
            versions[path] = params["textDocument"]?["version"]
            schedule(path)
        case "textDocument/didChange":
            // A change to a document not open (after its `didClose`) has no text to apply to:
            // applied to nothing, its fragment was taken for the whole file.
            guard let path = Self.path(params["textDocument"]?["uri"]), open[path] != nil || outOfSync.contains(path) else { break }
            if case .array(var changes)? = params["contentChanges"] {
                if outOfSync.contains(path) {
                    // Only a whole text brings the copy back: the changes from the last one on.
                    guard let whole = changes.lastIndex(where: { change in
                        guard case .string? = change["text"] else { return false }
                        return change["range"] == nil || change["range"] == .null
                    }) else { break }
                    changes = Array(changes[whole...])
                    outOfSync.remove(path)
                }
                guard let changed = Self.applying(changes, to: open[path] ?? "") else {
                    // A change that names no part of the text: applied any way, the server's copy
                    // would differ from the editor's, and every diagnostic after it be misplaced.
                    // The document is left unchecked (its diagnostics cleared) until it is whole again.
                    outOfSync.insert(path)
                    open[path] = nil
                    versions[path] = nil
                    send(.object([("jsonrpc", .string("2.0")), ("method", .string("window/showMessage")),
                                  ("params", .object([("type", .integer(2)), ("message", .string("mapc: the editor sent a change to \((path as NSString).lastPathComponent) whose range ends before it starts, or is no range; it was not applied, and mapc no longer checks the file until the editor sends its whole text or reopens it: close and reopen it"))]))]))
                    send(.object([("jsonrpc", .string("2.0")), ("method", .string("textDocument/publishDiagnostics")),
                                  ("params", .object([("uri", .string(uri(of: path))), ("diagnostics", .array([]))]))]))
                    // The others were checked against its lost copy: against its file now.
                    publish(after: path, includingItself: false)
                    break
                }
                open[path] = changed
            }
            versions[path] = params["textDocument"]?["version"]
            schedule(path)
        case "textDocument/didSave":
            if let path = Self.path(params["textDocument"]?["uri"]) { publish(after: path) }
        case "textDocument/didClose":
            guard let path = Self.path(params["textDocument"]?["uri"]) else { break }
            open[path] = nil
            outOfSync.remove(path)
            versions[path] = nil
            send(.object([("jsonrpc", .string("2.0")), ("method", .string("textDocument/publishDiagnostics")),
                          ("params", .object([("uri", .string(uri(of: path))), ("diagnostics", .array([]))]))]))
            uris[path] = nil
            // A schema closed unsaved: the open mappings were checked against its unsaved text.
            publish(after: path, includingItself: false)
        case "workspace/didChangeWatchedFiles":
            // Files changed on disk (a checkout, another tool): every open document is checked
            // again, once, each project's folders read once. A change to an open document's own
            // file is none of the editor's text (a save: `didSave` has checked it).
            let changed: [String] = if case .array(let changes)? = params["changes"] { changes.compactMap { Self.path($0["uri"]) } } else { [] }
            guard changed.isEmpty || changed.contains(where: { open[$0] == nil }) else { break }
            RegexGuard.renewBudget()
            for (_, paths) in Dictionary(grouping: open.keys.sorted(), by: { Self.projectFolder(of: $0) }).sorted(by: { $0.key < $1.key }) {
                guard let first = paths.first else { continue }
                var around: EditorProject.Surroundings?
                publish(paths, of: project(for: first), around: &around)
            }
            pending.removeAll()
        case "textDocument/completion":
            // A document out of step has no text here that is the editor's: nothing is offered
            // from its file on disk, which may be another (hover and definition alike).
            guard let (path, line, column) = position(params), !outOfSync.contains(path) else { respond(id, .array([])); break }
            let items = project(for: path).completions(in: path, line: line, column: column).map { item in
                JSONValue.object([("label", .string(item.label)), ("detail", .string(item.detail)), ("kind", .integer(Self.kindNumber(item.kind)))])
            }
            respond(id, .object([("isIncomplete", .bool(false)), ("items", .array(items))]))
        case "textDocument/hover":
            // A hover says what a name is, never where: the policy files are read for definitions only.
            guard let (path, line, column) = position(params), !outOfSync.contains(path), let found = project(for: path).hover(in: path, line: line, column: column) else { respond(id, .null); break }
            respond(id, .object([("contents", .object([("kind", .string("markdown")), ("value", .string(found))]))]))
        case "textDocument/definition":
            guard let (path, line, column) = position(params), !outOfSync.contains(path), let found = projectWithPolicies(for: path).declaration(in: path, line: line, column: column), let location = found.location else { respond(id, .null); break }
            // The name declared, whole.
            let place = range(of: location, length: found.length, text: project(for: path).text(of: location.path) ?? "", marked: startsWithMark(EditorProject.standardized(location.path)))
            respond(id, .object([("uri", .string(uri(of: EditorProject.standardized(location.path)))), ("range", place)]))
        case "textDocument/codeAction":
            respond(id, .array(codeActions(params)))
        default:
            // Unknown requests are answered (a client waits for every answer); notifications dropped.
            if let id, id != .null {
                respondError(id, code: -32601, "mapc lsp does not handle \(method)")
            }
        }
        return nil
    }

    /// The project a document belongs to, knowing where its policy classes are declared (read
    /// from the policies folder's files, for a definition: a hover, far more frequent, needs none).
    func projectWithPolicies(for path: String) -> EditorProject {
        var project = project(for: path)
        project.policyLocations = PolicyLoader.declarations(inFolder: policies ?? (Self.projectFolder(of: path) as NSString).appendingPathComponent("policies"))
        return project
    }

    /// The folder a document's project is in: the one holding its `schemas/`, `mappings/` and `policies/`.
    static func projectFolder(of path: String) -> String {
        let folder = Files.parentFolder(of: path)
        return ["schemas", "mappings", "policies"].contains((folder as NSString).lastPathComponent) ? Files.parentFolder(of: folder) : folder
    }

    /// The project a document belongs to: the folder holding its `schemas/` and `mappings/`,
    /// unless the server was given the folders.
    func project(for path: String) -> EditorProject {
        let base = Self.projectFolder(of: path)
        var project = EditorProject(schemasFolder: schemas ?? (base as NSString).appendingPathComponent("schemas"),
                                    mappingsFolder: mappings ?? (base as NSString).appendingPathComponent("mappings"))
        // A document past the file limit is no part of the project (its file on disk is read instead).
        project.open = open.filter { !EditorProject.isOversized($0.value) }.mapValues(SourceFile.withoutByteOrderMark)
        project.schemaReadings = schemaReadings
        project.mappingReadings = mappingReadings
        return project
    }

    /// Checks a document (and what depends on it) once the input waiting has been read.
    mutating func schedule(_ path: String) {
        if !pending.contains(path) { pending.append(path) }
    }

    /// Publishes what edits since the last check call for, in the order the documents changed.
    mutating func publishPending() {
        let paths = pending
        pending = []
        for path in paths where open[path] != nil { publish(after: path) }
    }

    /// Publishes a document's diagnostics, and those of the open mapping files an edit to it may
    /// change: after a schema's, those of its version (before and after the edit) or reaching
    /// across it; after a version order's, all; after a mapping's, those whose clash with another
    /// file of the same step began or ended.
    mutating func publish(after path: String, includingItself: Bool = true) {
        // Regular expressions that gave up before an edit may be mended by it.
        RegexGuard.renewBudget()
        let project = project(for: path)
        let kind = project.kind(of: path)
        let mappings = project.openMappings.filter { $0 != path }
        // The versions and the mapping folder, read once for every file checked here that needs them.
        var around: EditorProject.Surroundings?
        if kind != .schema || !mappings.isEmpty { around = project.surroundings() }
        var paths = includingItself ? [path] : []
        switch kind {
        case .schema:
            // Recorded whether or not a mapping is open: one opened later is checked against it.
            let version = around?.schemas.catalog.versionsByFile[path]
                ?? project.text(of: path).flatMap { SchemaCatalog.partial(files: [path: $0], reading: schemaReadings.reading(path:text:)).catalog.versionsByFile[path] }
            let before = schemaVersions.updateValue(version, forKey: path) ?? nil
            if let around {
                paths += mappings.filter { Self.mapping($0, mayChangeWith: [version, before].compactMap { $0 }, around: around) }
            }
            // The version order names the versions the schema files declare: open, it is checked again.
            let order = EditorProject.standardized((project.schemasFolder as NSString).appendingPathComponent(VersionOrder.fileName))
            if open[order] != nil, order != path { paths.append(order) }
        case .versionOrder:
            paths += mappings
        case .mapping:
            // By the project's mappings folder: a server may serve several projects.
            let clashing = Set((around?.mappingClashes ?? []).compactMap { $0.location?.path })
            paths += mappings.filter { clashing.contains($0) != (clashed[project.mappingsFolder] ?? []).contains($0) }
            clashed[project.mappingsFolder] = clashing
        }
        // Each open schema's step (from the version before it) may change with any edit.
        paths += project.openSchemas.filter { !paths.contains($0) && $0 != path }
        publish(paths, of: project, around: &around)
    }

    /// Publishes the diagnostics of each of `targets`, documents of `project`, the folders read
    /// once for them all (`around`, when already read).
    mutating func publish(_ targets: [String], of project: EditorProject, around: inout EditorProject.Surroundings?) {
        for target in targets {
            if around == nil { around = project.surroundings() }
            let oversized = open[target].flatMap { EditorProject.isOversized($0) ? $0.utf8.count : nil }
            let lines = oversized == nil ? EditorProject.lines(of: project.text(of: target) ?? "") : []
            let found = oversized.map { [EditorProject.oversized(target, bytes: $0)] } ?? project.diagnostics(for: target, in: around)
            let diagnostics = found.map { diagnostic -> JSONValue in
                var pairs: [(String, JSONValue)] = [
                    ("range", range(of: diagnostic.location ?? FileLocation(path: target, line: 1, column: 1), length: diagnostic.location == nil ? 1 : diagnostic.length, lines: lines, marked: startsWithMark(target))),
                    ("severity", .integer(diagnostic.severity == .error ? 1 : diagnostic.severity == .warning ? 2 : 3)),
                    ("source", .string("mapc")),
                    ("message", .string(diagnostic.message + (diagnostic.fix.map { "; \($0)" } ?? ""))),
                ]
                if let replacement = Self.replacement(in: diagnostic.fix) { pairs.append(("data", .object([("replacement", .string(replacement))]))) }
                return .object(pairs)
            }
            // The version of the text the diagnostics are of, when the document is open (a client drops stale ones).
            var params: [(String, JSONValue)] = [("uri", .string(uri(of: target))), ("diagnostics", .array(diagnostics))]
            if let version = versions[target], case .integer = version { params.append(("version", version)) }
            send(.object([("jsonrpc", .string("2.0")), ("method", .string("textDocument/publishDiagnostics")), ("params", .object(params))]))
        }
    }

    /// Whether an open mapping's diagnostics may change with a schema file that declares one of
    /// `versions` (the file's version now and before the edit): a mapping from or to one, or
    /// across one. A mapping that cannot be read is checked again.
    static func mapping(_ path: String, mayChangeWith versions: [String], around: EditorProject.Surroundings) -> Bool {
        guard let mapping = around.mappings[path] else { return true }
        let catalog = around.schemas.catalog
        for version in versions {
            if version == mapping.source || version == mapping.destination { return true }
            if let source = catalog.schema(version: mapping.source), let destination = catalog.schema(version: mapping.destination),
               catalog.versions(between: source, and: destination).contains(where: { $0.version == version }) { return true }
        }
        return false
    }

    /// The fixes of the diagnostics a client sends back: a did-you-mean's word put in place, and
    /// stale hashes recorded anew (`mapc check --update-hashes`) in the whole document.
    func codeActions(_ params: JSONValue) -> [JSONValue] {
        guard let uri = params["textDocument"]?["uri"], case .array(let diagnostics)? = params["context"]?["diagnostics"] else { return [] }
        var actions: [JSONValue] = diagnostics.compactMap { diagnostic in
            guard let replacement = string(diagnostic["data"]?["replacement"]), let range = diagnostic["range"] else { return nil }
            let edit = JSONValue.object([("changes", .object([(string(uri) ?? "", .array([.object([("range", range), ("newText", .string(replacement))])]))]))])
            return .object([("title", .string("Change to '\(replacement)'")), ("kind", .string("quickfix")), ("diagnostics", .array([diagnostic])), ("edit", edit)])
        }
        let stale = diagnostics.filter { (string($0["message"]) ?? "").hasPrefix("stale ") }
        if !stale.isEmpty, let path = Self.path(uri), let updated = project(for: path).textWithUpdatedHashes(of: path) {
            // The whole document: to the end of its last line (a line past it is outside the document).
            let lines = EditorProject.lines(of: project(for: path).text(of: path) ?? "")
            // A byte order mark the client's text starts with is kept, and counted on its first line.
            let marked = startsWithMark(path), mark = marked && lines.count <= 1 ? 1 : 0
            let end = JSONValue.object([("line", .integer(Int64(max(0, lines.count - 1)))), ("character", .integer(Int64(mark + (lines.last?.utf16.count ?? 0))))])
            let whole = JSONValue.object([("start", .object([("line", .integer(0)), ("character", .integer(0))])), ("end", end)])
            let edit = JSONValue.object([("changes", .object([(string(uri) ?? "", .array([.object([("range", whole), ("newText", .string((marked ? "\u{FEFF}" : "") + updated))])]))]))])
            actions.append(.object([("title", .string("Record the current entity hashes (mapc check --update-hashes)")), ("kind", .string("quickfix")),
                                    ("diagnostics", .array(stale)), ("edit", edit)]))
        }
        return actions
    }

    /// The word a fix suggests (`did you mean 'title'?`), when it is a replacement.
    static func replacement(in fix: String?) -> String? {
        guard let fix, let start = fix.range(of: "did you mean '"), let end = fix[start.upperBound...].firstIndex(of: "'") else { return nil }
        return String(fix[start.upperBound..<end])
    }

    /// What is wrong with a position request's params (`textDocument.uri`, a string, and
    /// `position.line` and `.character`, whole numbers from 0), or nil when they are well formed.
    static func positionProblem(_ params: JSONValue) -> String? {
        guard case .string? = params["textDocument"]?["uri"] else { return "invalid params: textDocument.uri must be a string" }
        for key in ["line", "character"] {
            guard case .integer(let value)? = params["position"]?[key], value >= 0 else { return "invalid params: position.\(key) must be a whole number from 0" }
        }
        return nil
    }

    /// A request's document path and position, as lines and columns from 1 (columns in characters).
    func position(_ params: JSONValue) -> (String, Int, Int)? {
        guard let path = Self.path(params["textDocument"]?["uri"]), case .integer(let line)? = params["position"]?["line"],
              case .integer(let given)? = params["position"]?["character"], line >= 0, line < Int64(Int32.max), given >= 0 else { return nil }
        let text = project(for: path).text(of: path) ?? ""
        let lineText = EditorProject.lines(of: text).dropFirst(Int(line)).first ?? ""
        // UTF-16 units, as LSP counts them, to characters (a byte order mark the client's text
        // starts with is a unit of its first line).
        let offset = line == 0 && startsWithMark(path) ? max(0, given - 1) : given
        var units = 0, characters = 0
        for character in lineText {
            if units >= Int(offset) { break }
            units += character.utf16.count
            characters += 1
        }
        return (path, Int(line) + 1, characters + 1)
    }

    /// An LSP range for a location (line and column from 1, in Unicode scalars) of `length` scalars.
    func range(of location: FileLocation, length: Int, text: String, marked: Bool = false) -> JSONValue {
        range(of: location, length: length, lines: EditorProject.lines(of: text), marked: marked)
    }

    /// Whether an open document's text, as the client has it, starts with a byte order mark: mapc
    /// reads the text without it, and the client's positions on its first line count it.
    func startsWithMark(_ path: String) -> Bool { open[path]?.unicodeScalars.first == "\u{FEFF}" }

    /// `range(of:length:text:)` over a document's lines, split once for all its diagnostics (a
    /// split per diagnostic made a document of 3,000 diagnostics take 12 s).
    /// `marked`: the client's text starts with a byte order mark the lines are without, which
    /// its positions on the first line count.
    func range(of location: FileLocation, length: Int, lines: [String], marked: Bool = false) -> JSONValue {
        let lineText = location.line >= 1 && location.line <= lines.count ? lines[location.line - 1] : ""
        let scalars = Array(lineText.unicodeScalars)
        let mark = marked && location.line == 1 ? 1 : 0
        func utf16(_ count: Int) -> Int { mark + scalars.prefix(max(0, count)).reduce(0) { $0 + $1.utf16.count } }
        let start = utf16(location.column - 1), end = utf16(location.column - 1 + max(1, length))
        func point(_ character: Int) -> JSONValue { .object([("line", .integer(Int64(max(0, location.line - 1)))), ("character", .integer(Int64(character)))]) }
        return .object([("start", point(start)), ("end", point(end))])
    }

    static func kindNumber(_ kind: EditorCompletion.Kind) -> Int64 {
        switch kind {
        case .entity: return 7
        case .property: return 5
        case .value: return 12
        case .key: return 14
        case .variable: return 6
        case .function: return 3
        }
    }

    /// A document's text after a `didChange`'s changes, in order: a change with a `range` edits
    /// that part (a client may send them though the server asks for whole texts: taken as the
    /// whole text, a fragment replaced the document), one without is the whole text. Nil when a
    /// range is none (its end before its start, a position that is not one): taken as a whole
    /// text, its fragment replaced the document.
    static func applying(_ changes: [JSONValue], to text: String) -> String? {
        // One array of UTF-16 units for all the changes, made text once at the end: each range
        // copied the whole text three times and rebuilt it (1,000 ranges on 1 MB took a minute).
        var units = Array(text.utf16)
        for change in changes {
            guard case .string(let replacement)? = change["text"] else { continue }
            guard let range = change["range"], range != .null else {
                units = Array(replacement.utf16)
                continue
            }
            guard let start = utf16Offset(range["start"], in: units), let end = utf16Offset(range["end"], in: units), start <= end else { return nil }
            units.replaceSubrange(start..<end, with: replacement.utf16)
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// An LSP position (line, UTF-16 unit) as an offset into a text's UTF-16, held to its line's
    /// end and the text's end, as LSP says; nil when it is not a position.
    static func utf16Offset(_ position: JSONValue?, in units: [UInt16]) -> Int? {
        guard case .integer(let line)? = position?["line"], case .integer(let character)? = position?["character"], line >= 0, character >= 0 else { return nil }
        var index = 0, current: Int64 = 0
        while current < line, index < units.count {
            // Lines end at \n, \r\n or \r, as LSP counts them.
            if units[index] == 13, index + 1 < units.count, units[index + 1] == 10 { index += 1 }
            if units[index] == 10 || units[index] == 13 { current += 1 }
            index += 1
        }
        guard current == line else { return units.count }
        var end = index
        while end < units.count, units[end] != 10, units[end] != 13 { end += 1 }
        return min(index + Int(min(character, Int64(Int32.max))), end)
    }

    static func path(_ uri: JSONValue?) -> String? {
        guard case .string(let text)? = uri, let url = URL(string: text), url.isFileURL else { return nil }
        return EditorProject.standardized(url.path)
    }

    static func uri(_ path: String) -> String { Files.fileURL(path).absoluteString }

    private func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    /// The requests answered before the diagnostics of the edits waiting are published.
    static let answeredBeforeChecks: Set<String> = ["textDocument/completion", "textDocument/hover", "textDocument/definition", "textDocument/codeAction"]

    /// Answers a request the client cancelled before it was handled (LSP's RequestCancelled).
    func refuseCancelled(_ id: JSONValue) {
        respondError(id, code: -32800, "cancelled by the client")
    }

    /// Shows the user a message (`window/showMessage`; type 1 an error, 2 a warning).
    func showMessage(type: Int64, _ text: String) {
        send(.object([("jsonrpc", .string("2.0")), ("method", .string("window/showMessage")), ("params", .object([("type", .integer(type)), ("message", .string(text))]))]))
    }

    /// Answers a request with a JSON-RPC error (`code`: -32700 not JSON, -32600 invalid, -32601
    /// unknown method, -32602 invalid params, -32002 not initialized, -32800 cancelled).
    func respondError(_ id: JSONValue, code: Int64, _ message: String) {
        send(.object([("jsonrpc", .string("2.0")), ("id", id), ("error", .object([("code", .integer(code)), ("message", .string(message))]))]))
    }

    func respond(_ id: JSONValue?, _ result: JSONValue) {
        send(.object([("jsonrpc", .string("2.0")), ("id", id ?? .null), ("result", result)]))
    }

    func send(_ message: JSONValue) {
        let body = Data(message.serialized(pretty: false).utf8)
        // A client gone (its pipe closed) ends the server, rather than trapping on the write.
        do { try Console.results.write(contentsOf: Data("Content-Length: \(body.count)\r\n\r\n".utf8) + body) } catch { exit(1) }
    }
}
