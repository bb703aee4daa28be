import Foundation
import MapcFoundation
import MapcModel

/// The readings of schema files an editor's server has made, kept by path and text: an edit to
/// one schema reads that file again, not its whole folder (a history of 120 versions was read
/// whole on every keystroke and every completion, over a second each).
package final class SchemaReadings: @unchecked Sendable {
    /// The most files kept; past it the readings start again (a server follows a few projects).
    static let maxFiles = 4_096
    private let lock = NSLock()
    private var kept: [String: (text: String, reading: SchemaCatalog.FileReading)] = [:]
    /// How many files have been read (not taken from what is kept).
    package var reads: Int { lock.withLock { readCount } }
    private var readCount = 0

    /// No readings yet.
    package init() {}

    /// A file's reading: the one kept when its text is the same, else read now and kept (its
    /// lines are cut only then: a `SourceFile` made for each file cost a fifth of an edit).
    package func reading(path: String, text: String) -> SchemaCatalog.FileReading {
        if let found = lock.withLock({ kept[path] }), found.text == text { return found.reading }
        let reading = SchemaCatalog.FileReading(SourceFile(path: path, text: text))
        lock.withLock {
            if kept.count >= Self.maxFiles { kept.removeAll() }
            kept[path] = (text, reading)
            readCount += 1
        }
        return reading
    }
}
