import Foundation
import MapcKit

/// A batch whose migrations run the project's policies, the user's code, migrated by worker
/// processes: `mapc run` again, with the batch's own arguments, given its share of the stores on
/// standard input and reporting each as a JSON line. A trap in a policy (an index out of range,
/// a forced unwrap of nil) ends its worker and fails the store it was migrating, named with the
/// crash; a new worker takes the stores after it. In one process, the trap ended the whole batch,
/// at the same store on every run, so the stores after it were never migrated.
struct BatchWorkers {
    /// Set in a worker's environment: its stores come from standard input, its report is JSON lines.
    static let environmentKey = "MAPC_BATCH_WORKER"

    /// Whether this process is a batch's worker.
    static var isWorker: Bool { ProcessInfo.processInfo.environment[environmentKey] == "1" }

    /// The batch's arguments (without the program), which each worker is given as they are.
    let arguments: [String]
    /// How many workers run at once.
    let jobs: Int

    /// Each store's outcome, in the order given; `report` is told each as it comes.
    /// `planned` gives a store's plan (its versions and steps) when a worker ended without
    /// reporting on it, so its line says which migration failed as every other does.
    func run(_ paths: [String], interruption: Interruption, planned: @escaping @Sendable (String) -> (from: String, to: String, steps: Int)? = { _ in nil },
             report: @escaping @Sendable (BatchOutcome) -> Void) -> [BatchOutcome] {
        // A worker that has ended closes its end of the pipe a stop is written to: the write must
        // fail (EPIPE), not end this process (SIGPIPE).
        signal(SIGPIPE, SIG_IGN)
        let count = max(1, min(jobs, paths.count))
        // Shares dealt in turn, so that each worker has stores from the whole list.
        let shares = (0..<count).map { worker in stride(from: worker, to: paths.count, by: count).map { paths[$0] } }
        let found = ParallelRunner(shares).run(jobs: count) { share in
            migrate(share, interruption: interruption, planned: planned, report: report)
        }
        let byStore = Dictionary(found.joined().map { ($0.store, $0) }, uniquingKeysWith: { first, _ in first })
        return paths.map { byStore[$0] ?? BatchOutcome(store: $0, result: .failed, error: "no worker reported on it", exitCode: MapcExitCode.storeError) }
    }

    /// One worker's share, a worker at a time until every store has its outcome.
    private func migrate(_ share: [String], interruption: Interruption, planned: @Sendable (String) -> (from: String, to: String, steps: Int)?,
                         report: @Sendable (BatchOutcome) -> Void) -> [BatchOutcome] {
        var remaining = share[...]
        var outcomes: [BatchOutcome] = []
        func conclude(_ outcome: BatchOutcome) {
            outcomes.append(outcome)
            report(outcome)
        }
        func stopAll(_ status: Int32) {
            for store in remaining { conclude(BatchOutcome(store: store, result: .stopped, error: "not started: the run was stopped", exitCode: status)) }
            remaining = []
        }
        while !remaining.isEmpty {
            if interruption.isRequested {
                stopAll(interruption.exitStatus)
                break
            }
            let started = Date(), before = remaining.count
            // A worker migrates its stores in the order given, one at a time, and reports each.
            let ended = runWorker(on: Array(remaining), interruption: interruption) { outcome in
                guard remaining.first == outcome.store else { return }
                remaining.removeFirst()
                conclude(outcome)
            }
            guard let store = remaining.first else { break }
            if let status = ended.stoppedBy {
                stopAll(status)
                break
            }
            if !ended.crashed && remaining.count == before {
                // It reported nothing and did not crash: what stopped it stops every store (its words).
                for store in remaining { conclude(BatchOutcome(store: store, result: .failed, error: ended.failure, exitCode: max(ended.status, MapcExitCode.storeError))) }
                remaining = []
                break
            }
            // It ended while migrating this store, the first it had not reported.
            remaining.removeFirst()
            var outcome = BatchOutcome(store: store, result: .failed, error: ended.failure, exitCode: ended.crashed ? MapcExitCode.migrationFailed : max(ended.status, MapcExitCode.storeError))
            outcome.seconds = Date().timeIntervalSince(started)
            let now = planned(store)
            if let begun = ended.started, begun.store == store {
                (outcome.from, outcome.to, outcome.steps) = (begun.from, begun.to, begun.steps)
                // Killed after its store was replaced (the replacement is the run's last step,
                // after validation): the store is migrated, whatever ended the worker then.
                if let signal = ended.signal, begun.steps > 0, let now, now.from == begun.to, now.steps == 0 {
                    outcome.result = .migrated
                    outcome.exitCode = MapcExitCode.success
                    outcome.notes = ["the worker migrating it was ended by \(IsolatedMigration.describe(signal: signal)) after it replaced the store, "
                                     + "which is migrated to \(begun.to) and was validated before it was replaced"]
                    outcome.error = nil
                }
            } else if let now {
                // The store is as it was (the worker's run never replaced it): its plan is the one that failed.
                (outcome.from, outcome.to, outcome.steps) = (now.from, now.to, now.steps)
            }
            conclude(outcome)
        }
        return outcomes
    }

    /// How a worker ended: whether it crashed (a signal it did not ask for) and what it said, or
    /// the status of a stop a signal asked for.
    private struct Ending {
        var failure: String
        var status: Int32 = MapcExitCode.storeError
        var stoppedBy: Int32?
        /// The signal that ended it, when one it did not ask for did.
        var signal: Int32?
        /// Whether it crashed: a signal it did not ask for ended it.
        var crashed: Bool { signal != nil }
        /// The migration the worker said it started last (`Started.json`), whose
        /// store it had not reported when it ended.
        var started: Started?
    }

    /// A store a worker started to migrate, and the plan it carries out.
    struct Started: Sendable {
        var store: String
        var from: String
        var to: String
        var steps: Int

        /// The line a worker writes before it migrates a store: `{"started": store, "from", "to", "steps"}`.
        var json: JSONValue {
            .object([("started", .string(store)), ("from", .string(from)), ("to", .string(to)), ("steps", .integer(Int64(steps)))])
        }

        /// A worker's started line, or nil when the line is not one.
        init?(json: JSONValue) {
            guard case .string(let store)? = json["started"], case .string(let from)? = json["from"], case .string(let to)? = json["to"],
                  case .integer(let steps)? = json["steps"] else { return nil }
            self.init(store: store, from: from, to: to, steps: Int(steps))
        }

        init(store: String, from: String, to: String, steps: Int) {
            (self.store, self.from, self.to, self.steps) = (store, from, to, steps)
        }
    }

    /// Runs one worker on `stores`, passing each outcome it reports to `reported` as it comes.
    private func runWorker(on stores: [String], interruption: Interruption, reported: (BatchOutcome) -> Void) -> Ending {
        let process = Process()
        process.executableURL = IsolatedMigration.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging([Self.environmentKey: "1"]) { _, new in new }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch {
            return Ending(failure: "cannot start a worker (\(IsolatedMigration.executable.path)) to migrate it: \(Files.reason(of: error))")
        }
        // Its share, each path as a JSON string on a line, then an empty line. Standard input
        // stays open: "stop" on it stops the worker at its next safe point, and its end (this
        // process gone, killed) too.
        let control = input.fileHandleForWriting
        let list = stores.map { JSONValue.string($0).serialized(pretty: false) + "\n" }.joined() + "\n"
        try? control.write(contentsOf: Data(list.utf8))
        let writing = NSLock()
        interruption.forward(to: process.processIdentifier) { writing.withLock { _ = try? control.write(contentsOf: Data("stop\n".utf8)) } }
        defer {
            interruption.forget(process.processIdentifier)
            writing.withLock { try? control.close() }
        }
        // Its standard error, read on a thread of its own: a reader blocked for a worker's whole
        // life must not hold one of Dispatch's few threads, on which a signal's handler runs (with
        // two workers on two cores, the batch heard its SIGTERM only when a worker ended).
        nonisolated(unsafe) var said = Data()
        let reading = DispatchSemaphore(value: 0)
        let readsApart = DetachedThread.start {
            said = errors.fileHandleForReading.readDataToEndOfFile()
            reading.signal()
        }
        // Lines as they come: a report (JSON lines) follows the stores as they are done.
        let lines = DescriptorLines(output.fileHandleForReading.fileDescriptor)
        var started: Started?
        while let line = try? lines.next() {
            guard let value = try? JSONValue.parse(Data(line.utf8), path: "a worker's report") else { continue }
            if let outcome = BatchOutcome(json: value) {
                reported(outcome)
                if outcome.store == started?.store { started = nil }
            } else if let plan = Started(json: value) {
                started = plan
            }
        }
        if readsApart { reading.wait() } else { said = errors.fileHandleForReading.readDataToEndOfFile() }
        process.waitUntilExit()
        let text = String(decoding: said, as: UTF8.self)
        let status = process.terminationStatus
        if process.terminationReason == .uncaughtSignal {
            let crash = IsolatedMigration.crashReport(text.split(separator: "\n").map(String.init))
            return Ending(failure: (["the migration crashed (\(IsolatedMigration.describe(signal: status)))"] + crash).joined(separator: "\n"),
                          signal: status, started: started)
        }
        if Interruption.exitStatuses.contains(status), interruption.isRequested { return Ending(failure: "", status: status, stoppedBy: status) }
        let words = text.split(separator: "\n").filter { !$0.hasPrefix("note: ") }.prefix(5).joined(separator: "\n")
        return Ending(failure: words.isEmpty ? "the worker migrating it ended with exit status \(status), saying nothing" : words, status: status,
                      started: started)
    }
}

extension BatchWorkers {
    /// A worker's side: its share of the stores (JSON strings, one a line, to an empty line), read
    /// from standard input; then a thread reads on, and "stop", or the input's end (the batch gone),
    /// asks `interruption` to stop the run at its next safe point.
    static func readShare(stoppingOnRequest interruption: Interruption) throws -> [String] {
        let input = DescriptorLines(STDIN_FILENO)
        var stores: [String] = []
        while let line = try input.next(), !line.isEmpty {
            guard case .string(let store)? = try? JSONValue.parse(Data(line.utf8), path: "the batch's list") else {
                throw MapcError.input("a batch's worker was given '\(line)' for a store: workers are started by `mapc run` itself")
            }
            stores.append(store)
        }
        let started = DetachedThread.start {
            while let line = try? input.next() {
                if line == "stop" { break }
            }
            interruption.request()
        }
        if !started { Console.err("warning: no thread to hear the batch's stop; this worker finishes its stores") }
        return stores
    }
}

/// A descriptor (standard input, a pipe from a worker) read a line at a time, as lines come.
final class DescriptorLines: @unchecked Sendable {
    private let descriptor: Int32
    private var pending = Data()
    private var ended = false

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line (without its end), or nil at the end of the input.
    func next() throws -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                pending = Data(pending[pending.index(after: end)...])
                return line
            }
            if ended { return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self) }
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw MapcError.file("cannot read \(descriptor == STDIN_FILENO ? "standard input" : "a worker's report") (\(String(cString: strerror(errno))))")
            }
            if count == 0 { ended = true } else { pending.append(contentsOf: buffer[0..<count]) }
        }
    }
}

extension BatchOutcome {
    /// The outcome a worker reported as a JSON line (`json`), or nil when the line is not one.
    init?(json: JSONValue) {
        guard case .string(let store)? = json["store"], case .string(let word)? = json["result"], let result = Result(rawValue: word) else { return nil }
        self.init(store: store, result: result)
        if case .string(let from)? = json["from"] { self.from = from }
        if case .string(let to)? = json["to"] { self.to = to }
        if case .integer(let steps)? = json["steps"] { self.steps = Int(steps) }
        switch json["seconds"] {
        case .double(let seconds)?: self.seconds = seconds
        case .integer(let seconds)?: self.seconds = Double(seconds)
        default: break
        }
        if case .string(let error)? = json["error"] { self.error = error }
        if case .integer(let code)? = json["exitCode"] { exitCode = Int32(clamping: code) }
        if case .string(let output)? = json["output"] { self.output = output }
        if case .string(let backup)? = json["backup"] { self.backup = backup }
        if case .array(let notes)? = json["notes"] { self.notes = notes.compactMap { if case .string(let note) = $0 { return note } else { return nil } } }
        if case .bool(true)? = json["failedWhenReplacing"] { failedWhenReplacing = true }
        if case .object? = json["failedStep"], case .integer(let number)? = json["failedStep"]?["number"], case .integer(let of)? = json["failedStep"]?["of"],
           case .string(let step)? = json["failedStep"]?["step"] {
            failedStep = (Int(number), Int(of), step)
        }
    }
}
