/// "Did you mean" suggestions for misspelled names.
public enum Suggestions {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a plausible typo.
    public static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        // Names longer than this are not typos of short names; skipping them bounds the work on hostile input.
        guard word.count <= 128 else { return nil }
        let lowered = word.lowercased()
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate.count <= 128 {
            let distance = editDistance(lowered, candidate.lowercased())
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        guard let best else { return nil }
        // A third of the length, at least 1 and at most 3 edits, keeps suggestions plausible.
        let allowed = min(3, max(1, word.count / 3))
        return best.distance <= allowed ? best.name : nil
    }

    /// `"; did you mean 'x'?"`-style fix text, or nil when nothing is close.
    public static func didYouMean(_ word: String, in candidates: some Sequence<String>) -> String? {
        closest(to: word, in: candidates).map { "did you mean '\($0)'?" }
    }

    /// Edit distance over characters where swapping two neighbours counts as one edit
    /// (optimal string alignment), since transpositions are the commonest typo.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
