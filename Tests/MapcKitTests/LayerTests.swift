import Foundation
import Testing
import MapcStore

/// The layers of MapcKit, as docs/architecture.md describes them, point one way: a file may use
/// the types of its own layer and of the layers below it, never of a layer above. The layers are
/// SwiftPM targets (MapcFoundation, MapcModel, MapcStore, MapcMigration, MapcTooling), so the
/// compiler refuses a use against the grain between them; within a target the folders are layers
/// too (Schema below Expression, Store below Data, Migration below Migrator, Writers below
/// CoreData below Editor), which this test keeps by reading the sources.
@Suite("Architecture")
struct LayerTests {
    /// The layers' folders (`Target/Folder` under Sources), lowest first.
    static let layers = ["MapcFoundation/Diagnostics", "MapcFoundation/Support", "MapcModel/Schema", "MapcModel/Expression", "MapcStore/Store", "MapcStore/Data",
                         "MapcMigration/Migration", "MapcMigration/Migrator", "MapcTooling/Writers", "MapcTooling/CoreData", "MapcTooling/Editor"]
    /// The targets that hold them.
    static let targets = ["MapcFoundation", "MapcModel", "MapcStore", "MapcMigration", "MapcTooling"]
    /// A folder's rank: Diagnostics and Support are one foundation layer (diagnostics are written
    /// as JSON; YAML reading and file handling report diagnostics and errors).
    static func rank(_ layer: String) -> Int { max(1, layers.firstIndex(of: layer) ?? 0) }
    /// The only layers that talk to SQLite through GRDB.
    static let sqliteLayers: Set<String> = ["MapcStore/Store", "MapcMigration/Migration"]

    struct SourceText {
        var layer: String
        var name: String
        var code: String
    }

    /// Every MapcKit source file with its comments removed.
    static func sources() throws -> [SourceText] {
        var result: [SourceText] = []
        for layer in layers {
            let folder = packageRoot.appendingPathComponent("Sources/\(layer)")
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where name.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                let code = text.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }.joined(separator: "\n")
                result.append(SourceText(layer: layer, name: name, code: code))
            }
        }
        return result
    }

    static func words(_ code: String, matching pattern: String, group: Int = 0) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines]) else { return [] }
        let range = NSRange(code.startIndex..., in: code)
        return regex.matches(in: code, range: range).compactMap { Range($0.range(at: group), in: code).map { String(code[$0]) } }
    }

    @Test func everyFolderOfTheLayerTargetsIsALayer() throws {
        var folders: [String] = []
        for target in Self.targets {
            let entries = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("Sources/\(target)").path)
            folders += entries.filter { !$0.hasPrefix(".") }.map { "\(target)/\($0)" }
        }
        #expect(Set(folders) == Set(Self.layers), "a new folder must take its place in LayerTests.layers and docs/architecture.md")
        // MapcKit itself only re-exports the layers (and holds the DocC catalog).
        let umbrella = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("Sources/MapcKit").path).filter { !$0.hasPrefix(".") }
        #expect(Set(umbrella) == ["MapcKit.swift", "MapcKit.docc"], "\(umbrella)")
    }

    @Test func layersUseOnlyTheLayersBelowThem() throws {
        let sources = try Self.sources()
        // The layer that declares each type name (names declared in two layers, such as nested
        // `Kind`s, are ambiguous and skipped).
        var owners: [String: Set<String>] = [:]
        for source in sources {
            for name in Self.words(source.code, matching: #"\b(?:struct|enum|class|protocol|typealias|actor)\s+([A-Z]\w*)"#, group: 1) {
                owners[name, default: []].insert(source.layer)
            }
        }
        #expect(owners["Store"] == ["MapcStore/Store"] && owners["Expr"] == ["MapcModel/Expression"], "the scan finds declarations")
        var violations: [String] = []
        for source in sources {
            let rank = Self.rank(source.layer)
            for name in Set(Self.words(source.code, matching: #"\b[A-Z]\w*\b"#)) {
                guard let owner = owners[name], owner.count == 1, let layer = owner.first,
                      Self.rank(layer) > rank else { continue }
                violations.append("\(source.layer)/\(source.name) uses \(name) from \(layer)")
            }
        }
        #expect(violations.isEmpty, "\(violations.sorted().joined(separator: "\n"))")
    }

    /// The modules a Swift file imports itself: every form of `import` (attributes such as
    /// `@preconcurrency` or `@_spi(X)`, access levels, `import struct GRDB.Row`, indented under
    /// `#if`, after a `;`), and none from comments or from code it only holds in a multi-line
    /// string literal (the policy runner's generated main.swift).
    static func importedModules(_ text: String) -> Set<String> {
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }.joined(separator: "\n")
        let code = uncommented.replacingOccurrences(of: #""{3}[\s\S]*?"{3}"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: ";", with: "\n")
        let pattern = #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?(\w+)"#
        return Set(words(code, matching: pattern, group: 1))
    }

    @Test func importsAreFoundInEveryForm() {
        let text = """
            import Foundation
            @preconcurrency import GRDB
            #if canImport(Glibc)
                import Glibc
            #endif
            @_implementationOnly import struct Yams.Node
            @_spi(Internals) public import Crypto
            import A; internal import B
            // import Commented
            let generated = \"\"\"
                import MapcExamples
                \"\"\"
            """
        #expect(Self.importedModules(text) == ["Foundation", "GRDB", "Glibc", "Yams", "Crypto", "A", "B"])
    }

    @Test func onlyTheStoreAndMigrationLayersImportGRDB() throws {
        var importers: [String] = []
        for layer in Self.layers {
            let folder = packageRoot.appendingPathComponent("Sources/\(layer)")
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                if Self.importedModules(text).contains("GRDB") { importers.append("\(layer)/\(name)") }
            }
        }
        let strays = importers.filter { importer in !Self.sqliteLayers.contains { importer.hasPrefix($0 + "/") } }
        #expect(strays.isEmpty, "\(strays)")
        #expect(!importers.isEmpty)
    }

    /// A name goes into SQL through `quotedSQLIdentifier`, which doubles the quotes in it: GRDB's
    /// `quotedDatabaseIdentifier` does not, so a store's table named `app"cache` ended the
    /// identifier early (a hostile name could add SQL of its own).
    @Test func namesGoIntoSQLThroughTheOneQuotingThatEscapes() throws {
        let users = try Self.sources().filter { $0.code.contains(".quotedDatabaseIdentifier") }.map { "\($0.layer)/\($0.name)" }
        #expect(users.isEmpty, "\(users)")
        #expect("app\"cache".quotedSQLIdentifier == "\"app\"\"cache\"")
    }

    @Test func theCommandLineLibraryImportsNeitherGRDBNorTheExamples() throws {
        let folder = packageRoot.appendingPathComponent("Sources/MapcCLI")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
            let imports = Self.importedModules(try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
            #expect(!imports.contains("GRDB"), "MapcCLI/\(name) imports GRDB")
            #expect(!imports.contains("MapcExamples"), "MapcCLI/\(name) imports the examples")
        }
    }
}
