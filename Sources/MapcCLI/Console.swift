import Foundation
import MapcKit
internal import CMapcSystem

/// Where commands write: results to standard output, diagnostics and progress to standard error.
enum Console {
    /// Writes a result to standard output. A failed write (a full disk behind a redirection, a
    /// closed descriptor) ends the command with status 2 rather than a trap or a silent loss.
    static func out(_ text: String) {
        standardOutput(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    /// Writes text for people to standard output: a bidirectional control in a store's name
    /// shown as `<U+202E>` (it reordered the line around it), as on standard error. JSON, data
    /// and files written go through `out` unchanged.
    static func text(_ text: String) {
        out(TerminalText.visible(text))
    }

    private static func standardOutput(_ data: Data) {
        writingToStandardOutput { try output.write(contentsOf: data) }
    }

    /// Text's bytes to standard output as they are (a dump's piece of hundreds of MB is not copied).
    private static func standardOutput(_ text: String) {
        writingToStandardOutput { try Files.writeUTF8(text, to: output) }
    }

    /// Where mapc's own results go: standard output, or once policies are loaded, a copy of it
    /// (`keepStandardOutputFromPolicies`).
    nonisolated(unsafe) private static var output = FileHandle.standardOutput

    /// Where mapc's own results go, for writers of their own framing (the language server's).
    static var results: FileHandle { output }

    /// Keeps standard output for mapc's results from here on, and sends what anything else in the
    /// process writes there (a policy's `print`) to standard error: a script reads JSON or a data
    /// file from standard output, and a print in a hook broke it. Called before user code loads,
    /// on the main thread; a descriptor that cannot be copied leaves things as they are.
    static func keepStandardOutputFromPolicies() {
        guard output === FileHandle.standardOutput else { return }
        fflush(nil)
        let kept = dup(STDOUT_FILENO)
        guard kept >= 0, dup2(STDERR_FILENO, STDOUT_FILENO) >= 0 else {
            if kept >= 0 { close(kept) }
            return
        }
        _ = fcntl(kept, F_SETFD, FD_CLOEXEC)
        // A line at a time, as standard error is read: a policy's prints in their place among mapc's messages.
        mapc_line_buffer_standard_output()
        output = FileHandle(fileDescriptor: kept, closeOnDealloc: false)
    }

    private static func writingToStandardOutput(_ write: () throws -> Void) {
        do {
            try write()
        } catch {
            let code = errno
            // The reader is gone (`| head -3`): end as Unix tools do, by SIGPIPE (141), which a
            // batch ignores for its workers' pipes and so met here as an error.
            if code == EPIPE || Files.posixCode(of: error) == EPIPE {
                signal(SIGPIPE, SIG_DFL)
                raise(SIGPIPE)
            }
            err("error: cannot write to standard output (\(String(cString: strerror(code)))); the output is incomplete")
            Foundation.exit(MapcExitCode.storeError)
        }
    }

    /// Writes text to a file as a whole (refusing to replace one unless `replace`; keeping the
    /// attributes of a file it replaces; never through links or onto devices), or to standard output.
    static func write(_ text: String, to path: String?, replace: Bool = true) throws {
        guard let path else {
            standardOutput(text)
            return
        }
        try Files.write(Data(text.utf8), to: path, replace: replace)
    }

    /// What an export (a dump, a diagram, a JUnit report) is, to tell an earlier one of its kind,
    /// which it replaces (exports are made again at will), from any other file, which it does not.
    struct Export: Sendable {
        /// What it is called in messages ("a data file").
        var name: String
        /// Whether a file beginning with these bytes is an earlier export of this kind.
        var isEarlierExport: @Sendable (String) -> Bool

        /// A dump: JSON whose first key is "version" and which has "objects" (a package.json
        /// or a config file naming a version is not one, and was replaced).
        static let dataFile = Export(name: "data file (JSON)") { start in
            let object = start.drop { $0.isWhitespace }
            guard object.hasPrefix("{") else { return false }
            return object.dropFirst().drop { $0.isWhitespace }.hasPrefix("\"version\"") && start.contains("\"objects\"")
        }
        /// A diagram, Mermaid or DOT.
        static let diagram = Export(name: "diagram") { text in ["classDiagram", "flowchart", "digraph"].contains { text.drop { $0.isWhitespace }.hasPrefix($0) } }
        /// A JUnit report.
        static let junit = Export(name: "JUnit report") { $0.drop { $0.isWhitespace }.hasPrefix("<?xml") && $0.contains("<testsuites") }
    }

    /// Writes an export to a file, or to standard output: over an existing file only when it is
    /// an earlier export of its kind (never a store, a schema or a fixture given by mistake), and
    /// never over the store it was read from (`store`) or that store's companion files, whatever
    /// the path or link naming them.
    static func write(_ text: String, to path: String?, export: Export, readFrom store: String? = nil) throws {
        try write(Data(text.utf8), to: path, export: export, readFrom: store)
    }

    /// `write(_:to:export:readFrom:)` of bytes already made (a large dump, not copied again).
    static func write(_ data: Data, to path: String?, export: Export, readFrom store: String? = nil) throws {
        guard let path else { return standardOutput(data) }
        try checkExportTarget(path, export: export, readFrom: store)
        try Files.write(data, to: path, replace: true)
    }

    /// Throws when an export may not be written at `path` (`write(_:to:export:readFrom:)`'s rule),
    /// so that a command can say so before its work rather than after.
    static func checkExportTarget(_ path: String, export: Export, readFrom store: String? = nil) throws {
        let target = try Files.output(path)
        let absolute = target.hasPrefix("/") ? target : Files.realPath(Files.parentFolder(of: target)) + "/" + Files.fileURL(target).lastPathComponent
        if let store {
            let real = Files.realPath(store)
            if ([real] + Files.companions(of: real) + [StoreLock.path(for: store)]).contains(absolute) {
                throw MapcError.file("\(path) is the store being dumped (or one of its files, which SQLite reads with it); write the \(export.name) elsewhere")
            }
        }
        if Files.kind(of: target) == .regularFile {
            let start = (FileHandle(forReadingAtPath: target).flatMap { try? $0.read(upToCount: 256) }).map { String(decoding: $0, as: UTF8.self) } ?? ""
            guard export.isEarlierExport(start) else {
                throw MapcError.file("\(path) already exists and is not a \(export.name) mapc wrote (only such a file is replaced, so that no other file is lost); choose another file or remove it")
            }
        }
    }

    /// Whether standard error is a terminal that redraws a line in place (`\r` and an erase):
    /// not when it is redirected, nor for `TERM=dumb` (editors' shells, some CI logs).
    static let redrawsLines = isatty(STDERR_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"

    /// Writes a line to standard error.
    static func err(_ text: String) {
        errText(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Writes text to standard error as it is (progress redraws its line). A failed write (a
    /// closed descriptor, a full device, a reader gone with SIGPIPE ignored) is let go: what
    /// standard error says is secondary, and the command still ends with its own status.
    static func errText(_ text: String, redrawing: Bool = false) {
        // Messages quote names and text from files: bidirectional and control characters shown as
        // what they are; a redraw's own return and erase are mapc's.
        try? FileHandle.standardError.write(contentsOf: Data(((redrawing ? "\r\u{1B}[K" : "") + TerminalText.visible(text)).utf8))
    }
}

/// Runs a command body, turning mapc's errors into messages on standard error and exit codes.
func reportingErrors(sources: [SourceFile] = [], _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as DiagnosticsError {
        Console.err(DiagnosticRenderer(sources: sources + error.sources).render(error.diagnostics))
        throw ExitCodeError(MapcExitCode.invalidInput)
    } catch let error as DataValidationError {
        Console.err("error: the data does not fit the schema:\n" + error.description)
        throw ExitCodeError(MapcExitCode.invalidInput)
    } catch let error as PlanError {
        // Every blocker of the chain, in order: the other steps' mapping problems, then each step that cannot be made.
        if !error.mappingProblems.isEmpty { Console.err(DiagnosticRenderer(sources: sources).render(error.mappingProblems)) }
        Console.err("error: \(error)")
        let inferable = ([error] + error.later).filter { !$0.isDowngrade }
        for blocked in inferable { Console.err("`mapc infer \(English.option("--from", blocked.from)) \(English.option("--to", blocked.to)) \(English.option("--output", blocked.suggestedFile))` writes that skeleton") }
        throw ExitCodeError(MapcExitCode.storeError)
    } catch let error as MapcError {
        Console.err("error: \(error)")
        switch error {
        case .input, .data: throw ExitCodeError(MapcExitCode.invalidInput)
        case .store, .storeInUse, .unknownVersion, .notFound, .file: throw ExitCodeError(MapcExitCode.storeError)
        }
    } catch {
        // Foundation's file errors: what and where, never "Error Domain=NSCocoaErrorDomain Code=516 … UserInfo={…}".
        let described = error as NSError
        if [NSCocoaErrorDomain, NSPOSIXErrorDomain].contains(described.domain) {
            let path = (described.userInfo[NSFilePathErrorKey] as? String) ?? (described.userInfo[NSURLErrorKey] as? URL)?.path
            Console.err("error: \(path.map { "\($0): " } ?? "")\(Files.reason(of: error))")
            throw ExitCodeError(MapcExitCode.storeError)
        }
        guard let sqlite = MapcError(sqlite: error) else { throw error }
        Console.err("error: \(sqlite)")
        throw ExitCodeError(MapcExitCode.storeError)
    }
}

/// An exit with a status and nothing more to print.
struct ExitCodeError: Error {
    var code: Int32
    init(_ code: Int32) { self.code = code }
}

extension DiagnosticsError {
    /// The source files the diagnostics point into, read back for quoting.
    var sources: [SourceFile] {
        Set(diagnostics.compactMap(\.location?.path)).compactMap { try? SourceFile.read(path: $0) }
    }
}
