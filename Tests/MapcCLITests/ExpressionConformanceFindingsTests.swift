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

    /// A filter's `@avg` counted a nil as 0 (key-value coding's rule, in memory), where the fetch
    /// Core Data runs for a filter is SQL, whose `avg()` leaves NULL out: an order with lines
    /// of 8 and nil was left out of `lines.@avg.price > 5`, exit 0. A value expression keeps
    /// key-value coding's rule (nil is 0), as `valueForKeyPath:` computes it on an object.
    @Test(arguments: ["mapc", "core-data"])
    func aFiltersAverageLeavesNilOutAsSQLDoes(layout: String) throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Order:\n    attributes:\n      name: string\n    relationships:\n      lines: { destination: Line, toMany: true, inverse: order, optional: true }\n  Line:\n    attributes:\n      price: double?\n    relationships:\n      order: { destination: Order, inverse: lines, optional: true }\n"),
            ("v2", "  Big:\n    attributes:\n      name: string\n      mean: double?\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("""
        source: v1
        destination: v2
        entityMappings:
          - name: OrderToBig
            source: Order
            destination: Big
            filter: lines.@avg.price > 5
            attributes:
              name: $source.name
              mean: $source.lines.@avg.price
            drops: [lines]
          - name: LineDrop
            source: Line
            destination: null
            type: remove
        """, to: "mappings/v1_to_v2.yaml")
        try folder.write(#"""
        {"version": "v1", "objects": {
          "Order": [{"id": "o1", "name": "one priced, one not", "lines": ["l1", "l2"]}, {"id": "o2", "name": "priced", "lines": ["l3"]},
                    {"id": "o3", "name": "none priced", "lines": ["l4"]}, {"id": "o4", "name": "no lines"}],
          "Line": [{"id": "l1", "price": 8.0}, {"id": "l2", "price": null}, {"id": "l3", "price": 6.0}, {"id": "l4", "price": null}]}}
        """#, to: "data.json")
        #expect(try CLI.run(["load", "--layout", layout, "data.json", "s.db"], in: folder).status == 0)
        let kept = try CLI.run(["eval", "--store", "s.db", "--entity", "Order", "--where", "lines.@avg.price > 5", "name"], in: folder)
        #expect(kept.stdout.contains("one priced, one not") && kept.stdout.contains("\"priced\"") && !kept.stdout.contains("none priced"), "\(kept.stdout)\(kept.stderr)")
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout
        #expect(dump.contains("one priced, one not") && dump.contains("\"priced\"") && !dump.contains("none priced") && !dump.contains("no lines"), "\(dump)")
        // The value is key-value coding's mean, nil counted as 0: (8 + 0) / 2.
        #expect(dump.contains("\"mean\": 4"), "\(dump)")
    }

    /// A host name's pattern, `^([a-z0-9-]+\.)+[a-z]{2,}$`, was refused as exponential in
    /// `MATCHES`, in a schema's `regex`, and in an Xcode model's `regularExpressionString` (import
    /// wrote nothing): each repetition must take a `.` its repeated part cannot match, so it
    /// splits a text one way only.
    @Test func aRepeatedGroupEndingInItsDelimiterIsAccepted() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let eval = try CLI.run(["eval", "--predicate", #""www.example.com" MATCHES "^([a-zA-Z0-9-]+\\.)+[a-zA-Z]{2,}$""#], in: folder)
        #expect(eval.status == 0 && eval.stdout.contains("true"), "\(eval.stdout)\(eval.stderr)")
        let site = #"""
            <entity name="Site" syncable="YES">
                <attribute name="host" optional="YES" attributeType="String" regularExpressionString="^([a-z0-9-]+\.)+[a-z]{2,}$" syncable="YES"/>
            </entity>
        """#
        try xcodeModel([(name: "Model", entities: site)], named: "Model", in: folder)
        let imported = try CLI.run(["import", "Model.xcdatamodeld"], in: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        try folder.write(#"{"version": "Model", "objects": {"Site": [{"id": "s1", "host": "www.example.com"}]}}"#, to: "good.json")
        #expect(try CLI.run(["load", "good.json", "good.db"], in: folder).status == 0)
        try folder.write(#"{"version": "Model", "objects": {"Site": [{"id": "s1", "host": "not a host"}]}}"#, to: "bad.json")
        let bad = try CLI.run(["load", "bad.json", "bad.db"], in: folder)
        #expect(bad.status == 1 && bad.stderr.contains("host"), "\(bad.stderr)")
        // Nested repetition that can split a text many ways is still refused.
        let refused = try CLI.run(["eval", "--predicate", #""aaaa" MATCHES "(a+)+b""#], in: folder)
        #expect(refused.status == 1 && refused.stderr.contains("exponential"), "\(refused.stderr)")
    }

    /// `ceiling:($source.lines.@sum.qty / 4)` was 2 for lines of 6 and 4, and a comparison of
    /// the quotient false, `check` silent: Foundation's `@sum` is a decimal (3 and true there).
    /// mapc's sum of integers stays an integer (an index, a bool, a policy function take it), and
    /// `check` warns of it divided anywhere in a value; `1.0 *` gives Foundation's result.
    @Test func aSumOfIntegersDividedIsWarnedOf() throws {
        let folder = try CLI.project(versions: [
            ("v1", "  Order:\n    attributes:\n      name: string\n    relationships:\n      lines: { destination: Line, toMany: true, inverse: order, optional: true }\n  Line:\n    attributes:\n      qty: int64\n    relationships:\n      order: { destination: Order, inverse: lines, optional: true }\n"),
            ("v2", "  Box:\n    attributes:\n      name: string\n      packs: int64\n      twoBoxes: bool\n      exact: int64\n      total: int64\n"),
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        func mapping(packs: String, twoBoxes: String) -> String {
            """
            source: v1
            destination: v2
            entityMappings:
              - name: OrderToBox
                source: Order
                destination: Box
                attributes:
                  name: $source.name
                  packs: \(packs)
                  twoBoxes: \(twoBoxes)
                  exact: trunc:($source.lines.@sum.qty / 4)
                  total: $source.lines.@sum.qty
                drops: [lines]
              - name: LineDrop
                source: Line
                destination: null
                type: remove
            """
        }
        try folder.write(mapping(packs: "ceiling:($source.lines.@sum.qty / 4)", twoBoxes: "TERNARY($source.lines.@sum.qty / 4 > 2, YES, NO)"), to: "mappings/v1_to_v2.yaml")
        let check = try CLI.run(["check"], in: folder)
        let said = check.stdout + check.stderr
        #expect(said.components(separatedBy: "Foundation's @sum is a decimal").count - 1 == 2 && said.contains("0 errors, 2 warnings"), "\(said)")
        try folder.write(mapping(packs: "ceiling:(1.0 * $source.lines.@sum.qty / 4)", twoBoxes: "TERNARY(1.0 * $source.lines.@sum.qty / 4 > 2, YES, NO)"), to: "mappings/v1_to_v2.yaml")
        let strict = try CLI.run(["check", "--strict"], in: folder)
        #expect(strict.status == 0, "\(strict.stdout)\(strict.stderr)")
        try folder.write(#"{"version": "v1", "objects": {"Order": [{"id": "o1", "name": "ten", "lines": ["l1", "l2"]}], "Line": [{"id": "l1", "qty": 6}, {"id": "l2", "qty": 4}]}}"#, to: "data.json")
        #expect(try CLI.run(["load", "data.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "s.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder).stdout
        for expected in [#""packs": 3"#, #""twoBoxes": true"#, #""exact": 2"#, #""total": 10"#] {
            #expect(dump.contains(expected), "\(expected) in \(dump)")
        }
    }
}
