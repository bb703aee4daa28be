import Foundation
import MapcStore
import MapcFoundation

/// How `StoreMigration.run` treats the store.
public struct MigrationOptions: Sendable {
    /// Migrate and validate into a temporary file, report, and leave the store untouched.
    public var dryRun = false
    /// Write the migrated store here (a new file) instead of replacing the store.
    public var output: URL?
    /// Keep the original store as `STORE.backup-<version>-<timestamp>` next to it.
    public var keepBackup = false
    /// Source objects read per batch, at least 1 (a run refuses less, `MapcError.input`, before
    /// anything is read). Up to three batches are in memory at once: the one worked on, the next
    /// one read ahead, and one being read.
    public var batchSize = 2_000
    /// Compile what SQLite can run with the same results into SQL; off, every object goes
    /// through the interpreter (slower; for comparing results).
    public var allowsSQL = true
    /// Run inferred steps that drop values (removed entities and properties). Off, such a step
    /// stops the run before anything is read, saying what it would drop.
    public var acceptsDataLoss = false
    /// The format of the migrated store; nil keeps the store's own (a Core Data store stays one).
    public var destinationFormat: StoreFormat?
    /// Asked between batches; when it returns true the run stops, changing nothing.
    public var isCancelled: @Sendable () -> Bool = { false }
    /// Where Core Data's external values of the store being migrated are: every step reads them
    /// from the store's own folder (a later step's source is a file of the run, whose references
    /// are still the store's). Nil: beside each step's source.
    package var externalFiles: CoreDataExternalData?
    /// Creates default options: replace the store in place, no backup.
    public init() {}

    /// Why `batchSize` cannot be used, said of the option named `name`; nil when it can. A batch
    /// of none read nothing, and the empty store it made was valid: every object was lost.
    static func batchSizeProblem(_ batchSize: Int, name: String) -> String? {
        batchSize >= 1 ? nil : "\(name) is \(batchSize): it must be at least 1 (the source objects read per batch; 2,000 by default)"
    }
}

/// What a run did.
public struct MigrationOutcome: Sendable {
    /// The summary of each step, in order.
    public var steps: [MigrationSummary]
    /// Where the migrated store is (the store itself, the requested output, or nil for a dry run).
    public var result: URL?
    /// The backup of the original, when kept.
    public var backup: URL?
    /// What the run left out that the store held besides its objects (Core Data's persistent
    /// history, tables the model does not have), in sentences.
    public var notes: [String] = []

    init(steps: [MigrationSummary], resultPath: String?, backupPath: String?, notes: [String] = []) {
        self.steps = steps
        self.notes = notes
        result = resultPath.map { Files.fileURL($0) }
        backup = backupPath.map { Files.fileURL($0) }
    }

    /// The last step's summary (the whole run's, for a single step); nil when nothing ran.
    public var summary: MigrationSummary? { steps.last }
}
