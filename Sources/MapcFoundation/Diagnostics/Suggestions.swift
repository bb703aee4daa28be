/// "Did you mean" suggestions for misspelled names.
package enum Suggestions {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a plausible typo.
    package static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        // Names longer than this are not typos of short names; skipping them bounds the work on hostile input.
        guard word.count <= 128 else { return nil }
        let lowered = Array(word.lowercased())
        // A third of the length, at least 1 and at most 3 edits, keeps suggestions plausible.
        let allowed = min(3, max(1, word.count / 3))
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate.count <= 128 {
            // Lengths that differ by more than the allowance cannot be close enough.
            guard abs(candidate.count - lowered.count) <= allowed else { continue }
            let distance = editDistance(lowered, Array(candidate.lowercased()))
            if distance <= allowed, best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `"; did you mean 'x'?"`-style fix text, or nil when nothing is close.
    package static func didYouMean(_ word: String, in candidates: some Sequence<String>) -> String? {
        closest(to: word, in: candidates).map { "did you mean '\($0)'?" }
    }

    /// Edit distance over characters where swapping two neighbours counts as one edit
    /// (optimal string alignment), since transpositions are the commonest typo.
    static func editDistance(_ a: String, _ b: String) -> Int {
        editDistance(Array(a), Array(b))
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rolling rows: the one before last (for transpositions), the last, and the current.
        var beforeLast = [Int](repeating: 0, count: b.count + 1)
        var last = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(last[j] + 1, current[j - 1] + 1, last[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforeLast[j - 2] + 1)
                }
            }
            (beforeLast, last, current) = (last, current, beforeLast)
        }
        return last[b.count]
    }
}
