// Yams' libyaml module, not a product of Yams: the one place mapc reads YAML below Yams' API.
// Yams offers no event API, and its composer is what must be protected: it shares an aliased
// node rather than copying it, but hashes every mapping's keys whole, so an alias of nested
// aliases used as a key is walked in full (eight levels of ten, 400 bytes of text, took Yams 64 s
// to compose). So the screen reads libyaml's events before Yams composes anything. (Nesting alone
// is bounded by libyaml, at 1,000 levels; the screen's limit is lower.) The system's libyaml
// (libyaml-dev) was tried and dropped: Yams compiles its own libyaml into the binary under the
// same names, so the calls still reach Yams' copy, which is newer than Debian's 0.2.5 header
// (it has `yaml_set_max_nest_level`): a header describing another version's structures would
// fail silently, at run time, where this import fails loudly, at build time, if Yams changes it.
internal import CYaml
import Foundation

/// Screens YAML text before it is composed: aliases make a small text stand for a huge tree
/// (a "billion laughs" bomb), and a composed tree is walked and hashed in full. One pass over
/// libyaml's events measures the tree as aliases expand it, without expanding anything.
enum YAMLGuard {
    /// The most nodes a mapc file may expand to (a 10,000-entity schema is about 300,000).
    static let maxExpandedNodes = 2_000_000
    /// The deepest nesting of collections accepted.
    static let maxDepth = 200

    /// Why the text is refused, or nil. Syntax errors are left to the composer, which reports them with positions.
    static func problem(with text: String) -> String? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> String? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var anchorSizes: [String: Int] = [:]
            // Open collections: their anchor (if any) and the expanded size so far.
            var open: [(anchor: String?, size: Int)] = []
            var total = 0
            /// Counts `size` nodes into the total and into the innermost open collection.
            func add(_ size: Int, toTotal: Bool = true) -> String? {
                if toTotal { total += size }
                if !open.isEmpty { open[open.count - 1].size += size }
                return total > maxExpandedNodes ? "the YAML expands to more than \(maxExpandedNodes) nodes (through anchors and aliases); write the values out" : nil
            }
            func anchorName(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
                pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
            }
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return nil
                case YAML_SCALAR_EVENT:
                    if let anchor = anchorName(event.data.scalar.anchor) { anchorSizes[anchor] = 1 }
                    if let refused = add(1) { return refused }
                case YAML_ALIAS_EVENT:
                    let size = anchorName(event.data.alias.anchor).flatMap { anchorSizes[$0] } ?? 1
                    if let refused = add(size) { return refused }
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    let anchor = event.type == YAML_SEQUENCE_START_EVENT ? anchorName(event.data.sequence_start.anchor) : anchorName(event.data.mapping_start.anchor)
                    open.append((anchor, 0))
                    if open.count > maxDepth { return "the YAML nests more than \(maxDepth) levels deep" }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    guard let closed = open.popLast() else { continue }
                    if let anchor = closed.anchor { anchorSizes[anchor] = closed.size + 1 }
                    // Its contents are in the total already; the collection itself counts once more.
                    total += 1
                    if let refused = add(closed.size + 1, toTotal: false) { return refused }
                default:
                    continue
                }
            }
        }
    }
}
