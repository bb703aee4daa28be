internal import CMapcSystem

/// Finding bytes in bytes in linear time, with the C library's `memmem`: Swift's generic searches
/// compare at every position (quadratic on long, repetitive text), and Foundation's text search
/// follows canonical equivalence, where mapc compares text by Unicode scalars.
package enum ByteSearch {
    /// Whether `part`'s UTF-8 bytes occur in `text`'s: for valid text, whether its Unicode scalars
    /// occur as a run in `text`'s. An empty part occurs.
    package static func contains(_ text: String, _ part: String) -> Bool {
        var text = text, part = part
        return text.withUTF8 { haystack in
            part.withUTF8 { needle in
                mapc_bytes_contain(haystack.baseAddress, haystack.count, needle.baseAddress, needle.count) == 1
            }
        }
    }
}
