import ArgumentParser
import Foundation
import MapcKit

/// Where `run`, `plan` and `status` take their stores from besides the paths named: a list file
/// (`--stores-from FILE`, or `-` for standard input) and one shard of them all (`--shard K/N`),
/// so that job runners can share a fleet of stores among machines (docs/scale-out.md).
struct StoreSources: ParsableArguments {
    @Option(name: .customLong("stores-from"), help: ArgumentHelp("A file listing stores (or folders of them), one path per line; '-' reads standard input.", valueName: "file"))
    var listFile: String?

    @Option(help: ArgumentHelp("Work on shard K of N of the stores only (1 ≤ K ≤ N): each store is in exactly one shard, chosen from its path, whatever the order of the list.", valueName: "K/N"))
    var shard: Shard?

    /// Whether the stores come from a list or a shard: each store is then reported on its own.
    var isFleet: Bool { listFile != nil || shard != nil }

    /// The stores named, those of the list file, folders expanded (`StoreList.expand`), then
    /// the shard's.
    func select(_ named: [String]) throws -> StoreList.Selection {
        var paths = named
        if let listFile {
            paths += try Self.read(listFile)
            // A list that came out empty (a glob or a query that matched nothing) is no success.
            if paths.isEmpty {
                throw MapcError.file("\(listFile == "-" ? "standard input" : listFile) names no stores (blank lines and lines starting with # are skipped); give a list of store paths, one per line")
            }
        }
        var selection = try StoreList.expand(paths)
        if let shard {
            selection.stores = selection.stores.filter { shard.contains($0) }
            // Each file passed over is reported by one shard too, so the reports add up.
            selection.passedOver = selection.passedOver.filter { shard.contains($0.path) }
        }
        return selection
    }

    /// The paths a list holds: one per line, blank lines and lines starting with `#` skipped.
    static func read(_ file: String) throws -> [String] {
        let data: Data
        if file == "-" {
            do { data = try FileHandle.standardInput.readToEnd() ?? Data() } catch {
                throw MapcError.file("cannot read the list of stores from standard input (\(String(cString: strerror(errno)))): give the list on standard input, or in a file")
            }
        } else {
            // A list that cannot be read is a file problem (2), as standard input's is, not invalid input.
            do { data = try Files.read(file, what: "the list of stores") } catch MapcError.input(let message) { throw MapcError.file(message) }
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw MapcError.input("\(file == "-" ? "standard input" : file) is not UTF-8 text: give one store path per line")
        }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

/// `K/N`: the K-th of N shards, from 1.
struct Shard: ExpressibleByArgument, Sendable {
    var index: Int
    var count: Int

    init?(argument: String) {
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// The shard of a store: from a digest of its path as the list names it (`./a.db` and
    /// `a.db` alike), so that every machine given the same list agrees whatever its order.
    static func number(of path: String, among count: Int) -> Int {
        let digest = VersionHash.sha256(Files.lexicallyStandardized(path))
        let value = UInt64(digest.prefix(16), radix: 16) ?? 0
        return Int(value % UInt64(count)) + 1
    }

    /// Whether a store is in this shard.
    func contains(_ path: String) -> Bool { Self.number(of: path, among: count) == index }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// `--format text|json|jsonl` of the commands that work on stores: JSON Lines is one object per
/// store, printed as each store is done, so that shards' outputs concatenate into one report.
enum StoreOutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, jsonl
}

/// Prints JSON Lines from several threads, one whole line at a time.
final class JSONLines: Sendable {
    private let lock = NSLock()

    /// Writes one object as one line.
    func write(_ value: JSONValue) {
        let line = value.serialized(pretty: false)
        lock.withLock { Console.out(line) }
    }
}
