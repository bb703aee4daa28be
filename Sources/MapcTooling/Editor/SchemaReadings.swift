import Foundation
import MapcFoundation
import MapcMigration
import MapcModel

/// The readings of project files an editor's server has made, kept by path and text: an edit to
/// one file reads that file again, not its whole folder (a history of 120 versions was read
/// whole on every keystroke and every completion, over a second each; its eleven mapping files
/// of 2,000 lines were read on every keystroke, 0.5 s of each).
package final class FileReadings<Reading>: @unchecked Sendable {
    /// The most files kept; past it the readings start again (a server follows a few projects).
    static var maxFiles: Int { 4_096 }
    private let lock = NSLock()
    private var kept: [String: (text: String, reading: Reading)] = [:]
    private let read: (SourceFile) -> Reading
    /// How many files have been read (not taken from what is kept).
    package var reads: Int { lock.withLock { readCount } }
    private var readCount = 0

    /// No readings yet; `read` reads a file.
    package init(read: @escaping (SourceFile) -> Reading) {
        self.read = read
    }

    /// A file's reading: the one kept when its text is the same, else read now and kept (its
    /// lines are cut only then: a `SourceFile` made for each file cost a fifth of an edit).
    package func reading(path: String, text: String) -> Reading {
        if let found = lock.withLock({ kept[path] }), found.text == text { return found.reading }
        let reading = read(SourceFile(path: path, text: text))
        lock.withLock {
            if kept.count >= Self.maxFiles { kept.removeAll() }
            kept[path] = (text, reading)
            readCount += 1
        }
        return reading
    }
}

/// The schema files' readings.
package typealias SchemaReadings = FileReadings<SchemaCatalog.FileReading>

extension FileReadings where Reading == SchemaCatalog.FileReading {
    /// No readings yet.
    package convenience init() { self.init(read: SchemaCatalog.FileReading.init) }
}

/// The mapping files' readings.
package typealias MappingReadings = FileReadings<MappingCatalog.FileReading>

extension FileReadings where Reading == MappingCatalog.FileReading {
    /// No readings yet.
    package convenience init() { self.init(read: MappingCatalog.FileReading.init) }
}
