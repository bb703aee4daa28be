import Foundation
package import GRDB
import MapcFoundation

/// One applied migration, as a store's history records it.
public struct HistoryEntry: Sendable, Equatable {
    /// The version before.
    public var fromVersion: String
    /// The model hash before.
    public var fromHash: String
    /// The version after.
    public var toVersion: String
    /// The model hash after.
    public var toHash: String
    /// Whether the mapping was inferred.
    public var inferred: Bool
    /// SHA-256 of the mapping used.
    public var mappingSHA256: String
    /// When the step started (ISO 8601, UTC).
    public var startedAt: String
    /// When the step finished (ISO 8601, UTC).
    public var finishedAt: String
    /// Objects created by each entity mapping.
    public var created: [String: Int]
    /// The tool that made the step, with its version and build (`mapc 0.2.0 (build 1a2b3c4d5e6f)`);
    /// nil for a step recorded before mapc wrote it.
    public var tool: String?

    /// Creates an entry.
    public init(fromVersion: String, fromHash: String, toVersion: String, toHash: String, inferred: Bool, mappingSHA256: String,
                startedAt: String, finishedAt: String, created: [String: Int], tool: String? = nil) {
        self.fromVersion = fromVersion
        self.fromHash = fromHash
        self.toVersion = toVersion
        self.toHash = toHash
        self.inferred = inferred
        self.mappingSHA256 = mappingSHA256
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.created = created
        self.tool = tool
    }
}

extension HistoryEntry {
    /// The objects created per mapping as a JSON object, by mapping name (what stores keep and
    /// `status --format json` shows).
    package var createdObject: JSONValue {
        .object(created.keys.sorted().map { ($0, .integer(Int64(created[$0] ?? 0))) })
    }

    /// The objects created per mapping as compact JSON, as stores keep it.
    var createdJSON: String { createdObject.serialized() }

    /// The objects created per mapping read back from JSON (nothing when it is damaged).
    static func created(fromJSON text: String?) -> [String: Int] {
        guard let text, case .object(let pairs)? = try? JSONValue.parse(Data(text.utf8), path: "history") else { return [:] }
        var created: [String: Int] = [:]
        for (name, value) in pairs { if case .integer(let n) = value, let count = Int(exactly: n) { created[name] = count } }
        return created
    }
}

/// The migration history a store keeps (where depends on its format): every migration applied to
/// it, oldest first, carried from store to store as it is migrated.
package enum StoreHistory {
    /// The history of a store (empty for a store never migrated).
    package static func read(_ store: Store) throws -> [HistoryEntry] {
        try store.database.read { try store.strategy.readHistory($0) }
    }

    /// The history of the store at `path`, of `format`, whether or not a schema matches it: the
    /// store keeps it itself (`status` of a store no schema folder knows still shows it).
    package static func read(at path: String, format: StoreFormat) throws -> [HistoryEntry] {
        let queue = try Store.openQueue(path: path, readOnly: true)
        defer { try? queue.close() }
        return try queue.read { try format.strategy.readHistory($0) }
    }

    /// Writes `entries` (the source's history plus the new step) into a store.
    package static func write(_ entries: [HistoryEntry], to store: Store) throws {
        try store.database.write { try store.strategy.writeHistory(entries, $0) }
    }
}
