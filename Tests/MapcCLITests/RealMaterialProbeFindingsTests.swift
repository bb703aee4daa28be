import Foundation
import Testing

/// Findings of probes and a review on material mapc had not seen (real Xcode mapping models,
/// model histories of public apps, a reread of where each rule lives).
@Suite("Keys that are reserved words of the expression language")
struct ReservedWordKeyTests {
    /// An attribute named like a keyword of the expression language (`function`, `yes`, `cast`,
    /// `matches`) lost its values in an inferred step, exit 0: the step's expression
    /// `$source.function` did not parse, the failure was dropped, and the attribute was left nil
    /// while the step was said to carry it. A key is written `#function` where a word is reserved.
    @Test func inferenceCarriesAttributesNamedLikeKeywords() throws {
        let v1 = "  Film:\n    attributes:\n      function: string?\n      yes: int32?\n      matches: string?\n      title: string?\n"
        let v2 = "  Film:\n    attributes:\n      function: string?\n      yes: int64?\n      contains: {type: string, optional: true, renamingIdentifier: matches}\n      title: string?\n      note: string?\n"
        let folder = try CLI.project(versions: [("v1", v1), ("v2", v2)])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Film": [{"id": "f", "function": "drama", "yes": 3, "matches": "m", "title": "t"}]}}"#, to: "d.json")
        try migrateInEveryFormatAndMode(folder) { layout, mode, objects in
            let film = try #require(objects["Film"]?.first)
            #expect(film["function"] as? String == "drama" && film["yes"] as? Int == 3 && film["contains"] as? String == "m" && film["title"] as? String == "t", "\(layout) \(mode): \(film)")
        }
    }
}
