import ArgumentParser
import Foundation
import MapcKit

/// `mapc plan STORE [--to VERSION]`: the steps `mapc run` would take.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the steps that would bring a store to a version, and whether each uses a mapping file or an inferred mapping."
    )

    @Argument(help: ArgumentHelp("The store (or several, or a folder of them).", valueName: "store"))
    var stores: [String] = []

    @OptionGroup var sources: StoreSources

    @Option(help: "Output format: text, or jsonl (one JSON object per store: its version, the target and the steps).")
    var format: PlanOutputFormat = .text

    /// `--format` of `plan`: a plan is printed per store as it is made, so there is no whole-run JSON.
    enum PlanOutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text, jsonl
    }

    func validate() throws {
        if stores.isEmpty && sources.listFile == nil { throw ValidationError("give the store (or several, a folder of them, or --stores-from FILE)") }
    }

    @Option(help: ArgumentHelp("The store's current version, as `run --from` takes it; checked against the store's hashes.", valueName: "version"))
    var from: String?

    @Option(help: ArgumentHelp("The version to reach; the newest in the schemas folder by default.", valueName: "version"))
    var to: String?

    @OptionGroup var schemaOptions: SchemaOptions

    @OptionGroup var policyOptions: PolicyOptions

    @OptionGroup var mappingOptions: MappingOptions

    @OptionGroup var stepOptions: StepOptions

    /// For an inferred step through several versions at once, the versions it passes.
    static func passing(_ step: MigrationStep) -> String {
        switch step.passesThrough.count {
        case 0: return ""
        case 1...3: return " through \(step.passesThrough.joined(separator: ", ")) in one step"
        default: return " through \(step.passesThrough.count) versions (\(step.passesThrough[0]) … \(step.passesThrough[step.passesThrough.count - 1])) in one step"
        }
    }

    /// What inference saw in the plan's inferred steps and says once (`check` warns of it): a
    /// probable rename without its identifier, hierarchies brought together (object IDs change
    /// in a Core Data store); each with its step.
    static func inferenceNotes(_ steps: [MigrationStep]) -> [String] {
        steps.filter(\.isInferred).flatMap { step in step.hints.map { "\(step.source.version) -> \(step.destination.version) (inferred): \($0)" } }
    }

    /// What a plan says of one step: how it migrates and what it loses, said as text and as JSON
    /// from this one account.
    struct StepAccount {
        var step: MigrationStep
        /// The mapping files of a mapping step, by name.
        var files: [String]
        /// Values a store holds that an inferred step drops, and those it holds none of.
        var drops: [String]
        var dropsNotHeld: [String]
        /// A mapping file's declared losses: its `remove` mappings and `drops:`, and its filters.
        var declaredDrops: [String]
        var filters: [String]

        init(_ step: MigrationStep) {
            self.step = step
            files = step.isInferred ? [] : step.allPasses.map { $0.file.map { Files.fileURL($0.path).lastPathComponent } ?? "file" }
            drops = step.droppedValues
            dropsNotHeld = step.droppedButNotHeld
            // A mapping file's losses, as it declares them: what it drops on purpose and the
            // objects its filters leave behind (said for an inferred step's; a mapping's were not).
            let mappings = step.isInferred ? [] : step.allPasses.flatMap(\.entityMappings)
            declaredDrops = mappings.filter { $0.type == .remove }.compactMap { $0.source.map { "entity \($0)" } }
                + mappings.flatMap { mapping in mapping.drops.map { "\(mapping.source ?? mapping.name).\($0)" } }
            filters = mappings.compactMap { mapping in mapping.filter.map { "\(mapping.name) to \(mapping.source ?? "its objects") where \($0.text)" } }
        }

        var text: String {
            var how = step.isInferred ? "inferred" + PlanCommand.passing(step) : (files.count == 1 ? "mapping " : "passes ") + files.joined(separator: ", then ")
            if step.isDowngrade { how += ", downgrade" }
            // What the store holds no value of is said apart from what a run asks about.
            let unheld = dropsNotHeld.joined(separator: ", ") + ", but the store holds none of the values these would drop"
            switch (drops.isEmpty, dropsNotHeld.isEmpty) {
            case (false, true): how += ", drops \(drops.joined(separator: ", "))"
            case (true, false): how += ", drops \(unheld)"
            case (false, false): how += ", drops \(drops.joined(separator: ", ")) (and \(unheld))"
            case (true, true): break
            }
            if !step.nilsFilled.isEmpty { how += ", fills \(step.nilsFilled.joined(separator: ", "))" }
            if !step.valuesConverted.isEmpty { how += ", converts \(step.valuesConverted.joined(separator: ", "))" }
            if !declaredDrops.isEmpty { how += ", drops \(declaredDrops.joined(separator: ", "))" }
            if !filters.isEmpty { how += ", filters \(filters.joined(separator: "; "))" }
            return "\(step.source.version) -> \(step.destination.version) (\(how))"
        }

        /// The step for a script: `drops` are what a run asks about (an inferred step's values
        /// the store holds), `dropsNotHeld` what it holds none of, `declaredDrops` what a mapping
        /// file drops on purpose.
        var json: JSONValue {
            let strings = { (list: [String]) in JSONValue.array(list.map(JSONValue.string)) }
            return .object([("from", .string(step.source.version)), ("to", .string(step.destination.version)),
                            ("kind", .string(step.isInferred ? "inferred" : "mapping")), ("files", strings(files)), ("through", strings(step.passesThrough)),
                            ("downgrade", .bool(step.isDowngrade)), ("drops", strings(drops)), ("dropsNotHeld", strings(dropsNotHeld)), ("declaredDrops", strings(declaredDrops)),
                            ("fills", strings(step.nilsFilled)), ("converts", strings(step.valuesConverted)), ("filters", strings(filters))])
        }
    }

    static func describe(_ steps: [MigrationStep]) -> [String] { steps.map { StepAccount($0).text } }

    func run() throws {
        var worst: Int32 = MapcExitCode.success
        try reportingErrors {
            let migrator = try stepOptions.migrator(schemaOptions, mappingOptions)
            let selection = try sources.select(stores)
            let report = format == .jsonl ? JSONLines() : nil
            if report == nil { selection.note() } else { for file in selection.passedOver { report?.write(file.json) } }
            let paths = selection.stores
            // Step lists whose mapping files passed the check, so stores at one version check once.
            var checked: Set<[String]> = []
            for store in paths {
                do {
                    if let refusal = StoreList.backupRefusal(store) { throw MapcError.store(refusal) }
                    let plan = try migrator.plan(forStoreAt: Files.fileURL(store), from: from, to: to)
                    guard plan.isNeeded else {
                        // Current as run calls it: its tables are there.
                        try migrator.checkTables(ofCurrent: plan)
                        if let report {
                            report.write(.object([("store", .string(store)), ("result", .string("current")), ("from", .string(plan.current.version)), ("to", .string(plan.target.version)),
                                                  ("steps", .integer(0)), ("plan", .array([])), ("details", .array([]))]))
                        } else {
                            Console.text("\(store) is already at \(plan.target.version); nothing to do")
                        }
                        continue
                    }
                    // The mapping files are checked as `run` checks them, before the plan is shown:
                    // a plan that prints is one `run` will start.
                    let steps = plan.steps.map { "\($0.source.version) -> \($0.destination.version) \($0.allPasses.map { $0.file?.path ?? "inferred" })" }
                    if !checked.contains(steps) {
                        try migrator.check(plan)
                        checked.insert(steps)
                    }
                    // A plan that prints is one `run` will start: in the store's own format, as `run` writes by default.
                    if let refusal = plan.refusalInStoreFormat {
                        throw MapcError.store(refusal + " (`mapc run --layout mapc` writes mapc's format; `--to` a version before stops short of it)")
                    }
                    // And one `run` will not refuse before reading: a read-only store, its folder, another name.
                    if let problem = StoreMigration.inPlaceProblem(store, real: try Files.existingStore(store)) { throw problem }
                    if let report {
                        report.write(.object([("store", .string(store)), ("result", .string("would migrate")), ("from", .string(plan.current.version)),
                                              ("to", .string(plan.target.version)), ("steps", .integer(Int64(plan.steps.count))), ("plan", .array(Self.describe(plan.steps).map(JSONValue.string))),
                                              ("details", .array(plan.steps.map { StepAccount($0).json })),
                                              ("notes", .array((Self.inferenceNotes(plan.steps) + plan.notes).map(JSONValue.string)))]))
                        continue
                    }
                    var lines = ["\(store) is at \(plan.current.version); \(English.count(plan.steps.count, "step")) to \(plan.target.version):"]
                    for (index, description) in Self.describe(plan.steps).enumerated() { lines.append("  \(index + 1). \(description)") }
                    for note in Self.inferenceNotes(plan.steps) + plan.notes { lines.append("  note: \(note)") }
                    Console.text(lines.joined(separator: "\n"))
                } catch where paths.count > 1 || report != nil {
                    // One store's problem does not hide the others' plans.
                    Console.err("error: " + BatchOutcome.message(of: error, naming: store))
                    worst = max(worst, BatchOutcome.exitCode(of: error))
                    report?.write(.object([("store", .string(store)), ("result", .string("failed")), ("error", .string(BatchOutcome.message(of: error))),
                                           ("exitCode", .integer(Int64(BatchOutcome.exitCode(of: error))))]))
                }
            }
        }
        if worst != MapcExitCode.success { throw ExitCodeError(worst) }
    }
}
