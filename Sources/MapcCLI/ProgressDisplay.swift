import Foundation
import MapcKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shows migration progress on standard error: a bar redrawn in place on a terminal, plain
/// lines (at each mapping and every two seconds) otherwise, so logs stay readable.
final class ProgressDisplay {
    private let isTerminal = Console.redrawsLines
    private var lastLine = Date.distantPast
    private var lastKey = ""
    /// The last plain line written, so a mapping with nothing to do is not shown twice.
    private var lastText = ""
    private var mappingStart = Date()
    private let quiet: Bool

    init(quiet: Bool) {
        self.quiet = quiet
    }

    func update(_ progress: MigrationProgress, step: String? = nil) {
        guard !quiet, !progress.isStepStart else { return }
        let key = "\(step ?? "")/\(progress.phase.rawValue)/\(progress.mapping ?? "")"
        if key != lastKey {
            if isTerminal && !lastKey.isEmpty { Console.errText("\n") }
            lastKey = key
            mappingStart = Date()
        }
        let elapsed = Date().timeIntervalSince(mappingStart)
        let rate = elapsed > 0.05 ? Double(progress.completed) / elapsed : 0
        var text = (step.map { "[\($0)] " } ?? "") + "[\(progress.phase.rawValue)] \(progress.mapping ?? (progress.isFinished ? "the migrated store is valid" : "checking every object against the destination schema"))"
        if progress.phase == .validate, let total = progress.total, total > 0 {
            // Counted in entities (a scan each), not objects: no rate.
            text += " (\(progress.completed)/\(English.count(total, "entity", "entities")))"
        } else if let total = progress.total, total > 0 {
            let fraction = min(1, Double(progress.completed) / Double(total))
            if isTerminal {
                let width = 24
                let filled = Int(fraction * Double(width))
                text += " " + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            }
            text += String(format: " %3.0f%% %d/%d", fraction * 100, progress.completed, total)
            if rate > 0 && progress.completed < total {
                text += String(format: " %.0f/s ETA %.0fs", rate, Double(total - progress.completed) / rate)
            } else if rate > 0 {
                text += String(format: " %.0f/s", rate)
            }
        } else if progress.phase != .validate {
            text += " \(progress.completed) objects"
        }
        if isTerminal {
            Console.errText(text, redrawing: true)
        } else {
            let now = Date()
            guard progress.completed == 0 || progress.isFinished || now.timeIntervalSince(lastLine) >= 2, text != lastText else { return }
            lastLine = now
            lastText = text
            Console.errText(text + "\n")
        }
    }

    func finish() {
        if isTerminal && !quiet && !lastKey.isEmpty { Console.errText("\n") }
    }
}
