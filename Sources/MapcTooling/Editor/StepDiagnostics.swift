import Foundation
import MapcFoundation
import MapcModel
import MapcMigration

/// What `check` says of the steps of a history, at the destination version's `version:` line:
/// a step with no mapping file that cannot be inferred (an error, with the reasons, its notes
/// and the file to write), and an inferred step that drops values or whose renaming identifiers
/// may not mean what they say (warnings). One definition for `mapc check` of a project and the
/// editor's schema files.
package enum StepDiagnostics {
    package static func of(_ gaps: [MigrationPlanner.ChainGap], catalog loaded: SchemaCatalog, mappings: MappingCatalog) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for gap in gaps {
            let at = loaded.schema(version: gap.to)?.versionLocation
            let file = MappingCatalog.suggestedFile(from: gap.from, to: gap.to, in: mappings.directory)
            let start = "`mapc infer \(English.option("--from", gap.from)) \(English.option("--to", gap.to)) \(English.option("--output", file))` writes a start"
            if let problem = gap.problem {
                diagnostics.append(.error("the step \(gap.from) -> \(gap.to) has no mapping file and cannot be inferred: \(problem.reasons.joined(separator: "; "))"
                                            + problem.notes.map { "; note: \($0)" }.joined(),
                                          at: at, fix: "write \(file) (\(start), with what is left to do), or add an intermediate version"))
            } else if !gap.nilsRefused.isEmpty {
                let attributes = gap.nilsRefused.map { "\($0.entity)\($0.property.map { ".\($0)" } ?? "")" }
                diagnostics.append(.warning("the step \(gap.from) -> \(gap.to) is inferred only for a store holding no nil of \(attributes.joined(separator: ", ")) (made required without a default): "
                                            + "run takes a store holding none and refuses one holding a nil, naming its objects" + gap.hints.map { "; note: \($0)" }.joined(),
                                            at: at, fix: "give \(attributes.count == 1 ? "it" : "them") a default in \(gap.to), or write \(file) to say what nil becomes (\(start))"))
            } else if gap.droppedValues.isEmpty {
                // Inferred whole, with something its renaming identifiers may not mean.
                for hint in gap.hints {
                    diagnostics.append(.warning("the step \(gap.from) -> \(gap.to) is inferred: \(hint)", at: at))
                }
            } else {
                diagnostics.append(.warning("the step \(gap.from) -> \(gap.to) is inferred and drops the values of \(gap.droppedValues.joined(separator: ", ")): run refuses it for a store holding any of them unless given --accept-data-loss"
                                                + gap.hints.map { "; note: \($0)" }.joined(),
                                            at: at, fix: "write \(file) to carry them over (\(start)), or run with --accept-data-loss if they are meant to go"))
            }
        }
        return diagnostics
    }
}
