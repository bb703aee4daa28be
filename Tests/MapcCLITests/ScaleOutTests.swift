import Foundation
import Testing

/// Many stores shared among jobs: a list of stores, a deterministic shard of it, and one JSON
/// object per store that the shards' outputs concatenate into (docs/scale-out.md).
@Suite("Stores from a list, in shards", .serialized)
struct ScaleOutTests {
    /// A project with `count` v1 stores in `stores/` and a list naming them.
    private func fleet(_ count: Int) throws -> (folder: URL, names: [String]) {
        let folder = try CLI.project()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("stores"), withIntermediateDirectories: true)
        var names: [String] = []
        for index in 0..<count {
            let name = "stores/user\(index).db"
            #expect(try CLI.run(["init", "--schema", "v1", name], in: folder).status == 0)
            names.append(name)
        }
        try folder.write(names.joined(separator: "\n") + "\n", to: "stores.txt")
        return (folder, names)
    }

    private func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test func shardsCoverEveryStoreOnceWhateverTheOrder() throws {
        let (folder, names) = try fleet(12)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Shuffled, and written another way: ./stores/…, stores/./…
        try folder.write("# the fleet, shuffled\n" + names.reversed().enumerated().map { $0.offset % 2 == 0 ? "./" + $0.element : $0.element.replacingOccurrences(of: "stores/", with: "stores/./") }.joined(separator: "\n") + "\n\n", to: "shuffled.txt")
        var seen: [String: Int] = [:]
        for shard in 1...3 {
            let plan = try CLI.run(["plan", "--stores-from", "stores.txt", "--shard", "\(shard)/3", "--to", "v2", "--format", "jsonl"], in: folder)
            #expect(plan.status == 0, "\(plan.stderr)")
            let stores = try objects(plan.stdout).compactMap { $0["store"] as? String }
            for store in stores { seen[store, default: 0] += 1 }
            let again = try CLI.run(["plan", "--stores-from", "shuffled.txt", "--shard", "\(shard)/3", "--to", "v2", "--format", "jsonl"], in: folder)
            let normalized = try objects(again.stdout).compactMap { $0["store"] as? String }.map { $0.replacingOccurrences(of: "./", with: "") }
            #expect(normalized.sorted() == stores.sorted(), "the same shard from a list in another order, its paths written another way")
        }
        #expect(seen.keys.sorted() == names.sorted() && seen.values.allSatisfy { $0 == 1 }, "\(seen)")
        let wrong = try CLI.run(["plan", "--stores-from", "stores.txt", "--shard", "4/3"], in: folder)
        #expect(wrong.status == 64, "\(wrong.stderr)")
    }

    @Test func aShardRunsItsStoresAndARetrySkipsThoseDone() throws {
        let (folder, names) = try fleet(8)
        defer { try? FileManager.default.removeItem(at: folder) }
        var report: [[String: Any]] = []
        for shard in 1...2 {
            // The list from standard input, as a job runner pipes it.
            let run = try CLI.run(["-c", "'\(CLI.executable.path)' run --stores-from - --shard \(shard)/2 --to v2 --format jsonl < stores.txt"], in: folder,
                                  program: URL(fileURLWithPath: "/bin/bash"))
            #expect(run.status == 0, "\(run.stderr)")
            report += try objects(run.stdout)
        }
        #expect(report.count == names.count && report.allSatisfy { $0["result"] as? String == "migrated" }, "\(report)")
        let retry = try CLI.run(["run", "--stores-from", "stores.txt", "--shard", "1/2", "--to", "v2", "--format", "jsonl"], in: folder)
        let retried = try objects(retry.stdout)
        #expect(retry.status == 0 && !retried.isEmpty && retried.allSatisfy { $0["result"] as? String == "current" }, "\(retry.stdout)")
        // Status of a shard, one object per store.
        let status = try CLI.run(["status", "--stores-from", "stores.txt", "--format", "jsonl"], in: folder)
        let statuses = try objects(status.stdout)
        #expect(statuses.compactMap { $0["version"] as? String } == Array(repeating: "v2", count: names.count), "\(status.stdout)")
    }

    /// docs/scale-out.md's GNU parallel recipe, run for real where `parallel` is installed.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/parallel"), "GNU parallel is not installed"))
    func theGNUParallelRecipeRuns() throws {
        let (folder, names) = try fleet(6)
        defer { try? FileManager.default.removeItem(at: folder) }
        let recipe = "parallel --will-cite '\(CLI.executable.path)' run --stores-from stores.txt --shard {}/3 --to v2 --format jsonl ::: 1 2 3 > report.jsonl"
        let run = try CLI.run(["-c", recipe], in: folder, program: URL(fileURLWithPath: "/bin/bash"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try objects(try folder.read("report.jsonl")).count == names.count)
    }
}
