import Foundation
import Testing

/// What a check of the expression language against NSExpression and NSPredicate found: values a
/// mapping ported from Xcode computed otherwise on Linux than Foundation does on a Mac, exit 0.
@Suite("Defects found by the NSExpression conformance probe")
struct ExpressionConformanceFindingsTests {
    /// A number made text had Swift's shortest digits, and a float attribute the double it widens
    /// to: NSNumber's `description` and `stringValue` (what `CAST(x, "NSString")` takes) write a
    /// double with `%0.16g` and a float, as Core Data hands a float attribute out, with `%0.7g`.
    @Test(arguments: ["mapc", "core-data"], [false, true])
    func aNumberMadeTextHasNSNumbersDigits(layout: String, interpret: Bool) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Item:\n    attributes:\n      price: double?\n      weight: float?\n"),
            ("v2", "  Item:\n    attributes:\n      price: string?\n      weight: string?\n      joined: string?\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("""
        source: v1
        destination: v2
        entityMappings:
          - name: ItemToItem
            source: Item
            destination: Item
            attributes:
              price: FUNCTION($source.price, "stringValue")
              weight: CAST($source.weight, "NSString")
              joined: FUNCTION({$source.weight, $source.price, 0.1 + 0.2}, "componentsJoinedByString:", "/")
        """, to: "mappings/v1_to_v2.yaml")
        try folder.write(#"""
        {"version": "v1", "objects": {"Item": [
          {"id": "i1", "price": 1.2100000000000002, "weight": 0.1},
          {"id": "i2", "price": 1.7976931348623157e308, "weight": 2.3},
          {"id": "i3", "price": 1234567.5, "weight": 16777216},
          {"id": "i4", "price": 1e16, "weight": 16777216.0}
        ]}}
        """#, to: "data.json")
        #expect(try CLI.run(["load", "--layout", layout, "data.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "s.db"] + (interpret ? ["--interpret"] : []), in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout
        for expected in [#""price": "1.21""#, #""weight": "0.1""#, #""joined": "0.1/1.21/0.3""#,
                         #""price": "1.797693134862316e+308""#, #""weight": "2.3""#,
                         #""price": "1234567.5""#, #""weight": "1.677722e+07""#,
                         #""price": "1e+16""#] {
            #expect(dump.contains(expected), "\(expected) in \(dump)")
        }
        // A double is a double wherever it comes from: no float's seven digits for one that a
        // float could hold exactly (1234567.5 has eight).
        let eval = try CLI.run(["eval", #"{CAST(0.1 + 0.2, "NSString"), CAST(-0.0, "NSString"), CAST(2.0, "NSString")}"#], in: folder)
        #expect(eval.stdout.contains(#"["0.3","-0","2"]"#), "\(eval.stdout)")
    }
}
