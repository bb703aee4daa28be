import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// The team's corpus of real Core Data files (`../shared/corpus`), read in place and never copied:
/// tests that use it are skipped, saying why, where it is absent (a user's fresh clone).
enum Corpus {
    static let root = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    static var isAvailable: Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent("README.md").path) }
    static let skipReason: Comment = "../shared/corpus (real Core Data files) is not present"

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// Every `.xcdatamodeld` in the corpus.
    static var models: [String] {
        guard isAvailable, let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".xcdatamodeld") }.sorted().map { root.appendingPathComponent($0).path }
    }

    /// Every `.xcmappingmodel` in the corpus.
    static var mappingModels: [String] {
        guard isAvailable, let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".xcmappingmodel") }.sorted().map { root.appendingPathComponent($0).path }
    }

    /// A copy of a corpus store (with its -wal and -shm) in a temporary folder, for tests that open it:
    /// the corpus folder is read-only.
    static func copyOfStore(_ name: String, into folder: URL) throws -> URL {
        let target = folder.appendingPathComponent(name)
        for suffix in ["", "-wal", "-shm"] {
            let source = path("moody/stores/\(name)\(suffix)")
            guard FileManager.default.fileExists(atPath: source) else { continue }
            try FileManager.default.copyItem(atPath: source, toPath: target.path + suffix)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path + suffix)
        }
        return target
    }
}
