import Foundation
import Testing

/// What the values probe of the type changes found (every value through every path).
@Suite("Defects found by the values probe of type changes")
struct ValueProbeFindingsTests {
    private static let versions = [
        ("v1", "  Rec:\n    attributes:\n      d: double?\n      g: float?\n"),
        ("v2", "  Rec:\n    attributes:\n      d: decimal?\n      g: { type: float, default: 0.1 }\n      f: { type: float, default: 0.1 }\n"),
    ]

    /// `double -> decimal` was said to keep every value's digits by `diff`, `infer` and `plan`,
    /// and the run then failed on a double beyond a decimal's range (1e-130, 1e308).
    @Test func aDoubleBeyondADecimalsRangeIsSaidToFail() throws {
        let folder = try CLI.project(versions: Self.versions)
        defer { try? FileManager.default.removeItem(at: folder) }
        let caution = "one of 1e165 or more in size, or with digits below 1e-128 (1e-130, 2.5e-128), fails the migration"
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("values keep the digits of their shortest decimal form; \(caution)"), "\(diff.stdout)")
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "a", "d": 0.1, "g": 1.5}, {"id": "b", "d": 1e-130}]}}"#, to: "data.json")
        #expect(try CLI.run(["load", "data.json", "s.db"], in: folder).status == 0)
        let plan = try CLI.run(["plan", "s.db"], in: folder)
        #expect(plan.stdout.contains(caution), "\(plan.stdout)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("1e-130 is out of the range decimals hold"), "\(run.stderr)")
        // 1e128 is a decimal (10 times 10^127; it was refused where 1.5e128 was taken), and so
        // is 9.99e164; 1e165 is not (the review).
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "a", "d": 1e128}, {"id": "b", "d": 1.5e128}, {"id": "c", "d": 9.99e164}]}}"#, to: "big.json")
        #expect(try CLI.run(["load", "big.json", "big.db"], in: folder).status == 0)
        let big = try CLI.run(["run", "big.db"], in: folder)
        #expect(big.status == 0, "\(big.stderr)")
        let dump = try CLI.run(["dump", "big.db"], in: folder).stdout
        #expect(dump.contains("\"1e128\"") || dump.contains("10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"), "\(dump)")
        try folder.write(#"{"version": "v1", "objects": {"Rec": [{"id": "a", "d": 1e165}]}}"#, to: "huge.json")
        #expect(try CLI.run(["load", "huge.json", "huge.db"], in: folder).status == 0)
        #expect(try CLI.run(["run", "huge.db"], in: folder).stderr.contains("1e+165 is out of the range decimals hold"))
    }

    /// A float's default was shown as the double it is stored as (`default 0.10000000149011612`)
    /// by `diff`, `infer` and `plan`, where `dump` and the schema say 0.1.
    @Test func aFloatsDefaultIsShownInItsShortestForm() throws {
        let folder = try CLI.project(versions: Self.versions)
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("Rec.f: float, default 0.1\n") && diff.stdout.contains("nil becomes 0.1") && !diff.stdout.contains("0.10000000149011612"), "\(diff.stdout)")
        let infer = try CLI.run(["infer", "--from", "v1", "--to", "v2"], in: folder)
        // The words say the float; the expression written keeps the double it is stored as, exactly.
        #expect(infer.stdout.contains("# f: new attribute, gets its default 0.1\n") && infer.stdout.contains("nil becomes 0.1\n"), "\(infer.stdout)")
    }

    /// The rules' words showed a float's default and bounds as their doubles too (`default
    /// 0.10000000149011612 … above max 0.05000000074505806`; the review).
    @Test func aFloatsDefaultAndBoundsAreShownInTheirShortestForm() throws {
        let folder = try CLI.project(versions: [("v1", "  Rec:\n    attributes:\n      g: { type: float, default: 0.1, max: 0.05 }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        #expect(check.stderr.contains("default 0.1 of 'Rec.g' breaks its own validation: above max 0.05;"), "\(check.stderr)")
    }
}
