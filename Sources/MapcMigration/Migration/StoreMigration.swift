import Foundation
import MapcFoundation
import MapcModel
import MapcStore
internal import GRDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a migration on a store file safely: the store is either untouched at its old version or
/// fully migrated and validated, whatever fails, and whenever the process is killed.
///
/// 1. An exclusive lock (`STORE.mapc-lock`, released by the kernel if the process dies) keeps two
///    migrations of one store apart; under it, files left by an earlier killed run are removed.
/// 2. Each step builds its destination in a temporary file beside the store, validated and flushed;
///    a chain of steps reads each intermediate file and deletes it once the next step is built.
/// 3. The original's write-ahead log is checkpointed and removed (a new file must never meet an
///    old `-wal`), an optional backup is hard-linked, and the last temporary file is renamed over
///    the store: one atomic step, once, at the end. The folder is then synced.
package enum StoreMigration {
    /// The lock file's path for a store.
    package static func lockPath(for store: String) -> String { StoreLock.path(for: store) }

    /// Migrates `store` with one mapping from its schema to `destination`.
    package static func run(store path: String, source: Schema, destination: Schema, mapping: MappingModel, options: MigrationOptions = MigrationOptions(),
                           policies: PolicyRegistry = .shared, progress: ((MigrationProgress) -> Void)? = nil) throws -> MigrationOutcome {
        let step = MigrationStep(source: source, destination: destination, mapping: mapping, mappingSHA256: VersionHash.sha256(mapping.file?.text ?? ""))
        return try run(store: path, steps: [step], options: options, policies: policies) { _, _, update in progress?(update) }
    }

    /// Why the store at `path` (really at `real`) cannot be replaced by its migrated store: its
    /// folder is not writable, it is read-only, it has another name. `run` refuses before reading,
    /// its dry run too, and `plan` says so, as the run it plans would meet it.
    package static func inPlaceProblem(_ path: String, real: String) -> MapcError? {
        if let problem = Files.unwritableFolderProblem(of: path) { return MapcError.store(problem) }
        if Files.isReadOnlyStore(real) {
            // Its owner's write bit may be set: then it is another user's file (chmod u+w would do nothing).
            var info = stat()
            let others = stat(real, &info) == 0 && info.st_uid != geteuid()
            let mend = others ? "It belongs to another user (uid \(info.st_uid)): run as that user, or have it given to you (chown) or made writable for you, to migrate it in place"
                : "Make it writable (chmod u+w) to migrate it in place"
            return MapcError.store("\(path) is read-only\(others ? " for you" : ""): a migration replaces it with the migrated store. \(mend), "
                                   + "or write the migrated store to a new file (`mapc run --output`; in code, `MigrationOptions.output`)")
        }
        // A backup name a killed `--keep-backup` run left on the store itself is no other name:
        // the run removes it (`leftovers`).
        if let links = Files.linkCount(real), links - killedRunBackups(of: real).count > 1 {
            return MapcError.store("\(path) has another name (a hard link; \(links) names in all): a migration replaces the file, and the other names would keep the old version. "
                                   + "Remove the other names (`find / -xdev -samefile \(path)` lists them) and migrate it by the one the app uses, "
                                   + "or write the migrated store to a new file (`mapc run --output`)")
        }
        return nil
    }

    /// Migrates `store` through a chain of steps (from `MigrationPlanner`) as one atomic operation.
    /// `progress` receives the step's index (from 0), the number of steps, and the step's progress.
    ///
    /// A store reached through a symbolic link is migrated at its real path, and the link kept.
    package static func run(store path: String, steps: [MigrationStep], options: MigrationOptions = MigrationOptions(), policies: PolicyRegistry = .shared,
                           progress: ((Int, Int, MigrationProgress) -> Void)? = nil) throws -> MigrationOutcome {
        guard let first = steps.first else { throw MigrationError.setup("nothing to migrate") }
        if let problem = MigrationOptions.batchSizeProblem(options.batchSize, name: "MigrationOptions.batchSize") { throw MapcError.input(problem) }
        let real = try Files.existingStore(path)
        let replaces = !options.dryRun && options.output == nil
        // What stops the replacement stops a dry run too: it says what the run would meet.
        if options.output == nil, let problem = inPlaceProblem(path, real: real) { throw problem }
        if replaces, options.keepBackup, let problem = backupNameProblem(real, version: first.source.version) { throw MapcError.store(problem) }
        let lock = try StoreLock(store: path)
        defer { lock.release() }
        removeLeftovers(besides: real)
        let output = try options.output.map { try Files.newStore($0.path, from: real) }
        // Two runs writing one new file take turns (what one leaves beside it, the other must not remove).
        let outputLock = options.dryRun ? nil : try output.map { try StoreLock(store: $0) }
        defer { outputLock?.release() }
        if let output { removeLeftovers(besides: output) }
        let target = output ?? real
        // Core Data's support folder is beside the store as the app names it (links not resolved).
        let external = try externalData(of: path, output: options.output?.path, options: options)
        // No process may commit to the store from the first read to the replacement.
        // A store this user cannot write is only ever read (the run writes elsewhere or nothing):
        // what another process commits meanwhile stays in it, so its write lock is not needed.
        // So is one whose companion files (`-wal`, `-shm`) it cannot write, which SQLite writes to lock it.
        let lockable = Files.isWritable(real) && Store.unwritableCompanions(of: real).isEmpty
        let exclusion = replaces || lockable ? try WriterExclusion(realPath: real, name: path) : nil
        defer { exclusion?.close() }
        if options.output == nil, let exclusion, exclusion.wasWAL { try refuseHeldOpen(path, real: real) }
        var stepOptions = options
        stepOptions.externalFiles = CoreDataExternalData.beside(store: path)
        let (summaries, temporary, notes) = try buildSteps(steps, of: real, besides: target, options: stepOptions, policies: policies,
                                                           sourceIsLocked: exclusion != nil, progress: progress)
        if options.dryRun {
            AtomicFile.removeStoreFiles(temporary)
            return MigrationOutcome(steps: summaries, resultPath: nil, backupPath: nil, notes: notes)
        }
        // The migrated store keeps the source's journal mode (read from its header when this
        // run could not lock it: a store this user cannot write, migrated to an output).
        if exclusion?.wasWAL ?? Store.isInWriteAheadLogMode(real) {
            do { try Store.keepWriteAheadLogMode(at: temporary) } catch {
                AtomicFile.removeStoreFiles(temporary)
                throw error
            }
        }
        if let output, let requested = options.output?.path {
            do { try Files.givePermissionsOfCopy(from: real, to: temporary) } catch {
                AtomicFile.removeStoreFiles(temporary)
                throw error
            }
            let carried = try carry(external, to: requested, options: options) { try moveIntoPlace(temporary, at: output, options: options) }
            return MigrationOutcome(steps: summaries, resultPath: requested, backupPath: nil, notes: notes + carried)
        }
        guard let exclusion else {
            AtomicFile.removeStoreFiles(temporary)
            throw MigrationError.setup("\(path) was not locked for its replacement")
        }
        // A Core Data store made into mapc's format in place holds its external values itself now.
        let support = CoreDataExternalData.beside(store: path)
        let leavesSupport = options.destinationFormat.map { $0.identifier != StoreFormat.coreData.identifier } == true && support.exists
            && (try? Store.metadata(at: real).format.identifier) == StoreFormat.coreData.identifier
        let backup = try replace(real, with: temporary, exclusion: exclusion, options: options, sourceVersion: first.source.version)
        var leftBehind: [String] = []
        if leavesSupport, support.values() != nil {
            leftBehind.append("the store holds its external values itself now: \(Files.fileURL(support.supportFolder).lastPathComponent) beside it, "
                              + "where Core Data kept them, is no longer read, and was left as it is; remove it when nothing needs it")
        }
        return MigrationOutcome(steps: summaries, resultPath: path, backupPath: backup, notes: notes + leftBehind)
    }

    /// A store in write-ahead-log mode cannot be replaced while another process has it open (its
    /// log cannot be folded in): a run would build the migrated store and be refused at the end,
    /// so it stops before it begins, and a dry run says what the run would meet.
    private static func refuseHeldOpen(_ path: String, real: String) throws {
        let holders = LockHolders.processesSharing(real)
        guard !holders.isEmpty else { return }
        let who = holders.count == 1 ? "process \(holders[0]) has" : "processes \(holders.map(String.init).joined(separator: ", ")) have"
        throw MapcError.storeInUse(Store.inUseMessage(path) + ". Here \(who) it open in write-ahead-log mode, under which it cannot be replaced: "
                                   + "a run would be refused when it came to replace it, so nothing was done")
    }

    /// Builds the steps' stores one after the other, each in a temporary file beside `target`
    /// made from the previous one (the first from the store at `real`, which is only read), and
    /// returns their summaries with the last step's file and what the store held that the run
    /// leaves out. Whatever fails, no temporary file is left.
    private static func buildSteps(_ steps: [MigrationStep], of real: String, besides target: String, options: MigrationOptions, policies: PolicyRegistry,
                                   sourceIsLocked: Bool, progress: ((Int, Int, MigrationProgress) -> Void)?)
        throws -> (summaries: [MigrationSummary], temporary: String, notes: [String]) {
        guard let first = steps.first else { throw MigrationError.setup("nothing to migrate") }
        var summaries: [MigrationSummary] = []
        var previousTemporary: String?
        var sourceStore: Store
        do {
            sourceStore = try Store.open(at: real, schema: first.source, readOnly: true)
        } catch {
            // Planned before the lock was taken: another process may have migrated it since.
            if let (format, metadata) = try? Store.metadata(at: real), !metadata.matches(first.source, format: format) {
                throw MigrationError.storeChanged(store: real, planned: first.source.version, found: metadata.version)
            }
            throw error
        }
        // Tables the model does not have are not in a store made from it: an app's own rows are
        // never left out unasked; Core Data's history and mirroring state are, and said so.
        let foreign: [ForeignTable]
        do { foreign = try sourceStore.foreignTables() } catch {
            try? sourceStore.close()
            throw error
        }
        var layoutNotes = sourceStore.layoutNotes()
        // A store of mapc's format made into a Core Data store: its objects' ids are not kept.
        if let format = options.destinationFormat, sourceStore.keepsIdentities, format.identifier == StoreFormat.coreData.identifier {
            let example = sourceStore.schema.entities.first { !$0.isAbstract }?.name ?? "Entity"
            layoutNotes.append("the objects' ids are not kept in a Core Data store, which names its objects by entity and key (\(example)/p1, …, as `mapc dump` shows them)")
        }
        let unasked = foreign.filter(\.needsConsent)
        if !unasked.isEmpty && !options.acceptsDataLoss {
            try? sourceStore.close()
            throw MigrationError.foreignTables(tables: unasked.map(\.describedWithCost))
        }
        // Asked under the lock, of the store as the first step reads it: what a value no object
        // holds costs is nothing, and one saved since the plan was made is seen.
        let lossNotes: [String]
        do { lossNotes = try refuseDataLoss(in: steps, accepted: options.acceptsDataLoss, asking: sourceStore) } catch {
            try? sourceStore.close()
            throw error
        }
        // The store's own checks run beside the first step, which stops early if they fail, and
        // waits for them before it validates: its file is used only once they passed. A step
        // with custom policies waits for them before it starts: policy code never sees a store
        // that fails them.
        let checks = SourceChecks(path: real, schema: first.source)
        var firstStepOptions = options
        firstStepOptions.isCancelled = { [isCancelled = options.isCancelled] in checks.hasFailed || isCancelled() }
        var conversionNotes: [String] = []
        do {
            for (index, step) in steps.enumerated() {
                let temporary = try AtomicFile.privateFile(besides: target)
                // The step's first update says it has begun, before anything can fail in it.
                progress?(index, steps.count, MigrationProgress(phase: .create, mapping: nil, completed: 0, total: nil))
                do {
                    if index == 0, step.allPasses.contains(where: { $0.entityMappings.contains { $0.policy != nil } }) { try checks.waitUntilTrusted() }
                    conversionNotes += try ConversionLosses.notes(of: step, in: sourceStore).map { steps.count > 1 ? "step \(step.source.version) -> \(step.destination.version): \($0)" : $0 }
                    // The first step's source is the store, which nobody can commit to while its write lock is held; later ones are files of this run.
                    let built = try migrateStep(step, from: sourceStore, into: temporary, options: index == 0 ? firstStepOptions : options, policies: policies,
                                                sourceIsUnchanging: index > 0 || sourceIsLocked, beforeValidation: index == 0 ? { try checks.wait() } : nil) {
                        progress?(index, steps.count, $0)
                    }
                    try checks.wait()
                    if options.isCancelled() { throw MigrationError.cancelled }
                    summaries.append(built)
                } catch {
                    AtomicFile.removeStoreFiles(temporary)
                    if index == 0, let found = checks.failure(after: error) { throw found }
                    // Rules the store already broke are said to be the store's, not the step's: where
                    // the step is inferred, whose objects keep their identities (a mapping's may not).
                    if index == 0, step.isInferred, case MigrationError.validation(let violations, let total) = error, let before = try? sourceStore.violations() {
                        throw MigrationError.validation(violations: ValidationViolation.marking(violations, before: before.violations), total: total)
                    }
                    throw error
                }
                try sourceStore.close()
                if let previousTemporary { AtomicFile.removeStoreFiles(previousTemporary) }
                previousTemporary = temporary
                if index < steps.count - 1 {
                    sourceStore = try Store.open(at: temporary, schema: step.destination, readOnly: true)
                }
            }
        } catch {
            try? sourceStore.close()
            if let previousTemporary { AtomicFile.removeStoreFiles(previousTemporary) }
            throw error
        }
        guard let temporary = previousTemporary, let last = steps.last else { throw MigrationError.setup("no step ran") }
        do { try readBack(temporary, schema: last.destination) } catch {
            AtomicFile.removeStoreFiles(temporary)
            throw error
        }
        let cautions = zip(steps, summaries).flatMap { step, summary in
            summary.cautions.map { steps.count > 1 ? "step \(step.source.version) -> \(step.destination.version): \($0)" : $0 }
        }
        return (summaries, temporary, ForeignTable.notes(foreign) + layoutNotes + lossNotes + checks.notes + conversionNotes + cautions + derivedNotes(of: last.destination))
    }

    /// What a run does for a store already at the version asked for: nothing in place or in a dry
    /// run; with `output`, a copy of the store written there (SQLite's backup of one read
    /// transaction, flushed, then moved into place), so that the output holds the store at that
    /// version whichever way the plan turned out.
    package static func runWithoutSteps(store path: String, options: MigrationOptions = MigrationOptions()) throws -> MigrationOutcome {
        if let format = options.destinationFormat {
            // A copy keeps the store's format: a conversion is a step (`Migrator.converting`).
            let current = try Store.metadata(at: path).format
            guard current.identifier == format.identifier else {
                throw MigrationError.setup("\(path) is already at the version asked for, as a \(current.name) store: a conversion to the \(format.name) format needs a step of the version to itself, which a migration of the store makes")
            }
        }
        guard let requested = options.output?.path else {
            // Nothing to do in place; what a killed run left beside the store goes now, when no
            // run holds the store (a dry run touches nothing).
            if !options.dryRun, let real = try? Files.existingStore(path), let lock = try? StoreLock(store: path) {
                removeLeftovers(besides: real)
                lock.release()
            }
            return MigrationOutcome(steps: [], resultPath: path, backupPath: nil)
        }
        guard !options.dryRun else { return MigrationOutcome(steps: [], resultPath: nil, backupPath: nil) }
        let real = try Files.existingStore(path)
        let lock = try StoreLock(store: path)
        defer { lock.release() }
        let output = try Files.newStore(requested, from: real)
        let outputLock = try StoreLock(store: output)
        defer { outputLock.release() }
        removeLeftovers(besides: output)
        let external = try externalData(of: path, output: requested, options: options)
        let temporary = try AtomicFile.privateFile(besides: output)
        var carried: [String] = []
        do {
            let source = try Store.openQueue(path: real, readOnly: true)
            defer { try? source.close() }
            let copy: DatabaseQueue
            do { copy = try DatabaseQueue(path: temporary) } catch let error as DatabaseError {
                throw Store.storeError(error, path: output, doing: "cannot write the copy")
            }
            // In steps, so that a cancellation stops it; SQLite restarts a step whose source changed.
            try source.backup(to: copy, pagesPerStep: 1024) { _ in
                if options.isCancelled() { throw MigrationError.cancelled }
            }
            try copy.close()
            // A copy is a copy of its pages: damage SQLite's check finds in it is the store's.
            if let damage = Store.damage(at: temporary, naming: path) { throw damage }
            try Files.givePermissionsOfCopy(from: real, to: temporary)
            try Files.sync(temporary)
            if options.isCancelled() { throw MigrationError.cancelled }
            carried = try carry(external, to: requested, options: options) { try Files.moveIntoPlace(temporary, output) }
        } catch let error as DatabaseError {
            AtomicFile.removeStoreFiles(temporary)
            throw Store.storeError(error, path: path, doing: "cannot copy the store")
        } catch {
            AtomicFile.removeStoreFiles(temporary)
            throw error
        }
        return MigrationOutcome(steps: [], resultPath: requested, backupPath: nil, notes: carried)
    }

    /// Builds one step's destination in a new file at `path`, with the source's history plus this step.
    static func migrateStep(_ step: MigrationStep, from sourceStore: Store, into path: String, options: MigrationOptions, policies: PolicyRegistry,
                            sourceIsUnchanging: Bool, beforeValidation: (() throws -> Void)? = nil,
                            progress: ((MigrationProgress) -> Void)?) throws -> MigrationSummary {
        let destinationFormat = options.destinationFormat ?? sourceStore.format
        // A Core Data store's join tables and sibling columns keep the names the store gave them,
        // where the new version has the same tables and columns (the same entities and attributes).
        let sameFormat = destinationFormat.identifier == sourceStore.format.identifier
        let destinationStore = try Store.create(at: path, schema: step.destination, format: destinationFormat,
                                                carrying: try sourceStore.metadata(), writingBehind: true,
                                                joinTableNames: sameFormat ? sourceStore.joinTableDepartures : [],
                                                columnNames: sameFormat ? sourceStore.columnDepartures : [])
        // The numbers an app keeps in the file's header are the app's, kept as the metadata is.
        try destinationStore.setHeaderFields(try sourceStore.headerFields())
        // The temporary file is thrown away on any failure, so it needs no journal while it is built.
        try destinationStore.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = OFF")
            try db.execute(sql: "PRAGMA synchronous = OFF")
        }
        // The kernel's copy of each written page into its cache, a large share of the main
        // thread's time (docs/performance.md), is made on another thread (`Store+WriteBehind`).
        destinationStore.beginWritingBehind()
        // Once the file is built, the kernel starts writing it on a thread of its own while
        // validation reads it on this one, and the final flush waits only for the rest. The
        // write-back's descriptor is closed once the connection is (closing it earlier would drop
        // the connection's locks); on a failure the file is thrown away, so its locks no longer matter.
        var writeback: Files.Writeback?
        defer { writeback?.end() }
        let summary = try migrate(step, from: sourceStore, into: destinationStore, options: options, policies: policies, progress: progress,
                                  readsAhead: sourceIsUnchanging) {
            try beforeValidation?()
            writeback = Files.Writeback(path)
        }
        // Every queued write made, or the step fails: the file is synced and moved into place next.
        try destinationStore.endWritingBehind()
        try destinationStore.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        try destinationStore.close()
        writeback?.end()
        try Files.sync(path)
        return summary
    }

    /// Runs one step into an empty destination store (a file or memory) and records it in the destination's history.
    package static func migrate(_ step: MigrationStep, from sourceStore: Store, into destinationStore: Store, options: MigrationOptions = MigrationOptions(),
                               policies: PolicyRegistry = .shared, progress: ((MigrationProgress) -> Void)? = nil) throws -> MigrationSummary {
        try migrate(step, from: sourceStore, into: destinationStore, options: options, policies: policies, progress: progress, readsAhead: false, beforeValidation: nil)
    }

    private static func migrate(_ step: MigrationStep, from sourceStore: Store, into destinationStore: Store, options: MigrationOptions, policies: PolicyRegistry,
                                progress: ((MigrationProgress) -> Void)?, readsAhead: Bool, beforeValidation: (() throws -> Void)?) throws -> MigrationSummary {
        let started = ISO8601.milliseconds(Date())
        // Each pass (Apple's "multiple passes": usually one) runs its three phases into what the
        // passes before it wrote; the store is used only once the last has validated it.
        var summary: MigrationSummary?
        let passes = step.allPasses
        for (index, pass) in passes.enumerated() {
            var migration = StepMigration(source: sourceStore, destination: destinationStore, mapping: pass, policies: policies)
            migration.batchSize = options.batchSize
            migration.allowsSQL = options.allowsSQL
            migration.progress = progress
            migration.isCancelled = options.isCancelled
            // An inferred step is Core Data's lightweight migration, which keeps every object's key.
            migration.keepsKeys = step.isInferred
            migration.followsAnotherPass = index > 0
            // The objects earlier passes gave their bare ids, pass by pass as within one.
            migration.entitiesReadByEarlierPasses = passes[..<index].reduce(into: Set<String>()) { named, pass in
                for (entityMapping, suffix) in zip(pass.entityMappings, MigrationAnalysis.identitySuffixes(of: pass.entityMappings, in: sourceStore.schema, readBefore: named)) where suffix.isEmpty {
                    named.formUnion(MigrationAnalysis.entitiesRead(by: entityMapping, in: sourceStore.schema))
                }
            }
            migration.beforeValidation = index == passes.count - 1 ? beforeValidation : nil
            migration.readsAhead = readsAhead
            migration.externalFiles = options.externalFiles
            let made = try migration.run()
            summary = summary.map { $0.followed(by: made) } ?? made
        }
        guard let summary else { throw MigrationError.setup("the step \(step.source.version) -> \(step.destination.version) has no mapping to run") }
        var history = try StoreHistory.read(sourceStore)
        history.append(HistoryEntry(fromVersion: step.source.version, fromHash: VersionHash.modelHash(of: step.source), toVersion: step.destination.version,
                                    toHash: VersionHash.modelHash(of: step.destination), inferred: step.isInferred, mappingSHA256: step.mappingSHA256,
                                    startedAt: started, finishedAt: ISO8601.milliseconds(Date()),
                                    created: Dictionary(summary.created.map { ($0.name, $0.count) }, uniquingKeysWith: +), tool: MapcVersion.tool))
        try StoreHistory.write(history, to: destinationStore)
        return summary
    }
}
