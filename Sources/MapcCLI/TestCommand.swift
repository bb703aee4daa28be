import ArgumentParser
import Foundation
import MapcKit
#if canImport(Glibc)
import Glibc
#endif

/// `mapc test`: migration tests from fixture stores, as Core Data teams keep them (a store per
/// released version): each fixture is migrated, on a copy, to the newest version (or to each
/// `--to`), and compared with what it must become: `expected/<name>.json` (the data format, as
/// `dump` writes it) and `expected/<name>.assertions` (one predicate per line). Reported like a
/// test runner, and as JUnit XML for CI.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Migrate a copy of every fixture store and compare it with what it must become.",
        discussion: """
        Each store file in the fixtures folder is a case: a copy is migrated to the newest version (or to each --to), \
        then its objects are compared with expected/<name>.json (as `mapc dump` writes it; expected/<name>@<version>.json \
        for a --to version) and checked against expected/<name>.assertions, one assertion per line: \
        'Note: count == 200', 'Note: every title != nil', 'Note: some ANY attachments.caption BEGINSWITH "Milk"', \
        'Note: no body == nil' (a bare predicate is 'every'). --record writes the expected files from today's results, \
        for review. Name fixtures (notes-v1, or fixtures/notes-v1.sqlite) to run their cases alone. \
        Exit status: 0 when every case passed, 1 when one failed, 2 when the fixtures cannot be read, a fixture named \
        or a --to version is unknown, or the JUnit file cannot be written.
        """
    )

    @Argument(help: ArgumentHelp("Fixtures whose cases to run, by name, file name or path in the fixtures folder; every fixture when none is named.", valueName: "fixture"))
    var named: [String] = []

    @Option(help: ArgumentHelp("The folder of fixture stores, one per released version.", valueName: "dir"))
    var fixtures = "./fixtures"

    @Option(name: .customLong("expected"), help: ArgumentHelp("The folder of expected results (default: ./expected).", valueName: "dir"))
    var expectedFolder: String?

    /// The folder of expected results: the one named, else `./expected`.
    var expected: String { expectedFolder ?? "./expected" }

    @Option(name: .customLong("to"), help: ArgumentHelp("A version to migrate each fixture to (repeat for several); the newest by default.", valueName: "version"))
    var targets: [String] = []

    @Flag(help: "Write expected/<name>.json from today's results (for review), instead of comparing.")
    var record = false

    @Flag(help: "Run inferred steps even when they drop values (removed entities or properties), as `mapc run --accept-data-loss` does.")
    var acceptDataLoss = false

    @Option(help: ArgumentHelp("Also write the results as JUnit XML to this file, for CI.", valueName: "file"))
    var junit: String?

    @OptionGroup var schemaOptions: SchemaOptions

    @OptionGroup var policyOptions: PolicyOptions

    @OptionGroup var mappingOptions: MappingOptions

    @OptionGroup var stepOptions: StepOptions

    func run() throws {
        var cases: [MigrationTestCase] = []
        var migratorOrNil: Migrator?
        var fixturePaths: [String] = []
        try reportingErrors {
            let migrator = try stepOptions.migrator(schemaOptions, mappingOptions)
            migratorOrNil = migrator
            // A file named as one of the folders failed every case (or every write of --record).
            for (option, path) in [("--fixtures", fixtures), ("--expected", expected)] {
                let kind = Files.kind(of: Files.realPath(path))
                if kind != .missing, kind != .directory {
                    throw MapcError.file("\(path) is a file, not a folder: \(option) names a folder (of \(option == "--fixtures" ? "fixture stores" : "expected results")); name a folder, or move the file")
                }
            }
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: fixtures, isDirectory: &isFolder), isFolder.boolValue else {
                throw MapcError.notFound("no fixtures folder \(fixtures): keep a store of each released version there (fixtures/v1.sqlite, …), or name the folder with --fixtures")
            }
            // A folder named on purpose must exist (a misspelt one failed every case): `--record` makes it.
            if let named = expectedFolder, !record, Files.kind(of: Files.realPath(named)) == .missing {
                throw MapcError.notFound("the expected folder '\(named)' does not exist: name the folder of expected results, or make it with `mapc test --record \(English.option("--expected", named))`")
            }
            // A report that could not be written is said before the cases run.
            if let junit {
                try Console.checkExportTarget(junit, export: .junit)
                if let missing = Files.missingFolderProblem(of: junit) { throw MapcError.file(missing) }
            }
            // A version asked for that the project does not have is the command line's mistake, said once.
            for version in targets { _ = try migrator.schemas.require(version: version) }
            fixturePaths = try StoreList.expand([fixtures]).stores
            if fixturePaths.isEmpty {
                throw MapcError.notFound("\(fixtures) holds no store files: keep a store of each released version there (`mapc load DATA.json \(fixtures)/v1.sqlite` makes one from data, `mapc init` an empty one)")
            }
            // Two fixtures of one name would share one expected file (the second's result recorded over the first's).
            let byName = Dictionary(grouping: fixturePaths, by: MigrationTestCase.name(ofFixture:))
            if let (name, paths) = byName.filter({ $0.value.count > 1 }).min(by: { $0.key < $1.key }) {
                throw MapcError.file("the fixtures \(paths.sorted().joined(separator: " and ")) share the name \(name), and so would share expected/\(name).json; rename one of them")
            }
            // `@` names the version of an expected file (`a@v2.json`, fixture a's result at v2): a
            // fixture named `a@v2` would share it, and one recorded over the other's.
            if let (name, paths) = byName.filter({ $0.key.contains("@") }).min(by: { $0.key < $1.key }) {
                throw MapcError.file("the fixture \(paths[0]) is named \(name): '@' in a fixture's name would share expected files with another fixture's results at a version (expected/<name>@<version>.json); rename it without '@'")
            }
            // Named fixtures run alone, in the folder's order; a name none has is said before any case runs.
            if !named.isEmpty {
                // A fixture by its name (`app-1.0` is not `app-1`), its file name, or its path.
                let standardized = { (path: String) in Files.fileURL(path).standardizedFileURL.path }
                let chosen = try named.map { argument in
                    let path = standardized(argument)
                    guard let found = fixturePaths.first(where: { fixture in
                        MigrationTestCase.name(ofFixture: fixture) == argument || (fixture as NSString).lastPathComponent == argument || standardized(fixture) == path
                    }) else {
                        let names = byName.keys.sorted()
                        // "did you mean 'v1'?" ends a sentence: the list follows as one of its own.
                        throw MapcError.notFound("no fixture named \(argument) in \(fixtures)"
                                                 + (Suggestions.didYouMean(argument, in: names).map { "; \($0)" } ?? "") + " (the fixtures: \(names.joined(separator: ", ")))")
                    }
                    return found
                }
                fixturePaths = fixturePaths.filter(chosen.contains)
            }
            // The copies go to the temporary folder: one that cannot be used is the run's problem, not each case's.
            try FileManager.default.removeItem(at: try Files.newTemporaryFolder(prefix: MigrationTestCase.copiesPrefix))
        }
        guard let migrator = migratorOrNil else { return }
        let versions = targets.isEmpty ? [nil] : targets.map { Optional($0) }
        // `--option=value`: a value starting with "-" is not taken for an option.
        var options = ["--schemas=\(schemaOptions.schemas)"]
        if let folder = mappingOptions.folder { options.append("--mappings=\(folder)") }
        if let folder = policyOptions.folder { options.append("--policies=\(folder)") }
        if acceptDataLoss { options.append("--accept-data-loss") }
        if stepOptions.everyVersion { options.append("--every-version") }
        if stepOptions.inferDirectly { options.append("--infer-directly") }
        let isolation = IsolatedMigration(options: options)
        MigrationTestCase.removeAbandonedCopies()
        // Each case is reported as it ends, as a test runner does.
        let newest = try? migrator.schemas.newest().version
        for path in fixturePaths {
            for version in versions {
                var test = MigrationTestCase(fixture: path, target: version, expected: expected)
                test.newest = newest
                let result = test.run(migrator: migrator, record: record, migrateCopy: isolation.migrate)
                if let status = result.interruption { throw ExitCodeError(status) }
                cases.append(result)
                if let why = result.skipped {
                    Console.text("SKIP \(result.name): \(why)")
                    continue
                }
                Console.text("\(result.passed ? "PASS" : "FAIL") \(result.name) (\(String(format: "%.2f", result.seconds)) s)\(result.recorded.map { "; recorded \($0)" } ?? "")\(result.alreadyRecorded.map { "; \($0) holds this result already" } ?? "")")
                for failure in result.failures { Console.text("  " + failure.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")) }
            }
        }
        // An expected file whose fixture is gone: the suite would shrink without a word (a run of
        // named cases is not the suite).
        if !record && named.isEmpty {
            for orphan in MigrationTestCase.orphans(in: expected, fixtures: fixturePaths) {
                var test = MigrationTestCase(fixture: orphan.fixture, target: nil, expected: expected)
                test.label = orphan.file
                test.failures = ["\(orphan.file) has no fixture: no store named \(orphan.fixture) in \(fixtures); restore the fixture, or delete \(orphan.file) if its version is no longer tested"]
                Console.text("FAIL \(test.name)")
                Console.text("  " + test.failures[0])
                cases.append(test)
            }
        }
        let failed = cases.filter { !$0.passed }.count, skipped = cases.filter { $0.skipped != nil }.count
        Console.text("\(cases.count - failed - skipped) passed, \(failed) failed" + (skipped > 0 ? ", \(skipped) skipped" : ""))
        if let junit {
            try reportingErrors { try Console.write(MigrationTestCase.junit(cases), to: junit, export: .junit) }
        }
        if failed > 0 { throw ExitCodeError(MapcExitCode.invalidInput) }
    }
}

/// One fixture migrated to one version and compared with what it must become.
struct MigrationTestCase {
    var fixture: String
    var target: String?
    var expected: String
    var failures: [String] = []
    var seconds = 0.0
    var recorded: String?
    /// The expected file `--record` left as it was, since it holds today's result already.
    var alreadyRecorded: String?

    init(fixture: String, target: String?, expected: String) {
        self.fixture = fixture
        self.target = target
        self.expected = expected
    }

    /// The fixture's name: its file name without the extension.
    var fixtureName: String { Self.name(ofFixture: fixture) }
    /// The name of a fixture: its file name without the extension (its expected files' name).
    static func name(ofFixture path: String) -> String { ((path as NSString).lastPathComponent as NSString).deletingPathExtension }
    /// The case's name: `notes-v1 -> v4` (the newest version by its name, whether or not the
    /// case got as far as planning, so that a CI's history sees one test).
    var name: String { label ?? "\(fixtureName) -> \(resolvedTarget ?? target ?? newest ?? "newest")" }
    /// The newest version of the project, for the name of a case without `--to`.
    var newest: String?
    /// A name that is not a migration's (an expected file without its fixture).
    var label: String?

    /// The expected files (`NAME.json`, `NAME@VERSION.json`, `NAME.assertions`) of the folder
    /// whose fixture name no fixture has.
    static func orphans(in expected: String, fixtures: [String]) -> [(file: String, fixture: String)] {
        let names = Set(fixtures.map(name(ofFixture:)))
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: expected)) ?? []).sorted()
        return files.compactMap { file in
            guard file.hasSuffix(".json") || file.hasSuffix(".assertions"), !file.hasPrefix(".") else { return nil }
            let base = (file as NSString).deletingPathExtension
            let fixture = base.split(separator: "@", maxSplits: 1).first.map(String.init) ?? base
            return names.contains(fixture) ? nil : ((expected as NSString).appendingPathComponent(file), fixture)
        }
    }
    private var resolvedTarget: String?
    var passed: Bool { failures.isEmpty }
    /// Why the case was not run (a fixture newer than the version asked for), when it was not.
    var skipped: String?

    /// Whether the case goes to another version than the newest (its files are then named for it).
    var isIntermediate = false
    /// The expected data file: `<name>.json` for the newest version, `<name>@<version>.json` for another.
    var expectedData: String { (expected as NSString).appendingPathComponent(fixtureName + (isIntermediate ? "@\(target ?? "")" : "") + ".json") }
    /// The assertions file, named the same way.
    var assertions: String { (expected as NSString).appendingPathComponent(fixtureName + (isIntermediate ? "@\(target ?? "")" : "") + ".assertions") }

    /// The exit status of a migration that was interrupted (Ctrl-C), which ends the test run.
    var interruption: Int32?

    /// Migrates a copy of the fixture (`migrateCopy` migrates the copy at a path to a version in
    /// place, `IsolatedMigration` in `mapc test`) and compares it; the fixture itself is never written.
    func run(migrator: Migrator, record: Bool, migrateCopy: (String, String) throws -> Void) -> MigrationTestCase {
        var result = self
        let started = Date()
        var made: URL?
        defer { if let made { try? FileManager.default.removeItem(at: made) } }
        do {
            // Only a regular file is copied: a FIFO would block the copy for ever, a device read without end.
            _ = try Files.existingStore(fixture)
            let folder = try Files.newTemporaryFolder(prefix: Self.copiesPrefix)
            made = folder
            let copy = folder.appendingPathComponent((fixture as NSString).lastPathComponent)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: fixture + suffix) {
                do { try FileManager.default.copyItem(atPath: fixture + suffix, toPath: copy.path + suffix) } catch {
                    // Foundation's error names neither file plainly: the copy and why, as a failed case.
                    let reason = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError).map { String(cString: strerror(Int32($0.code))) } ?? error.localizedDescription
                    throw MapcError.file("cannot copy \(fixture + suffix) into the temporary folder \(folder.path) (\(reason)); free space there, or set TMPDIR to a folder with room")
                }
                // The copy is the test's to migrate, whatever the fixture's mode (a read-only
                // checkout, a store copied off a device at 0444).
                chmod(copy.path + suffix, 0o600)
            }
            // Core Data's external values go with the copy, as a run takes them (its steps may read them).
            let external = CoreDataExternalData.beside(store: fixture)
            if external.exists {
                try external.copy(to: CoreDataExternalData(store: copy.path))
                CoreDataExternalData(store: copy.path).finish()
            }
            let current = try migrator.version(ofStoreAt: copy)
            // A fixture newer than the version asked for is no case (a downgrade), unless the
            // expected folder holds a result for it: that file is read, and fails when no
            // mapping file goes back (an expectation never read would shrink the suite silently).
            var expectedDowngrade: String?
            if let target, let from = try? migrator.schemas.position(of: current.version), let to = try? migrator.schemas.position(of: target), from > to {
                result.resolvedTarget = target
                result.isIntermediate = true
                expectedDowngrade = [result.expectedData, result.assertions].first { FileManager.default.fileExists(atPath: $0) }
                if expectedDowngrade == nil {
                    result.skipped = "the fixture is at \(current.version), newer than \(target)"
                    result.seconds = Date().timeIntervalSince(started)
                    return result
                }
            }
            let plan: MigrationPlan
            do { plan = try migrator.plan(forStoreAt: copy, from: nil, to: target, withNotes: false) } catch {
                guard let expectedDowngrade, let target else { throw error }
                result.failures.append("\(expectedDowngrade) expects the fixture, at \(current.version), migrated back to the older \(target), and it cannot be: "
                                       + BatchOutcome.message(of: error) + "; or delete \(expectedDowngrade) if that downgrade is not to be tested")
                result.seconds = Date().timeIntervalSince(started)
                return result
            }
            result.resolvedTarget = plan.target.version
            result.isIntermediate = plan.target.version != (try migrator.schemas.newest()).version
            if plan.isNeeded { try migrateCopy(copy.path, plan.target.version) }
            let store = try Store.open(at: copy.path, catalog: migrator.schemas, readOnly: true)
            defer { try? store.close() }
            // A row of no entity of the version is a failure whatever the case compares.
            do { try store.checkEveryRowIsRecognised() } catch {
                let copy = folder.appendingPathComponent((fixture as NSString).lastPathComponent).path
                result.failures.append("\(plan.isNeeded ? "the migrated store" : "the fixture") cannot be compared: " + BatchOutcome.message(of: error).replacingOccurrences(of: copy, with: fixture))
                result.seconds = Date().timeIntervalSince(started)
                return result
            }
            // A fixture checked by assertions alone (values that differ every run: now(), UUIDs a
            // policy makes) keeps them alone: recorded data would fail the next run.
            let byAssertionsAlone = FileManager.default.fileExists(atPath: result.assertions) && !FileManager.default.fileExists(atPath: result.expectedData)
            if record && !byAssertionsAlone {
                do {
                    // An expected file that already holds today's result is kept as written (a hand
                    // edit's order, spacing or number forms): recording rewrites only what differs.
                    if FileManager.default.fileExists(atPath: result.expectedData),
                       let kept = try? JSONValue.parse(Files.read(result.expectedData, what: "the expected data"), path: result.expectedData),
                       (try? ExpectedData.differences(expected: kept, store: store, file: result.expectedData, leavesNothingOut: true).isEmpty) == true {
                        result.alreadyRecorded = result.expectedData
                    } else {
                        let dump = try DataFile.dump(store)
                        try Files.makeFolder(Files.parentFolder(of: result.expectedData))
                        try Files.write(Data((dump.serialized(pretty: true) + "\n").utf8), to: result.expectedData, replace: true)
                        result.recorded = result.expectedData
                    }
                } catch {
                    result.failures.append("cannot record \(result.expectedData): " + BatchOutcome.message(of: error))
                }
            } else if FileManager.default.fileExists(atPath: result.expectedData) {
                // The expected file's own problems are the case's failure, not the migration's.
                do {
                    let wanted = try JSONValue.parse(Files.read(result.expectedData, what: "the expected data"), path: result.expectedData)
                    var differing: [(entity: String, property: String)] = []
                    let found = try ExpectedData.differences(expected: wanted, store: store, file: result.expectedData) { differing.append(($0, $1)) }
                    result.failures += found
                    // After many steps, which of them wrote the value is the question.
                    if !found.isEmpty, plan.isNeeded { result.failures += ExpectedData.setters(of: differing, in: plan.steps).prefix(5).map { "  " + $0 } }
                } catch let error as MapcError {
                    result.failures.append("the expected data cannot be read: \(error.description)")
                }
            }
            if FileManager.default.fileExists(atPath: result.assertions) {
                result.failures += try Self.check(assertions: result.assertions, store: store)
            }
            if !record && !FileManager.default.fileExists(atPath: result.expectedData) && !FileManager.default.fileExists(atPath: result.assertions) {
                result.failures.append("nothing to compare with: write \(result.expectedData) (`mapc test --record` writes it from today's result, for review) or \(result.assertions)")
            }
        } catch {
            // The copy is the test's own business: the fixture is what the user knows.
            let copy = made?.appendingPathComponent((fixture as NSString).lastPathComponent).path ?? fixture
            if let failure = error as? IsolatedMigration.Failure, let status = failure.interruption { result.interruption = status }
            let message = (error as? IsolatedMigration.Failure)?.description ?? BatchOutcome.message(of: error)
            result.failures.append("the migration failed: " + message.replacingOccurrences(of: copy, with: fixture))
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    /// The temporary folders of the copies: `mapc-test-<pid>-<uuid>` in the temporary directory.
    static let copiesPrefix = "mapc-test-"

    /// Removes the copies that a `mapc test` which is no longer running left (stopped by Ctrl-C
    /// or killed while a case ran): those whose process is gone.
    static func removeAbandonedCopies() {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [] where name.hasPrefix(copiesPrefix) {
            guard let pid = Int32(name.dropFirst(copiesPrefix.count).prefix { $0 != "-" }), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name)) }
        }
    }

    /// Each assertion of the file that does not hold, at its line and column: `Entity: count == N`,
    /// or `Entity: [every|some|no] PREDICATE` over the entity's objects (sub-entities included).
    static func check(assertions path: String, store: Store) throws -> [String] {
        let text = SourceFile.withoutByteOrderMark(String(decoding: try Files.read(path, what: "the assertions"), as: UTF8.self))
        var failures: [String] = []
        let graph = StoreObjectGraph(store: store)
        for (index, rawLine) in SourceFile.lines(of: text).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            // Columns count scalars, as every diagnostic of mapc's does; a part of the line is a
            // suffix of it once trailing space is gone, so its column is told by its length.
            let indent = rawLine.unicodeScalars.prefix { $0 == " " || $0 == "\t" }.count
            func column(of part: String) -> Int { indent + line.unicodeScalars.count - part.unicodeScalars.count + 1 }
            func placeOf(_ part: String) -> String { "\(FileLocation(path: path, line: index + 1, column: column(of: part)))" }
            let place = placeOf(line)
            guard let colon = line.firstIndex(of: ":") else {
                failures.append("\(place): '\(line)' is not an assertion; write 'Entity: count == 3' or 'Entity: every PREDICATE'")
                continue
            }
            let entity = line[..<colon].trimmingCharacters(in: .whitespaces)
            var rest = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard let declared = store.schema.entity(named: entity) else {
                failures.append("\(place): no entity '\(entity)' in \(store.schema.version)" + (Suggestions.didYouMean(entity, in: store.schema.entities.map(\.name)).map { "; \($0)" } ?? ""))
                continue
            }
            // Counted, and read batch by batch: a fixture of a million objects is not held whole.
            let total = try store.count(of: entity)
            // `count` (or `@count`) and a comparison (not an attribute whose name starts so: `counter > 0`).
            // Beside a property `count`, the bare word compared with anything but a whole number
            // is the property's (`Item: count == "x"`), read as any predicate below.
            let countProperty = store.schema.property(named: "count", in: declared)
            if let comparison = rest.range(of: #"^@?count\s*(==|!=|<=|>=|<|>|=)"#, options: .regularExpression),
               rest.hasPrefix("@") || countProperty == nil || Self.isWholeNumberText(rest[comparison.upperBound...]) {
                let word = rest.hasPrefix("@") ? "@count" : "count"
                // An entity with a property `count`: the bare word could mean either, and a test that
                // checks the other one than its author meant passes or fails for nothing.
                if word == "count", let property = countProperty {
                    let kind = if case .relationship = property { "relationship" } else { "attribute" }
                    let condition = rest.dropFirst(word.count).trimmingCharacters(in: .whitespaces)
                    failures.append("\(placeOf(rest)): 'count' is both the number of \(entity) objects and \(entity)'s \(kind) 'count'; "
                                    + "write '\(entity): @count \(condition)' for the number of objects, '\(entity): every count \(condition)' for the \(kind)")
                    continue
                }
                // A count is a whole number: `count == "2"` or `count == 2.5` is a broken test, not a count that differs.
                let operand = rest[comparison.upperBound...].trimmingCharacters(in: .whitespaces)
                guard Self.isWholeNumberText(operand[...]) else {
                    failures.append("\(placeOf(operand)): count is compared with a whole number (\(entity): count == 3), not \(operand.isEmpty ? "nothing" : operand)")
                    continue
                }
                let predicate = "\(total) " + rest[rest.index(comparison.lowerBound, offsetBy: word.count)...]
                let holds = try evaluate(predicate, object: nil, graph: graph, source: nil, place: place, failures: &failures)
                if holds == false { failures.append("\(place): \(line) does not hold: there are \(total)") }
                continue
            }
            var quantifier = "every"
            // A quantifier is a word followed by a predicate, not an attribute compared (`no == nil`).
            for word in Self.quantifiers where rest.hasPrefix(word + " ") {
                let after = rest.dropFirst(word.count + 1).trimmingCharacters(in: .whitespaces)
                if let first = after.first, "=!<>".contains(first) || after.uppercased().hasPrefix("IN ") || after.uppercased().hasPrefix("BETWEEN ") { break }
                quantifier = word
                rest = after
            }
            let predicateColumn = placeOf(rest)
            if let problem = unknownQuantifier(rest, entity: declared, schema: store.schema) {
                failures.append("\(predicateColumn): \(problem)")
                continue
            }
            let source = ExpressionSource(text: rest, origin: FileLocation(path: path, line: index + 1, column: column(of: rest)))
            // Checked as `mapc eval` checks it: an assertion that can never hold is a broken test.
            if let problems = checkProblems(source, entity: entity, schema: store.schema), !problems.isEmpty {
                failures += problems
                continue
            }
            guard case .success(let predicate) = ExpressionParser.parse(rest) else {
                _ = try evaluate(rest, object: nil, graph: graph, source: source, place: predicateColumn, failures: &failures)
                continue
            }
            // How many objects the predicate holds for and not, with the first few of each.
            var holding = (count: 0, first: [String]()), failing = (count: 0, first: [String]())
            struct Broken: Error {}
            do {
                for member in store.schema.hierarchy(under: declared) where !member.isAbstract {
                    try store.forEachBatch(ofExactEntity: member.name) { batch in
                        for object in batch {
                            graph.remember(object)
                            guard let holds = try evaluate(predicate, object: graph.ref(object), graph: graph, source: source, place: predicateColumn, failures: &failures) else { throw Broken() }
                            if holds {
                                holding.count += 1
                                if holding.first.count < 6 { holding.first.append(object.id) }
                            } else {
                                failing.count += 1
                                if failing.first.count < 6 { failing.first.append(object.id) }
                            }
                        }
                    }
                }
            } catch is Broken {
                continue
            }
            let sample = { (found: (count: Int, first: [String])) in found.first.prefix(5).map { "'\($0)'" }.joined(separator: ", ") + (found.count > 5 ? ", …" : "") }
            switch quantifier {
            case "some" where holding.count == 0: failures.append("\(place): \(line) does not hold: no \(entity) satisfies it (of \(total))")
            case "no" where holding.count > 0: failures.append("\(place): \(line) does not hold: \(holding.count) do, \(sample(holding))")
            case "every" where failing.count > 0: failures.append("\(place): \(line) does not hold for \(failing.count) of \(total): \(sample(failing))")
            default: break
            }
        }
        return failures
    }

    /// The words an assertion's predicate may start with; none is `every`.
    static let quantifiers = ["every", "some", "no"]

    /// Whether an assertion's operand is a whole number written in digits (what a count is compared with).
    static func isWholeNumberText(_ text: Substring) -> Bool {
        let operand = text.trimmingCharacters(in: .whitespaces)
        return !operand.isEmpty && operand.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.numericType == .decimal }
    }

    /// Why a predicate's first word is taken for a quantifier that is none (`sometimes title !=
    /// nil`, `evry …`), or nil: a word that names no property of the entity, followed by what
    /// reads as a predicate, where the whole does not.
    private static func unknownQuantifier(_ text: String, entity: Entity, schema: Schema) -> String? {
        let word = String(text.prefix { $0.isLetter })
        guard !word.isEmpty, text.dropFirst(word.count).first?.isWhitespace == true,
              !schema.propertyNames(of: entity).contains(word),
              case .failure = ExpressionParser.parse(text),
              case .success = ExpressionParser.parse(String(text.dropFirst(word.count))) else { return nil }
        let hint = Suggestions.didYouMean(word, in: quantifiers).map { "; \($0)" }
            ?? "; write every, some or no before the predicate (without one, it is every)"
        return "'\(word)' is not a quantifier\(hint)"
    }

    /// The checker's errors for an assertion's predicate over `entity`, or nil when it does not
    /// parse (which evaluating it reports).
    private static func checkProblems(_ source: ExpressionSource, entity: String, schema: Schema) -> [String]? {
        guard case .success(let parsed) = ExpressionParser.parse(source.text) else { return nil }
        var checker = ExpressionChecker(scope: CheckScope(schema: schema, source: entity), source: source)
        checker.checkPredicate(parsed)
        return checker.diagnostics.filter { $0.severity == .error }.map { diagnostic in
            let at = diagnostic.location ?? source.origin
            return "\(at): \(diagnostic.message)" + (diagnostic.fix.map { "; \($0)" } ?? "")
        }
    }

    /// A predicate's value for an object (or none), nil after reporting a predicate that does not parse or evaluate.
    private static func evaluate(_ text: String, object: ObjectRef?, graph: StoreObjectGraph, source: ExpressionSource?, place: String, failures: inout [String]) throws -> Bool? {
        switch ExpressionParser.parse(text) {
        case .success(let expression): return try evaluate(expression, object: object, graph: graph, source: source, place: place, failures: &failures)
        case .failure(let error):
            failures.append("\(errorPlace(error, in: source) ?? place): \(error.message)" + (error.fix.map { "; \($0)" } ?? ""))
            return nil
        }
    }

    /// A parsed predicate's value for an object (or none), nil after reporting a failure to evaluate it.
    private static func evaluate(_ parsed: Expr, object: ObjectRef?, graph: StoreObjectGraph, source: ExpressionSource?, place: String, failures: inout [String]) throws -> Bool? {
        let value: EvalValue = object.map { .object($0) } ?? .null
        let evaluator = Evaluator(context: EvaluationContext(graph: graph, evaluatedObject: value, variables: ["source": value]))
        do { return try evaluator.evaluatePredicate(parsed) } catch let error as ExpressionError {
            failures.append("\(errorPlace(error, in: source) ?? place): \(error.message)" + (error.fix.map { "; \($0)" } ?? ""))
            return nil
        }
    }

    /// `file:line:column` of an expression's error, when the text is the file's.
    private static func errorPlace(_ error: ExpressionError, in source: ExpressionSource?) -> String? {
        source.map { "\($0.location(of: error.range.start))" }
    }

    /// The cases as JUnit XML.
    static func junit(_ cases: [MigrationTestCase]) -> String {
        func escaped(_ text: String) -> String {
            var result = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "&": result += "&amp;"
                case "<": result += "&lt;"
                case ">": result += "&gt;"
                case "\"": result += "&quot;"
                case "\n", "\t": result.unicodeScalars.append(scalar)
                case _ where scalar.value < 0x20: result += "?"
                default: result.unicodeScalars.append(scalar)
                }
            }
            return result
        }
        let failed = cases.filter { !$0.passed }.count, skipped = cases.filter { $0.skipped != nil }.count
        let total = cases.reduce(0) { $0 + $1.seconds }
        let counts = "tests=\"\(cases.count)\" failures=\"\(failed)\" skipped=\"\(skipped)\" time=\"\(String(format: "%.3f", total))\""
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                     "<testsuites \(counts)>",
                     "  <testsuite name=\"mapc test\" \(counts)>"]
        for test in cases {
            let attributes = "classname=\"migrations\" name=\"\(escaped(test.name))\" time=\"\(String(format: "%.3f", test.seconds))\""
            if let why = test.skipped {
                lines.append("    <testcase \(attributes)><skipped message=\"\(escaped(why))\"/></testcase>")
            } else if test.passed {
                lines.append("    <testcase \(attributes)/>")
            } else {
                lines.append("    <testcase \(attributes)>")
                // The message, which a CI shows as the annotation: the first failures whole (a
                // comparison's header and its first differences), up to a few lines.
                let summary = test.failures.joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false).prefix(6).joined(separator: "\n")
                lines.append("      <failure message=\"\(escaped(summary).replacingOccurrences(of: "\n", with: "&#10;"))\">\(escaped(test.failures.joined(separator: "\n")))</failure>")
                lines.append("    </testcase>")
            }
        }
        lines += ["  </testsuite>", "</testsuites>"]
        return lines.joined(separator: "\n") + "\n"
    }
}
