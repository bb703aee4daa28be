import Foundation
import MapcKit

/// The UnCloudNotes example that ships with mapc: where its schemas and mappings are, and the
/// fixture data `mapc demo` loads.
public enum UnCloudNotesDemo {
    /// The package's root folder, found from this file's location at build time, so the demo works
    /// from any working directory (the schemas and mappings are read from the checkout).
    public static let packageRoot: URL = Files.fileURL(#filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The shipped schemas folder: an install's own copy (`mapc install` writes it to
    /// `<prefix>/lib/mapc/example`, of the same build), else the checkout's (a build run from
    /// `.build`), else `./schemas`.
    public static var schemasFolder: String { existing("schemas") }
    /// The shipped mappings folder, found the same way.
    public static var mappingsFolder: String { existing("mappings") }

    /// The example project's other folders, found the same way: its policy files, fixture
    /// stores, expected data and editor schemas.
    public static var projectFolders: [String] { ["policies", "fixtures", "expected", "editor"].map(existing) }

    /// Where an install keeps the example, relative to the executable's folder.
    public static let installedFolder = "../lib/mapc/example"

    private static func existing(_ name: String) -> String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map(URL.init(fileURLWithPath:))
        let installed = executable?.deletingLastPathComponent().appendingPathComponent(installedFolder).appendingPathComponent(name).standardizedFileURL
        for candidate in [installed, packageRoot.appendingPathComponent(name)].compactMap({ $0 }) where FileManager.default.fileExists(atPath: candidate.path) {
            return candidate.path
        }
        return "./\(name)"
    }

    /// Notes written with version 1 of the app (no images yet): deterministic, `count` of them.
    public static func v1Fixture(count: Int) -> JSONValue {
        .object([("version", .string("v1")), ("objects", .object([("Note", .array((0..<count).map { note($0, version: 1) }))]))])
    }

    /// Notes written with version 2, every third with a photo (PNG or JPEG of varying size).
    public static func v2Fixture(count: Int) -> JSONValue {
        .object([("version", .string("v2")), ("objects", .object([("Note", .array((0..<count).map { note($0, version: 2) }))]))])
    }

    private static let subjects = ["Groceries", "Ideas", "Trip to Kyoto", "Meeting notes", "Recipe: ramen", "Books to read", "Garden", "Birthday gifts", "Workout", "Quotes"]
    private static let phrases = ["milk, eggs and bread", "call the plumber about the leak under the sink", "the temple gardens open at nine",
                                  "agenda: budget, hiring, the new office", "simmer the broth for six hours", "finish the second volume first",
                                  "plant the tomatoes after the last frost", "something handmade this year", "three sets of ten, then stretch",
                                  "\u{201C}The best way out is always through.\u{201D}"]

    private static func note(_ index: Int, version: Int) -> JSONValue {
        let subject = subjects[index % subjects.count]
        let body = "\(subject): \(phrases[(index * 7) % phrases.count]). Note number \(index + 1), kept since version \(version) of the app."
        let date = Date(timeIntervalSince1970: 1_672_531_200 + Double(index) * 3_600)
        var pairs: [(String, JSONValue)] = [("id", .string("note-\(version)-\(index + 1)")), ("title", .string("\(subject) #\(index + 1)")),
                                            ("body", .string(body)), ("dateCreated", .string(ISO8601.format(Timestamp(date)))), ("displayIndex", .integer(Int64(index)))]
        if version >= 2 {
            pairs.append(("image", index % 3 == 0 ? .string(image(index).base64EncodedString()) : .null))
        }
        return .object(pairs)
    }

    /// A small image: a PNG header, or a JPEG header, of a size that varies with the index.
    static func image(_ index: Int) -> Data {
        let width = 320 + (index % 7) * 160, height = 240 + (index % 5) * 120
        if index % 2 == 0 {
            var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
            for value in [width, height] { data.append(contentsOf: [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]) }
            data.append(contentsOf: [8, 6, 0, 0, 0])
            return data
        }
        var data = Data([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08])
        data.append(contentsOf: [UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF)])
        data.append(contentsOf: [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xFF, 0xD9])
        return data
    }
}
