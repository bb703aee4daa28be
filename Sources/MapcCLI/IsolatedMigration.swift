import Foundation
import MapcKit

/// A migration run by `mapc test` in a `mapc run` of its own. A custom policy is the user's code,
/// run in the process that migrates; a trap in it (an index out of range, a forced unwrap of nil)
/// ends that process. Run apart, it fails its own case, and the other cases, the report and the
/// JUnit file go on, as a test runner goes on past a test that crashed.
struct IsolatedMigration {
    /// The options every run is given: where the schemas, mappings and policies are, and whether
    /// data loss is accepted, as `mapc test` was given them.
    var options: [String]

    /// Why a run failed, in its own words: its standard error, or what ended it.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// The exit status of an interrupted run (130 or 143), which stops the whole test run.
        var interruption: Int32?
    }

    /// Migrates the store at `copy` in place to `version`; throws the run's own report when it fails.
    func migrate(_ copy: String, to version: String) throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["run", "--quiet", "--to=\(version)"] + options + ["--", copy]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw Failure(description: "cannot start \(Self.executable.path) to migrate the copy: \(Files.reason(of: error))")
        }
        // Read before waiting: a run that writes more than a pipe holds would otherwise never end.
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let status = process.terminationStatus
        if process.terminationReason == .exit && status == 0 { return }
        let text = String(decoding: output, as: UTF8.self)
        if process.terminationReason == .uncaughtSignal {
            let crash = Self.crashReport(text.split(separator: "\n").map(String.init))
            throw Failure(description: (["the migration crashed (signal \(status)\(Self.signalNames[status].map { ", \($0)" } ?? ""))"] + crash).joined(separator: "\n"))
        }
        if Interruption.exitStatuses.contains(status) { throw Failure(description: "interrupted", interruption: status) }
        var lines = text.split(separator: "\n").map(String.init)
        // The note on how far the store can be migrated now is for a store someone keeps, not a fixture's copy.
        lines.removeAll { $0.hasPrefix("note: ") && $0.contains("the store can be migrated to") }
        // "the migration failed: error: …" says it twice.
        if let first = lines.first, first.hasPrefix("error: ") { lines[0] = String(first.dropFirst("error: ".count)) }
        if lines.count > 40 { lines = Array(lines.prefix(40)) + ["… (\(lines.count - 40) more lines)"] }
        throw Failure(description: lines.isEmpty ? "the migration failed with exit status \(status)" : lines.joined(separator: "\n"))
    }

    /// What of a crash's standard error a test report needs: mapc's note (which policy, mapping
    /// and hook), the runtime's fatal error, and the crashed thread's frames in the policies'
    /// code (else its first three), not every thread's backtrace.
    static func crashReport(_ lines: [String]) -> [String] {
        var kept: [String] = [], frames: [String] = [], inCrashedThread = false
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("mapc: ") || trimmed.contains("Fatal error") || trimmed.hasPrefix("*** Program crashed") {
                // What the note says of the store is not for a fixture's copy.
                kept.append(trimmed.replacingOccurrences(of: " " + PolicyCrash.storeUnchanged, with: ""))
            } else if trimmed.hasPrefix("Thread "), trimmed.hasSuffix("crashed:") {
                inCrashedThread = true
            } else if inCrashedThread {
                guard let first = trimmed.first, first.isNumber else {
                    inCrashedThread = false
                    continue
                }
                frames.append(trimmed)
            }
        }
        let own = frames.filter { $0.contains("libpolicies") }
        return kept + (own.isEmpty ? Array(frames.prefix(3)) : Array(own.prefix(5)))
    }

    /// This program: the child runs the same `mapc`, with the same modules and policy cache.
    static var executable: URL {
        Bundle.main.executableURL ?? Files.fileURL(CommandLine.arguments[0]).standardizedFileURL
    }

    /// A signal by its number and name ("signal 4, SIGILL").
    static func describe(signal: Int32) -> String {
        "signal \(signal)\(signalNames[signal].map { ", \($0)" } ?? "")"
    }

    private static let signalNames: [Int32: String] = [4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV"]
}
