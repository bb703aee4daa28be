import Foundation
import MapcStore

/// What a store is, as `Migrator.status(ofStoreAt:)` finds it.
public struct StoreStatus: Sendable {
    /// The store.
    public var url: URL
    /// The format's identifier ("mapc-1", "core-data").
    public var format: String
    /// The format's name ("mapc", "Core Data").
    public var formatName: String
    /// What the store records about itself.
    public var metadata: StoreMetadata
    /// The version its hashes identify, if any.
    public var version: String?
    /// Every version whose hashes equal the store's.
    public var compatibleVersions: [String]
    /// How the version was identified, in words.
    public var identification = ""
    /// The store's model: as its metadata records it, or else the matching version's (Core Data
    /// stores record none).
    public var model: String?
    /// Objects of each entity (sub-entities under their own names), when a version matched.
    public var objectCounts = ObjectCounts()
    /// The migrations applied to the store, oldest first.
    public var history: [HistoryEntry] = []
    /// Tables of the file that no entity keeps and a migration leaves out (Core Data's persistent
    /// history, mirroring state, an app's own tables), each with its rows; empty when none or when
    /// no version matches.
    public var otherTables: [String] = []
    /// Core Data's files of large binary values beside the store (attributes that allow external
    /// storage), in words with where they are ("3 files (1.2 MB) in .Notes_SUPPORT/_EXTERNAL_DATA");
    /// nil when there are none. They belong to the store's file name: `run --output` copies them.
    public var externalData: String?

    init(url: URL, format: String, formatName: String, metadata: StoreMetadata, version: String?, compatibleVersions: [String]) {
        self.url = url
        self.format = format
        self.formatName = formatName
        self.metadata = metadata
        self.version = version
        self.compatibleVersions = compatibleVersions
    }
}
