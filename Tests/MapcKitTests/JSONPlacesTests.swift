import Foundation
import Testing
@testable import MapcFoundation

/// Where a data file's values are, as errors name them (line and column, in characters).
@Suite("Places of a data file's values")
struct JSONPlacesTests {
    /// A data file written on one line (`json.dump` without an indent) took 34 s to say one
    /// error of 1,000 objects: each value's column was counted from the line's start. Counted
    /// once over the line now, the columns the same, multibyte text included.
    @Test func columnsOnOneLongLineAreCountedOnce() throws {
        let objects = (0..<20_000).map { #"{"id": "i\#($0)", "title": "ü\#(String(repeating: "é", count: 40))"}"# }
        let text = #"{"version": "v1", "objects": {"Note": ["# + objects.joined(separator: ", ") + "]}}"
        let started = Date()
        let placed = try #require(JSONValue.placedValues(Data(text.utf8), path: "d.json"))
        #expect(Date().timeIntervalSince(started) < 20, "linear in the line's length")
        for index in [0, 1, 9_999, 19_999] {
            let marker = #"{"id": "i\#(index)""#
            let at = try #require(text.range(of: marker))
            let column = text[..<at.lowerBound].count + 1
            #expect(placed.places[["objects", "Note", "\(index)"]]?.line == 1)
            #expect(placed.places[["objects", "Note", "\(index)"]]?.column == column, "object \(index)")
            let title = try #require(text.range(of: #""title": ""#, range: at.upperBound..<text.endIndex))
            #expect(placed.places[["objects", "Note", "\(index)", "title"]]?.column == text[..<title.upperBound].count, "its title")
        }
    }
}
