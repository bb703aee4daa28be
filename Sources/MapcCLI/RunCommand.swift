import ArgumentParser
import Foundation
import MapcKit

/// `mapc run [--from VERSION] --to VERSION STORE`: migrates a store.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Migrate a store to a newer schema version, step by step, with mapping files or inferred mappings.",
        discussion: """
        The store's version is found from its hashes; the plan (see `mapc plan`) uses a mapping file for each step when \
        there is one and an inferred mapping otherwise. The whole chain is one atomic operation: the store is either left \
        untouched at its old version or replaced, once, by the fully migrated and validated store; a failed or killed run \
        changes nothing, and the next run cleans up after it. \
        Exit status: 0 migrated, 1 invalid mapping, 2 store, plan or setup problem, 3 the data did not migrate (store unchanged), 130, 143 or 129 stopped by Ctrl-C, SIGTERM or SIGHUP (store unchanged; from a script, send SIGTERM).
        """
    )

    @Option(help: ArgumentHelp("The store's current version; checked against the store's hashes.", valueName: "version"))
    var from: String?

    @Option(help: ArgumentHelp("The version to migrate to; the newest in the schemas folder by default.", valueName: "version"))
    var to: String?

    @Argument(help: ArgumentHelp("The store to migrate; several stores, or a folder of them, migrate in parallel.", valueName: "store"))
    var stores: [String] = []

    @OptionGroup var sources: StoreSources

    /// The one store of a single run.
    private var store: String { stores.first ?? "" }

    @Option(help: ArgumentHelp("With several stores: how many migrate at once (default: the number of cores).", valueName: "n"))
    var jobs: Int?

    @OptionGroup var schemaOptions: SchemaOptions

    @OptionGroup var policyOptions: PolicyOptions

    @OptionGroup var mappingOptions: MappingOptions

    @OptionGroup var stepOptions: StepOptions

    @OptionGroup var layout: LayoutOption

    @Flag(help: "Run inferred steps even when they drop values (removed entities or properties); without it such a step is refused.")
    var acceptDataLoss = false

    @Flag(help: "Migrate and validate into a temporary file, report, and leave the store untouched.")
    var dryRun = false

    @Option(help: ArgumentHelp("Write the migrated store to this new file and leave the store untouched.", valueName: "path"))
    var output: String?

    @Flag(help: "Keep the original store as STORE.backup-<version>-<time>.")
    var keepBackup = false

    @Option(help: "Summary format: text, json, or jsonl (one JSON object per store, as each is done).")
    var format: StoreOutputFormat = .text

    @Flag(help: "No progress display.")
    var quiet = false

    @Flag(help: "Evaluate every object with the interpreter, compiling nothing to SQL (slower; for comparing results).")
    var interpret = false

    func validate() throws {
        if stores.isEmpty && sources.listFile == nil { throw ValidationError("give the store to migrate (or several, a folder of them, or --stores-from FILE)") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if isBatch && output != nil {
            throw ValidationError("--output names one new file, for one store named on the command line; with several stores, a folder, --stores-from or --shard drop it (each store is migrated in place)")
        }
        if dryRun && output != nil { throw ValidationError("--dry-run writes nothing; drop --output or --dry-run") }
        if dryRun && keepBackup { throw ValidationError("--dry-run leaves the store untouched; --keep-backup has nothing to keep") }
        if output != nil && keepBackup { throw ValidationError("--output leaves the store untouched; --keep-backup has nothing to keep") }
    }

    /// Whether several stores are given (or a folder, a list, a shard), or a report per store is asked for.
    private var isBatch: Bool {
        var isFolder: ObjCBool = false
        return stores.count > 1 || sources.isFleet || format == .jsonl || BatchWorkers.isWorker || (FileManager.default.fileExists(atPath: store, isDirectory: &isFolder) && isFolder.boolValue)
    }

    func run() throws {
        // An empty path (an unset shell variable) is the working folder to Foundation, and a URL
        // drops a trailing '/' that the system keeps: neither names a store, as every command says.
        if let problem = (stores + [output].compactMap { $0 }).lazy.compactMap(Files.storePathProblem).first {
            Console.err("error: \(problem)")
            throw ExitCodeError(MapcExitCode.storeError)
        }
        if isBatch { return try runBatch() }
        // A JSON report carries a rolled-back write in its `notes` (text says it at once).
        if format == .json { RolledBackWrites.collect() }
        var renderSources: [SourceFile] = []
        var steps: [MigrationStep] = []
        // The step the run was in when it failed: the last one that reported progress.
        var currentStep = 0
        // Whether a step has begun (its first progress update came): a failure is then a step's.
        var began = false
        // Whether the last step was validated: a failure is then the replacement's, not a step's.
        var everyStepDone = false
        // Whether the steps' inference hints were said before the run (a failure then says them not again).
        var hintsSaid = false
        let interruption = Interruption()
        // What a JSON report of a failure says of the plan, once there is one.
        var planned = BatchOutcome(store: store, result: .failed, from: from, to: to)
        let started = Date()
        // What a failure report says of where the run stopped.
        func stoppedIn() -> BatchOutcome {
            var outcome = planned
            outcome.notes = RolledBackWrites.take(store) + outcome.notes
            outcome.seconds = Date().timeIntervalSince(started)
            if began, everyStepDone, !dryRun { outcome.failedWhenReplacing = true }
            if began, !everyStepDone, steps.indices.contains(currentStep) { outcome.failedStep = (currentStep + 1, steps.count, "\(steps[currentStep].source.version) -> \(steps[currentStep].destination.version)") }
            return outcome
        }
        do {
            try reportingErrors { try printingFailureAsJSON(interruption, planned: stoppedIn) {
                if output == nil, let refusal = StoreList.backupRefusal(store) { throw MapcError.store(refusal) }
                let migrator = try stepOptions.migrator(schemaOptions, mappingOptions)
                try migrator.replanningOnce {
                    // A store at the version asked for, in another layout than asked, is converted by a step of that version to itself.
                    let plan = try Self.plan(store, migrator: migrator, from: from, to: to, format: try layout.format())
                    planned.from = plan.current.version
                    planned.to = plan.target.version
                    planned.steps = plan.steps.count
                    guard plan.isNeeded else {
                        // With --output the store is copied there as it is: the output then holds the
                        // version asked for, as after a migration.
                        var copy = MigrationOptions()
                        copy.output = output.map { Files.fileURL($0) }
                        copy.destinationFormat = try layout.format()
                        copy.isCancelled = { interruption.isRequested }
                        let copied = try migrator.migrate(plan, options: copy)
                        if format == .json {
                            var current = planned
                            current.result = .current
                            current.output = output
                            current.notes = RolledBackWrites.take(store) + copied.notes
                            Console.out(current.json.serialized(pretty: true))
                        } else {
                            Console.text("\(store) is already at \(plan.target.version); " + (output.map { "copied it to \($0) unchanged" } ?? "nothing to do"))
                            for note in copied.notes { Console.err("note: \(note)") }
                        }
                        return
                    }
                    renderSources = plan.steps.flatMap { $0.isInferred ? [] : $0.allPasses.compactMap(\.file) }
                    steps = plan.steps
                    // The mapping files' warnings, as `check` gives them (a compiler shows its
                    // warnings as it builds): what they say may be about to be dropped.
                    if format != .json, let warnings = try? migrator.check(plan), !warnings.isEmpty {
                        Console.err(DiagnosticRenderer(sources: renderSources).render(warnings))
                    }
                    var options = MigrationOptions()
                    options.dryRun = dryRun
                    options.output = output.map { Files.fileURL($0) }
                    options.keepBackup = keepBackup
                    options.allowsSQL = !interpret
                    options.acceptsDataLoss = acceptDataLoss
                    options.destinationFormat = try layout.format()
                    options.isCancelled = { interruption.isRequested }
                    let display = ProgressDisplay(quiet: quiet || format == .json)
                    if !(quiet || format == .json) { Console.err("plan for \(store): " + PlanCommand.describe(steps).joined(separator: ", ")) }
                    // Notes are not progress: said under --quiet too (JSON lists them).
                    // The plan's own (a store taken for the latest of the versions its hashes match), then inference's.
                    if format != .json {
                        for note in plan.notes + PlanCommand.inferenceNotes(steps) { Console.err("note: \(note)") }
                        hintsSaid = true
                    }
                    let outcome = try migrator.migrate(plan, options: options) { update in
                        currentStep = update.step
                        began = true
                        everyStepDone = Self.finishesTheLastStep(update)
                        display.update(update, step: update.steps > 1 ? "step \(update.step + 1)/\(update.steps) \(steps[update.step].source.version)->\(steps[update.step].destination.version)" : nil)
                    }
                    display.finish()
                    print(outcome, steps: steps, planNotes: plan.notes, seconds: Date().timeIntervalSince(started))
                }
            } }
        } catch let exit as ExitCodeError {
            // An error reportingErrors printed: where the run stopped, once it had begun.
            if let failedStep = stoppedIn().failedStep { Console.err("\(store) was not changed (the run stopped in step \(failedStep.index) of \(failedStep.of), \(failedStep.step))") }
            if everyStepDone && !dryRun { Console.err("\(store) was not changed (\(Self.everyStepDoneWords))") }
            throw exit
        } catch MigrationError.cancelled where interruption.isRequested {
            Console.err("stopped; \(store) was not changed")
            throw ExitCodeError(interruption.exitStatus)
        } catch let error as MigrationError {
            var failing = steps.indices.contains(currentStep) ? steps[currentStep] : nil
            // A step refused before it starts (dropping values) is named by the error.
            if case .dataLoss(let name, _) = error { failing = steps.first { "\($0.source.version) -> \($0.destination.version)" == name } ?? failing }
            report(error, sources: renderSources, step: everyStepDone ? nil : failing, stoppedIn: stoppedIn().failedStep, everyStepDone: everyStepDone && !dryRun, hintsSaid: hintsSaid)
        }
    }

    /// Whether a progress update is the end of the last step's validation: after it, only the
    /// replacement of the store is left.
    static func finishesTheLastStep(_ update: MigrationProgress) -> Bool {
        update.phase == .validate && update.isFinished && update.step == update.steps - 1
    }

    /// Where a run failed once every step was done.
    static let everyStepDoneWords = "every step was done; the new store could not replace it"

    /// With `--format json`, a failure is also a JSON object on standard output (the error goes to
    /// standard error as well), shaped like a batch's per-store entry (with the exit status).
    private func printingFailureAsJSON(_ interruption: Interruption, planned: () -> BatchOutcome, _ body: () throws -> Void) throws {
        do { try body() } catch {
            if format == .json {
                var failed = planned()
                // Stopped by a signal, as a batch says of a store it did not finish.
                if interruption.isRequested { failed.result = .stopped }
                failed.error = BatchOutcome.message(of: error)
                failed.exitCode = Self.exitCode(of: error, interruption)
                Console.out(failed.json.serialized(pretty: true))
            }
            throw error
        }
    }

    /// A failure's exit status; a run a signal stopped exits as the shell expects (130 for Ctrl-C).
    private static func exitCode(of error: any Error, _ interruption: Interruption) -> Int32 {
        if case MigrationError.cancelled = error, interruption.isRequested { return interruption.exitStatus }
        return BatchOutcome.exitCode(of: error)
    }

    /// Several stores: each migrated on its own (a failure leaves that store untouched and does not
    /// stop the others), at most `jobs` at once; a table (or JSON) per store at the end.
    private func runBatch() throws {
        // A store's rolled-back write is said with its outcome, not on its own among the stores'.
        RolledBackWrites.collect()
        // A worker of a batch (`BatchWorkers`): the stores on standard input, one at a time, a JSON line each.
        let isWorker = BatchWorkers.isWorker
        let format = isWorker ? StoreOutputFormat.jsonl : self.format
        // More migrations at once than a few per core gain nothing and exhaust the machine (a
        // thousand worker processes crashed in Foundation's process launching): capped, said.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let most = max(4, 4 * cores)
        if !isWorker, let jobs, jobs > most {
            Console.err("note: --jobs \(jobs) is more than this machine runs usefully at once (\(cores) \(cores == 1 ? "core" : "cores")): \(most) stores migrate at a time")
        }
        let workers = isWorker ? 1 : min(jobs ?? cores, most)
        var paths: [String] = []
        var passedOver: [StoreList.PassedOver] = []
        var migratorOrNil: Migrator?
        let interruption = Interruption()
        try reportingErrors {
            let selection = isWorker ? StoreList.Selection(stores: try BatchWorkers.readShare(stoppingOnRequest: interruption)) : try sources.select(stores)
            paths = selection.stores
            passedOver = selection.passedOver
            if format == .text { selection.note() }
            migratorOrNil = try stepOptions.migrator(schemaOptions, mappingOptions)
        }
        guard let migrator = migratorOrNil else { return }
        var options = MigrationOptions()
        options.dryRun = dryRun
        options.keepBackup = keepBackup
        options.allowsSQL = !interpret
        options.acceptsDataLoss = acceptDataLoss
        try reportingErrors { options.destinationFormat = try layout.format() }
        options.isCancelled = { interruption.isRequested }
        let frozen = options, from = self.from, to = self.to, dryRun = self.dryRun
        let lines = format == .jsonl ? JSONLines() : nil
        for file in passedOver where format == .jsonl { lines?.write(file.json) }
        let started = Date()
        let outcomes: [BatchOutcome]
        if !isWorker, PolicyLoader.hasProjectPolicies, paths.count > 1 {
            // The project's policies run in the migrations: a trap in one must fail its store, not the batch.
            let planned: @Sendable (String) -> (from: String, to: String, steps: Int)? = { path in
                (try? Self.plan(path, migrator: migrator, from: from, to: to, format: frozen.destinationFormat)).map { ($0.current.version, $0.target.version, $0.steps.count) }
            }
            outcomes = BatchWorkers(arguments: Array(CommandLine.arguments.dropFirst()), jobs: workers).run(paths, interruption: interruption, planned: planned) { lines?.write($0.json) }
        } else {
            outcomes = ParallelRunner(paths).run(jobs: workers) { path in
                let outcome = Self.migrate(path, migrator: migrator, options: frozen, from: from, to: to, dryRun: dryRun, interruption: interruption) { started in
                    if isWorker { lines?.write(started.json) }
                }
                lines?.write(outcome.json)
                return outcome
            }
        }
        let seconds = Date().timeIntervalSince(started)
        let failed = outcomes.filter { $0.result == .failed }
        if format == .jsonl {
            if let stopped = Self.stopStatus(of: outcomes, interruption) { throw ExitCodeError(stopped) }
            if let worst = failed.map(\.exitCode).max() { throw ExitCodeError(worst) }
            return
        }
        try report(outcomes, passedOver: passedOver, seconds: seconds, workers: workers, dryRun: dryRun, interruption: interruption)
    }

    /// The status of a batch a signal stopped: the one this process received, or the one that
    /// stopped a worker (its stores reported `stopped`); nil when none did.
    private static func stopStatus(of outcomes: [BatchOutcome], _ interruption: Interruption) -> Int32? {
        if interruption.isRequested { return interruption.exitStatus }
        return outcomes.first { $0.result == .stopped }?.exitCode
    }

    /// One store of several: planned and migrated, and how it went.
    /// The plan a run of the store at `path` carries out: from its version (or `from`) to `to`, and
    /// a store at the version asked for in another format converted by a step to itself.
    private static func plan(_ path: String, migrator: Migrator, from: String?, to: String?, format: StoreFormat?) throws -> MigrationPlan {
        try migrator.converting(try migrator.plan(forStoreAt: Files.fileURL(path), from: from, to: to, withNotes: false), to: format)
    }

    /// `starting` is told the plan before a store is migrated (a batch's worker says it, so that a
    /// worker killed after it replaced its store is known to have migrated it).
    private static func migrate(_ path: String, migrator: Migrator, options frozen: MigrationOptions, from: String?, to: String?, dryRun: Bool, interruption: Interruption,
                                starting: (BatchWorkers.Started) -> Void = { _ in }) -> BatchOutcome {
        let clock = Date()
        var outcome = BatchOutcome(store: path, result: .failed)
        if interruption.isRequested {
            outcome.result = .stopped
            outcome.error = "not started: the run was stopped"
            outcome.exitCode = interruption.exitStatus
            return outcome
        }
        var step = -1, steps: [MigrationStep] = [], everyStepDone = false
        do {
            if frozen.output == nil, let refusal = StoreList.backupRefusal(path) { throw MapcError.store(refusal) }
            try migrator.replanningOnce {
                step = -1
                let plan = try Self.plan(path, migrator: migrator, from: from, to: to, format: frozen.destinationFormat)
                outcome.from = plan.current.version
                outcome.to = plan.target.version
                guard plan.isNeeded else {
                    try migrator.checkTables(ofCurrent: plan)
                    outcome.result = .current
                    return
                }
                outcome.steps = plan.steps.count
                steps = plan.steps
                if !dryRun { starting(BatchWorkers.Started(store: path, from: plan.current.version, to: plan.target.version, steps: plan.steps.count)) }
                // The mapping files' warnings, said with the notes (once for every store that has them).
                let warnings = ((try? migrator.check(plan)) ?? []).map(\.description)
                let migrated = try migrator.migrate(plan, options: frozen) { update in
                    step = update.step
                    everyStepDone = finishesTheLastStep(update)
                }
                outcome.backup = migrated.backup?.path
                // What inference saw (a probable rename, where Core Data's one inference differs),
                // as one store's run says it before its plan.
                outcome.notes = warnings + plan.notes + PlanCommand.inferenceNotes(plan.steps) + migrated.notes
                outcome.result = dryRun ? .wouldMigrate : .migrated
            }
        } catch {
            if case MigrationError.cancelled = error, interruption.isRequested {
                outcome.result = .stopped
            } else if everyStepDone && !dryRun {
                outcome.failedWhenReplacing = true
            } else if steps.indices.contains(step) {
                outcome.failedStep = (step + 1, steps.count, "\(steps[step].source.version) -> \(steps[step].destination.version)")
            }
            if let refused = error as? PlanError {
                // A step that cannot be made (a downgrade, no mapping): its versions are known.
                outcome.from = outcome.from ?? refused.from
                outcome.to = outcome.to ?? refused.to
            }
            outcome.error = BatchOutcome.message(of: error)
            outcome.exitCode = Self.exitCode(of: error, interruption)
        }
        // SQLite rolled back a stopped writer's unfinished write as the store was opened: its
        // file changed, said with the store's outcome (a batch's report, a worker's JSON).
        outcome.notes = RolledBackWrites.take(path) + outcome.notes
        outcome.seconds = Date().timeIntervalSince(clock)
        return outcome
    }

    /// The report of several stores: a table (or one JSON object) of how each went.
    private func report(_ outcomes: [BatchOutcome], passedOver: [StoreList.PassedOver], seconds: Double, workers: Int, dryRun: Bool, interruption: Interruption) throws {
        let failed = outcomes.filter { $0.result == .failed }
        if format == .json {
            Console.out(JSONValue.object([
                ("stores", .array(outcomes.map(\.json))), ("seconds", .double((seconds * 1000).rounded() / 1000)),
                ("migrated", .integer(Int64(outcomes.filter { $0.result == .migrated }.count))),
                ("wouldMigrate", .integer(Int64(outcomes.filter { $0.result == .wouldMigrate }.count))),
                ("current", .integer(Int64(outcomes.filter { $0.result == .current }.count))), ("failed", .integer(Int64(failed.count))),
                ("stopped", .integer(Int64(outcomes.filter { $0.result == .stopped }.count))),
                ("passedOver", .array(passedOver.map(\.json))),
            ]).serialized(pretty: true))
        } else {
            // Columns as wide as their longest entry: a name is never cut.
            func versions(_ outcome: BatchOutcome) -> String {
                outcome.result == .current ? (outcome.to ?? "") : [outcome.from, outcome.to].compactMap { $0 }.joined(separator: " -> ")
            }
            // A name on one line whatever it holds (a line break in it split its row in two).
            let width = max(5, outcomes.map { TerminalText.oneLine($0.store).count }.max() ?? 0)
            let versionsWidth = max(20, outcomes.map { versions($0).count }.max() ?? 0)
            // Padded by characters, as the widths are counted (NSString's padding counts UTF-16 units, cutting an emoji's name).
            func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
            var lines = ["\(padded("store", width))  \(padded("result", 13))  \(padded("versions", versionsWidth))  seconds"]
            for outcome in outcomes {
                var line = "\(padded(TerminalText.oneLine(outcome.store), width))  \(padded(outcome.result.rawValue, 13))  \(padded(versions(outcome), versionsWidth))  \(String(format: "%.2f", outcome.seconds))"
                if let error = outcome.error {
                    let stopped = outcome.failedStep.map { "in step \($0.index) of \($0.of), \($0.step): " } ?? (outcome.failedWhenReplacing ? "\(Self.everyStepDoneWords): " : "")
                    line += "\n    \(stopped)\(error.split(separator: "\n").joined(separator: "\n    "))"
                }
                if let backup = outcome.backup { line += "\n    backup: \(backup)" }
                lines.append(line)
            }
            let migrated = outcomes.filter { $0.result == .migrated || $0.result == .wouldMigrate }.count
            let stopped = outcomes.filter { $0.result == .stopped }.count
            // Files that belong to stores (their -wal, their locks) are said apart, on standard error.
            let strays = passedOver.filter { !$0.belongsToAStore }.count
            lines.append(String(format: "%@: %d %@, %d current, %d failed%@%@ in %.2f s (%.1f stores/s, %d at a time)%@",
                                English.count(outcomes.count, "store"), migrated, dryRun ? "would migrate" : "migrated",
                                outcomes.filter { $0.result == .current }.count, failed.count, failed.isEmpty ? "" : " (left untouched)",
                                stopped == 0 ? "" : ", \(stopped) stopped (left untouched)",
                                seconds, Double(outcomes.count) / max(seconds, 0.001), min(workers, max(1, outcomes.count)),
                                strays == 0 ? "" : "; \(English.count(strays, "file")) passed over"))
            // Among many rows (sorted by name), the failed stores named again at the end: one
            // failure among 300 migrated stores was found only by reading every row.
            if !failed.isEmpty, outcomes.count > 10 {
                let names = failed.prefix(10).map { TerminalText.oneLine($0.store) }.joined(separator: ", ")
                lines.append("failed: \(names)\(failed.count > 10 ? " and \(failed.count - 10) more" : "") (each with its error in its row above)")
            }
            Console.text(lines.joined(separator: "\n"))
            // Each store's notes, said once for every store that has the same (`--format json` lists them per store).
            var stores: [String: [String]] = [:], order: [String] = []
            for outcome in outcomes {
                for note in outcome.notes {
                    if stores[note] == nil { order.append(note) }
                    stores[note, default: []].append(outcome.store)
                }
            }
            for note in order.prefix(20) {
                let named = stores[note] ?? []
                let which = named.count <= 3 ? named.joined(separator: ", ") : named.prefix(2).joined(separator: ", ") + " and \(named.count - 2) more"
                Console.err("note (\(which)): \(note)")
            }
            if order.count > 20 { Console.err("note: \(order.count - 20) more notes; `--format json` gives every store's") }
        }
        if let stopped = Self.stopStatus(of: outcomes, interruption) { throw ExitCodeError(stopped) }
        if let worst = failed.map(\.exitCode).max() { throw ExitCodeError(worst) }
    }

    /// That an inferred step can be written as a mapping file instead, with the command that
    /// writes its skeleton: the way to choose what its values become.
    private func inferredStepHint(_ step: MigrationStep) -> String {
        let from = step.source.version, to = step.destination.version
        return "the step \(from) -> \(to) is inferred; to choose what such values become, write its mapping "
            + "(`mapc infer \(English.option("--from", from)) \(English.option("--to", to)) \(English.option("--output", MappingCatalog.suggestedFile(from: from, to: to, in: Files.lexicallyStandardized(mappingOptions.path(schemaOptions)))))`)"
    }

    private func report(_ error: MigrationError, sources: [SourceFile], step: MigrationStep?, stoppedIn failedStep: (index: Int, of: Int, step: String)?, everyStepDone: Bool, hintsSaid: Bool) -> Never {
        // The step's inference hints, unless said before the run.
        let hints = hintsSaid ? [] : step?.hints ?? []
        let renderer = DiagnosticRenderer(sources: sources)
        switch error {
        case .expression(let mapping, let property, let object, let diagnostic):
            Console.err(renderer.render(diagnostic) + "  while mapping '\(mapping)'\(property.map { ", property '\($0)'" } ?? ""), source object \(object)")
        case .value(let mapping, let entity, let object, let property, let message):
            // A value the destination cannot hold: shown where the expression giving it stands.
            guard let step, !step.isInferred, let expression = step.allPasses.lazy.compactMap({ Self.expression(of: mapping, property, in: $0) }).first else {
                Console.err("error: \(error)")
                if let step, step.isInferred {
                    // No file to point at: the way to decide what such a value becomes is to write one.
                    Console.err("note: \(inferredStepHint(step)) and give '\(property)' of mapping '\(mapping)' an expression for them")
                }
                break
            }
            // A mapping with a custom policy: the value may be the policy's (set in its hook), not the expression's.
            if let policy = step.allPasses.lazy.compactMap({ $0.entityMappings.first { $0.name == mapping }?.policy }).first {
                Console.err("error: \(error)")
                Console.err("\(expression.source.origin): note: mapping '\(mapping)' has the custom policy \(policy): the value of '\(property)' came from its hooks "
                            + "(a value set on the object it made) or from this expression")
                break
            }
            let diagnostic = Diagnostic(.error, "\(entity) '\(object)': \(message)", at: expression.source.origin, length: expression.source.text.count)
            Console.err(renderer.render(diagnostic) + "  while mapping '\(mapping)', property '\(property)'")
        case .dataLoss:
            Console.err("error: \(error)")
            // A probable rename beside the refusal (where Core Data's one inference differs was said before the run).
            for hint in hints where step?.chainNotes.contains(hint) != true { Console.err("note: \(hint)") }
        case .validation:
            Console.err("error: \(error)")
            if let step, !step.isInferred {
                for pass in step.allPasses { for note in error.notes(in: pass) { Console.err("\(note.location.map { "\($0): " } ?? "")note: \(note.message)") } }
            } else if let step {
                // No file to point at: values that break a rule become others in a mapping file.
                Console.err("note: \(inferredStepHint(step)) and give the properties above expressions that make such values ones the rules admit, or relax the rules in \(step.destination.version)")
            }
            // What inference saw coming (a required link to objects the step drops) is the likely cause.
            for hint in hints { Console.err("note: \(hint)") }
        default:
            Console.err("error: \(error)")
        }
        let stopped = failedStep.map { " (the run stopped in step \($0.index) of \($0.of), \($0.step))" } ?? (everyStepDone ? " (\(Self.everyStepDoneWords))" : "")
        // The status as every report gives it (`BatchOutcome.exitCode(of:)`, the JSON's `exitCode`).
        let status = BatchOutcome.exitCode(of: error)
        if status != MapcExitCode.migrationFailed {
            if !stopped.isEmpty { Console.err("\(store) was not changed\(stopped)") }
            Foundation.exit(status)
        }
        Console.err("\(store) was not changed\(stopped)")
        Foundation.exit(MapcExitCode.migrationFailed)
    }

    /// The expression of a mapping's property in the failing step's mapping file.
    private static func expression(of mapping: String, _ property: String, in model: MappingModel) -> MappingExpression? {
        guard let entityMapping = model.entityMappings.first(where: { $0.name == mapping }) else { return nil }
        return (entityMapping.attributeMapping(named: property) ?? entityMapping.relationshipMapping(named: property))?.expression
    }

    private func print(_ outcome: MigrationOutcome, steps: [MigrationStep], planNotes: [String], seconds: Double) {
        if format == .json {
            let stepsJSON: [JSONValue] = zip(steps, outcome.steps).map { step, summary in
                var json = summary.json
                if case .object(var pairs) = json {
                    pairs.append(("inferred", .bool(step.isInferred)))
                    if !step.passesThrough.isEmpty { pairs.append(("through", .array(step.passesThrough.map(JSONValue.string)))) }
                    json = .object(pairs)
                }
                return json
            }
            guard let summary = outcome.summary else { return }
            var json = summary.json
            if case .object(var pairs) = json {
                pairs[0] = ("source", .string(outcome.steps[0].sourceVersion))
                // Keyed as a failure's report and a batch's line are: the store, the result, the versions.
                pairs.insert(contentsOf: [("store", .string(store)), ("result", .string(dryRun ? "would migrate" : "migrated")),
                                          ("from", .string(outcome.steps[0].sourceVersion)), ("to", pairs[1].1)], at: 0)
                pairs.append(("steps", .array(stepsJSON)))
                pairs.append(("output", outcome.result.map { JSONValue.string($0.path) } ?? .null))
                pairs.append(("backup", outcome.backup.map { JSONValue.string($0.path) } ?? .null))
                pairs.append(("dryRun", .bool(dryRun)))
                // What the text says before the run (inference's notes), then what the run found.
                pairs.append(("notes", .array((RolledBackWrites.take(store) + planNotes + PlanCommand.inferenceNotes(steps) + outcome.notes).map(JSONValue.string))))
                json = .object(pairs)
            }
            Console.out(json.serialized(pretty: true))
            return
        }
        Console.text(Self.report(outcome, steps: steps, store: store, dryRun: dryRun, output: output, seconds: seconds))
        for note in outcome.notes { Console.err("note: \(note)") }
    }

    /// The text summary of a run: per step, objects created by each mapping, seconds per phase and
    /// (with several steps) the objects of each entity the step's store holds.
    static func report(_ outcome: MigrationOutcome, steps: [MigrationStep], store: String, dryRun: Bool, output: String?, seconds: Double) -> String {
        var lines: [String] = []
        guard let summary = outcome.summary, let firstStep = outcome.steps.first else { return "\(store): nothing to do" }
        let first = firstStep.sourceVersion, last = summary.destinationVersion
        let verb = dryRun ? "dry run: \(store) would migrate" : (output.map { "migrated \(store) into \($0)" } ?? "migrated \(store)")
        lines.append(String(format: "%@ from %@ to %@ in %.2f s", verb, first, last, seconds))
        for (step, summary) in zip(steps, outcome.steps) {
            if steps.count > 1 { lines.append("  \(step.source.version) -> \(step.destination.version) (\(step.isInferred ? "inferred" + PlanCommand.passing(step) : "mapping file")):") }
            let indent = steps.count > 1 ? "    " : "  "
            let width = summary.created.map(\.name.count).max() ?? 0
            for entry in summary.created {
                let (mapping, count) = (entry.name, entry.count)
                let how = summary.compiled.contains(mapping) ? " (SQL)" : summary.compiled.contains("\(mapping).relationships") ? " (relationships in SQL)" : ""
                lines.append("\(indent)\(mapping.padding(toLength: width, withPad: " ", startingAt: 0))  \(count) object\(count == 1 ? "" : "s") created\(how)")
            }
            lines.append("\(indent)phases: " + MigrationPhase.allCases.map { String(format: "%@ %.2f s", $0.rawValue, summary.phaseSeconds[$0] ?? 0) }.joined(separator: ", "))
            // By entity, so that what a policy made under its mapping shows as what it is.
            if steps.count > 1 { lines.append("\(indent)objects: \(summary.destinationCounts)") }
        }
        lines.append("  objects: \(summary.destinationCounts)")
        if dryRun { lines.append("  \(store) was not changed") }
        if let backup = outcome.backup?.path { lines.append("  backup: \(backup)") }
        return lines.joined(separator: "\n")
    }
}
