import Foundation
import MapcKit

/// Where commands write: results to standard output, diagnostics and progress to standard error.
enum Console {
    /// Writes a result to standard output. A failed write (a full disk behind a redirection, a
    /// closed descriptor) ends the command with status 2 rather than a trap or a silent loss.
    static func out(_ text: String) {
        standardOutput(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    private static func standardOutput(_ data: Data) {
        do {
            try FileHandle.standardOutput.write(contentsOf: data)
        } catch {
            err("error: cannot write to standard output (\(String(cString: strerror(errno)))); the output is incomplete")
            Foundation.exit(MapcExitCode.storeError)
        }
    }

    /// Writes text to a file as a whole (refusing to replace one unless `replace`; keeping the
    /// attributes of a file it replaces; never through links or onto devices), or to standard output.
    static func write(_ text: String, to path: String?, replace: Bool = true) throws {
        guard let path else {
            standardOutput(Data(text.utf8))
            return
        }
        try Files.write(Data(text.utf8), to: path, replace: replace)
    }

    static func err(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
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
