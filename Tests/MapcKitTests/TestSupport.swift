import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Parses schema text written in a test, as if read from `test.yaml`.
func parseSchema(_ yaml: String) -> (schema: Schema?, diagnostics: [Diagnostic]) {
    SchemaLoader.parse(source: SourceFile(path: "test.yaml", text: yaml))
}

/// Loads schema text that must be valid.
func loadSchema(_ yaml: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Schema {
    let (schema, diagnostics) = parseSchema(yaml)
    #expect(!diagnostics.hasErrors, "unexpected errors: \(diagnostics)", sourceLocation: sourceLocation)
    return try #require(schema)
}

/// The package's root folder, found from this file's path.
let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Loads one of the shipped UnCloudNotes schemas.
func uncloudNotes(_ version: String) throws -> Schema {
    try SchemaLoader.load(path: packageRoot.appendingPathComponent("schemas/\(version).yaml").path).schema
}

/// Loads mapping text written in a test (as `m.yaml`) that must have no errors.
func loadMapping(_ yaml: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> MappingModel {
    let (model, diagnostics) = MappingLoader.parse(source: SourceFile(path: "m.yaml", text: yaml))
    #expect(!diagnostics.hasErrors, "unexpected errors: \(diagnostics)", sourceLocation: sourceLocation)
    return try #require(model, sourceLocation: sourceLocation)
}

/// A v2 -> v3 mapping of UnCloudNotes whose first entity mapping is NoteToNote copying the four
/// attributes, with `noteToNote` lines added to it (a policy, a filter) and `more` mappings after.
func noteToNoteMapping(_ noteToNote: [String] = [], more: String = "") -> String {
    """
    source: v2
    destination: v3
    entityMappings:
      - name: NoteToNote
        source: Note
        destination: Note
        attributes: { title: $source.title, body: $source.body, dateCreated: $source.dateCreated, displayIndex: $source.displayIndex }

    """ + noteToNote.map { "    \($0)\n" }.joined() + more
}

/// v2 notes `n0`, `n1`, … with every attribute set (dates a second apart), an image where
/// `images` says so.
func v2Notes(_ count: Int, images: (Int) -> Bool = { $0 % 3 == 0 }, image: Data = Data([1, 2, 3])) -> [ObjectData] {
    (0..<count).map { index in
        ObjectData(id: "n\(index)", entity: "Note", attributes: [
            "title": .string("Note \(index)"), "body": .string("Body \(index)"), "dateCreated": .date(Date(timeIntervalSince1970: Double(index))),
            "displayIndex": .integer(Int64(index)), "image": images(index) ? .binary(image) : .null,
        ])
    }
}

/// A fresh temporary folder, removed by the caller's `defer`.
func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The store formats every migration test of the manager runs against: mapc's own and Core Data's.
enum TestLayout: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case mapc, coreData

    var format: StoreFormat { self == .mapc ? .mapc : .coreData }
    var testDescription: String { rawValue }

    /// A new in-memory store of this layout.
    func store(_ schema: Schema) throws -> Store { try Store.inMemory(schema: schema, format: format) }

    /// The id a store of this layout gives an object inserted as `id`: mapc keeps it, Core Data
    /// names objects after their entity and key (`key` counts from 1 per inheritance hierarchy).
    func id(_ id: String, entity: String, key: Int) -> String { self == .mapc ? id : "\(entity)/p\(key)" }

    /// Every pair of source and destination layouts, the same and crossed.
    static let pairs: [(TestLayout, TestLayout)] = allCases.flatMap { source in allCases.map { (source, $0) } }
}

/// Runs `body` on a thread of its own where no thread can be started (`DetachedThread`, as at
/// the system's thread limit), and waits for it at most `seconds`: nil when it did not finish
/// (the thread is left blocked: a hang fails the test instead of blocking the few threads the
/// tests run on), else what it returned or threw.
func withoutThreads<T: Sendable>(seconds: Double = 30, _ body: @escaping @Sendable () throws -> T) -> Result<T, any Error>? {
    let outcome = ThreadOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        DetachedThread.refusesStartsOnThisThread = true
        let result = Result { try body() }
        outcome.lock.withLock { outcome.value = result }
        done.signal()
    }
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return outcome.lock.withLock { outcome.value }
}

/// What `withoutThreads`' thread gave, guarded.
private final class ThreadOutcome<T>: @unchecked Sendable {
    let lock = NSLock()
    var value: Result<T, any Error>?
}
