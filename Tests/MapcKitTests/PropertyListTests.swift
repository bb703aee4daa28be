import Foundation
import GRDB
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Binary property lists written object by object, so that tests can refer to one object many
/// times (as a hostile file does) or in a loop.
struct BinaryPropertyList {
    enum Object {
        case integer(Int)
        case string(String)
        case data(Data)
        /// References to other objects, by their index.
        case array([Int])
        /// Keys and values, each a reference.
        case dictionary([(Int, Int)])
        /// A keyed archive's reference to its object number.
        case uid(Int)
    }

    var objects: [Object] = []
    var top = 0

    /// Adds an object and returns its reference.
    mutating func add(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    /// The bytes of `bplist00`, with 4-byte references and offsets.
    var bytes: Data {
        var data = Data("bplist00".utf8)
        var offsets: [Int] = []
        func count(_ marker: UInt8, _ n: Int) {
            if n < 15 { data.append(marker | UInt8(n)) } else { data.append(marker | 0x0F); data.append(0x13); data.append(contentsOf: withUnsafeBytes(of: UInt64(n).bigEndian, Array.init)) }
        }
        func reference(_ r: Int) { data.append(contentsOf: withUnsafeBytes(of: UInt32(r).bigEndian, Array.init)) }
        for object in objects {
            offsets.append(data.count)
            switch object {
            case .integer(let n): data.append(0x13); data.append(contentsOf: withUnsafeBytes(of: UInt64(n).bigEndian, Array.init))
            case .string(let text): count(0x50, text.utf8.count); data.append(contentsOf: text.utf8)
            case .data(let bytes): count(0x40, bytes.count); data.append(bytes)
            case .array(let items): count(0xA0, items.count); items.forEach(reference)
            case .dictionary(let pairs): count(0xD0, pairs.count); pairs.forEach { reference($0.0) }; pairs.forEach { reference($0.1) }
            case .uid(let n): data.append(0x83); reference(n)
            }
        }
        let table = data.count
        for offset in offsets { data.append(contentsOf: withUnsafeBytes(of: UInt32(offset).bigEndian, Array.init)) }
        data.append(contentsOf: [0, 0, 0, 0, 0, 0, 4, 4])
        for value in [objects.count, top, table] { data.append(contentsOf: withUnsafeBytes(of: UInt64(value).bigEndian, Array.init)) }
        return data
    }

    /// A dictionary from string keys to objects.
    mutating func dictionary(_ pairs: [(String, Int)]) -> Int {
        let entries = pairs.map { (add(.string($0.0)), $0.1) }
        return add(.dictionary(entries))
    }

    /// An `NSKeyedArchiver` archive being written: its objects, added one by one, and the
    /// expression classes they name.
    struct KeyedArchiveWriter {
        var list = BinaryPropertyList()
        var archived: [Int] = []
        init() { archived = [list.add(.string("$null"))] }

        /// Adds an object to the archive's objects; its reference.
        mutating func archive(_ object: Int) -> Int { archived.append(object); return archived.count - 1 }

        /// Adds the description of an expression class; its reference.
        mutating func className(_ name: String) -> Int {
            let chain = list.add(.array([list.add(.string(name)), list.add(.string("NSExpression")), list.add(.string("NSObject"))]))
            let description = list.dictionary([("$classname", list.add(.string(name))), ("$classes", chain)])
            return archive(description)
        }

        /// The archive's bytes, with `root` as its root object.
        mutating func finish(root: Int) -> Data {
            let objects = list.add(.array(archived))
            let top = list.dictionary([("root", list.add(.uid(root)))])
            list.top = list.dictionary([("$archiver", list.add(.string("NSKeyedArchiver"))), ("$version", list.add(.integer(100000))), ("$top", top), ("$objects", objects)])
            return list.bytes
        }
    }

    /// An `NSKeyedArchiver` archive of a function expression whose `width` arguments are all the
    /// same expression, `levels` deep, over a constant: small, and an expression of width^levels.
    static func sharedExpressionArchive(levels: Int, width: Int) -> Data {
        var writer = KeyedArchiveWriter()
        let constantClass = writer.className("NSConstantValueExpression"), functionClass = writer.className("NSFunctionExpression"), arrayClass = writer.className("NSArray")
        var expression = writer.archive(writer.list.dictionary([("NSExpressionType", writer.list.add(.integer(0))), ("NSConstantValue", writer.list.add(.integer(7))), ("$class", writer.list.add(.uid(constantClass)))]))
        let selector = writer.archive(writer.list.add(.string("sum:")))
        for _ in 0..<levels {
            let same = writer.list.add(.uid(expression))
            let arguments = writer.archive(writer.list.dictionary([("NS.objects", writer.list.add(.array(Array(repeating: same, count: width)))), ("$class", writer.list.add(.uid(arrayClass)))]))
            expression = writer.archive(writer.list.dictionary([("NSExpressionType", writer.list.add(.integer(4))), ("NSSelectorName", writer.list.add(.uid(selector))),
                                                                ("NSArguments", writer.list.add(.uid(arguments))), ("$class", writer.list.add(.uid(functionClass)))]))
        }
        return writer.finish(root: expression)
    }

    /// What a function expression's operand is in an archive: a constant value (a receiver, as in
    /// `FUNCTION("a", "stringByAppendingString:", …)`), or, for a built-in function, the class
    /// that implements it, which `NSConstantValueExpression` archives by name.
    enum Operand { case value(String), className(String) }

    /// An `NSKeyedArchiver` archive of the function expression `selector` on `operand` with one
    /// constant string argument, as Foundation writes it (`operandReference` overrides the
    /// operand's reference, to damage the archive).
    static func functionArchive(operand: Operand, selector: String, argument: String, operandReference: Int? = nil) -> Data {
        var writer = KeyedArchiveWriter()
        let constantClass = writer.className("NSConstantValueExpression"), functionClass = writer.className("NSFunctionExpression"), arrayClass = writer.className("NSArray")
        func constant(key: String, _ text: String) -> Int {
            let value = writer.archive(writer.list.add(.string(text)))
            return writer.archive(writer.list.dictionary([("NSExpressionType", writer.list.add(.integer(0))), (key, writer.list.add(.uid(value))), ("$class", writer.list.add(.uid(constantClass)))]))
        }
        let operandObject: Int
        switch operand {
        case .value(let text): operandObject = constant(key: "NSConstantValue", text)
        case .className(let name): operandObject = constant(key: "NSConstantValueClassName", name)
        }
        let argumentObject = constant(key: "NSConstantValue", argument)
        let arguments = writer.archive(writer.list.dictionary([("NS.objects", writer.list.add(.array([writer.list.add(.uid(argumentObject))]))), ("$class", writer.list.add(.uid(arrayClass)))]))
        let selectorObject = writer.archive(writer.list.add(.string(selector)))
        let expression = writer.archive(writer.list.dictionary([("NSExpressionType", writer.list.add(.integer(4))), ("NSSelectorName", writer.list.add(.uid(selectorObject))),
                                                                ("NSOperand", writer.list.add(.uid(operandReference ?? operandObject))), ("NSArguments", writer.list.add(.uid(arguments))),
                                                                ("$class", writer.list.add(.uid(functionClass)))]))
        return writer.finish(root: expression)
    }

    /// Arrays `levels` deep, each holding `width` references to the next: 12 KB for 12 × 1000
    /// that stand for 1000^12 objects.
    static func sharedReferences(levels: Int, width: Int, into list: inout BinaryPropertyList) -> Int {
        var next = list.add(.integer(1))
        for _ in 0..<levels { next = list.add(.array(Array(repeating: next, count: width))) }
        return next
    }
}

@Suite("Property lists from hostile files")
struct PropertyListTests {
    @Test func sharedReferencesThatExpandWithoutLimitAreRefusedAtOnce() throws {
        var list = BinaryPropertyList()
        list.top = BinaryPropertyList.sharedReferences(levels: 12, width: 1000, into: &list)
        let started = Date()
        #expect(throws: PropertyList.Problem.self) { try PropertyList.decode(list.bytes) }
        #expect(PropertyList.binaryProblem(list.bytes)?.contains("expands to more than") == true)
        #expect(Date().timeIntervalSince(started) < 5)
        // A loop of references, and a list deeper than the limit.
        var loop = BinaryPropertyList()
        loop.top = loop.add(.array([1]))
        _ = loop.add(.array([0]))
        #expect(PropertyList.binaryProblem(loop.bytes)?.contains("loop") == true)
        var deep = BinaryPropertyList()
        deep.top = BinaryPropertyList.sharedReferences(levels: PropertyList.maxDepth + 5, width: 1, into: &deep)
        #expect(PropertyList.binaryProblem(deep.bytes)?.contains("levels deep") == true)
    }

    @Test func whatFoundationReadsIsReadTheSame() throws {
        var list = BinaryPropertyList()
        let shared = BinaryPropertyList.sharedReferences(levels: 3, width: 10, into: &list)
        let key = list.add(.string("items"))
        list.top = list.add(.dictionary([(key, shared)]))
        #expect(PropertyList.binaryProblem(list.bytes) == nil)
        let decoded = try #require(try PropertyList.decode(list.bytes) as? [String: Any])
        #expect((decoded["items"] as? [Any])?.count == 10)
        let xml = try PropertyListSerialization.data(fromPropertyList: ["a": [1, 2]], format: .xml, options: 0)
        #expect((try PropertyList.decode(xml) as? [String: Any])?["a"] as? [Int] == [1, 2])
    }

    /// The metadata of a Core Data store with an extra key whose value is a reference bomb: every
    /// command that reads the store stops with an error naming the metadata.
    @Test func aCoreDataStoreWhoseMetadataExpandsWithoutLimitIsRefused() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("bomb.sqlite").path
        let schema = try uncloudNotes("v2")
        _ = try Store.create(at: path, schema: schema, format: .coreData)
        var list = BinaryPropertyList()
        var pairs: [(Int, Int)] = []
        var hashes: [(Int, Int)] = []
        for (name, hash) in CoreDataVersionHash.entityHashes(of: schema) {
            hashes.append((list.add(.string(name)), list.add(.data(Data(base64Encoded: hash) ?? Data()))))
        }
        pairs.append((list.add(.string("NSStoreModelVersionHashes")), list.add(.dictionary(hashes))))
        pairs.append((list.add(.string("AppExtra")), BinaryPropertyList.sharedReferences(levels: 12, width: 1000, into: &list)))
        list.top = list.add(.dictionary(pairs))
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [list.bytes]) }
        let started = Date()
        let error = #expect(throws: MapcError.self) { try Store.metadata(at: path) }
        #expect(error?.description.contains("expands to more than") == true, "\(String(describing: error))")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// Metadata holds tens of objects: one whose shared references stand for more than 100,000
    /// (a pair of references per level, 16 levels: 2^17 objects in a few hundred bytes) is
    /// refused, where writing it back expanded took seconds and megabytes (18 levels: a run of
    /// 144 s and 290 MB); 15 levels are read.
    @Test func metadataIsHeldToAHundredThousandObjects() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = try uncloudNotes("v2")
        for (levels, refused) in [(15, false), (16, true)] {
            let path = folder.appendingPathComponent("dag\(levels).sqlite").path
            _ = try Store.create(at: path, schema: schema, format: .coreData)
            var list = BinaryPropertyList()
            var hashes: [(Int, Int)] = []
            for (name, hash) in CoreDataVersionHash.entityHashes(of: schema) {
                hashes.append((list.add(.string(name)), list.add(.data(Data(base64Encoded: hash) ?? Data()))))
            }
            let pairs = [(list.add(.string("NSStoreModelVersionHashes")), list.add(.dictionary(hashes))),
                         (list.add(.string("AppExtra")), BinaryPropertyList.sharedReferences(levels: levels, width: 2, into: &list))]
            list.top = list.add(.dictionary(pairs))
            try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [list.bytes]) }
            if refused {
                let error = #expect(throws: MapcError.self) { try Store.metadata(at: path) }
                #expect(error?.description.contains("cannot be read") == true && error?.description.contains("damaged") == false, "\(String(describing: error))")
                #expect(error?.description.contains("expands to more than 100000 objects") == true, "\(String(describing: error))")
            } else {
                // Described for `status` as far as is shown: 2,000 characters, not the 2^16 leaves.
                let described = try Store.metadata(at: path).metadata.properties["AppExtra"] ?? ""
                #expect(described.hasPrefix("[[[") && described.hasSuffix("…") && described.count == 2_001, "\(described.count)")
            }
        }
        // A large value shares nothing: 150,000 numbers of an app's key are read.
        let path = folder.appendingPathComponent("large.sqlite").path
        _ = try Store.create(at: path, schema: schema, format: .coreData)
        var list = BinaryPropertyList()
        var hashes: [(Int, Int)] = []
        for (name, hash) in CoreDataVersionHash.entityHashes(of: schema) {
            hashes.append((list.add(.string(name)), list.add(.data(Data(base64Encoded: hash) ?? Data()))))
        }
        let numbers = (0..<150_000).map { list.add(.integer($0)) }
        let pairs = [(list.add(.string("NSStoreModelVersionHashes")), list.add(.dictionary(hashes))), (list.add(.string("AppTokens")), list.add(.array(numbers)))]
        list.top = list.add(.dictionary(pairs))
        try DatabaseQueue(path: path).write { try $0.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [list.bytes]) }
        #expect(try Store.metadata(at: path).metadata.properties["AppTokens"]?.hasPrefix("[0, 1, 2") == true)
    }

    @Test func anXcodeCurrentVersionFileThatExpandsWithoutLimitIsAnErrorNamingIt() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("M.xcdatamodeld")
        try FileManager.default.createDirectory(at: model.appendingPathComponent("M.xcdatamodel"), withIntermediateDirectories: true)
        try #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><model type="com.apple.IDECoreDataModeler.DataModel"><entity name="A" representedClassName="A"><attribute name="x" optional="YES" attributeType="String"/></entity></model>"#
            .write(to: model.appendingPathComponent("M.xcdatamodel/contents"), atomically: true, encoding: .utf8)
        var list = BinaryPropertyList()
        list.top = BinaryPropertyList.sharedReferences(levels: 12, width: 1000, into: &list)
        try list.bytes.write(to: model.appendingPathComponent(".xccurrentversion"))
        let error = #expect(throws: MapcError.self) { try XcodeModelImporter.importModel(at: model.path) }
        #expect(error?.description.contains(".xccurrentversion") == true && error?.description.contains("expands to more than") == true, "\(String(describing: error))")
    }

    /// mapc's writer and reader agree with Foundation's on every kind of value Core Data's
    /// metadata holds, large data included.
    @Test func binaryListsMapcWritesFoundationReadsAndTheOtherWayRound() throws {
        let large = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let value: [String: Any] = [
            "NSStoreModelVersionHashes": ["Note": Data([1, 2, 3]), "Ünïcödé 🍣": Data()],
            "NSStoreModelVersionIdentifiers": [""], "NSStoreModelVersionHashesVersion": 3, "NSPersistenceFrameworkVersion": 1048,
            "negative": -5, "big": Int64.max, "ratio": 0.1, "flag": true, "off": false, "when": Date(timeIntervalSinceReferenceDate: 1.5),
            "text": "plain", "wide": "寺と庭", "large": large, "nested": [[1, 2], ["a": "b"]] as [Any],
        ]
        let mine = try #require(PropertyList.binaryData(value))
        let theirs = try #require(try PropertyListSerialization.propertyList(from: mine, options: [], format: nil) as? [String: Any])
        let back = try #require(try PropertyList.decode(mine) as? [String: Any])
        for decoded in [theirs, back] {
            #expect((decoded["large"] as? Data) == large)
            #expect((decoded["NSStoreModelVersionHashes"] as? [String: Any])?["Note"] as? Data == Data([1, 2, 3]))
            #expect(decoded["negative"] as? Int == -5 && decoded["big"] as? Int64 == Int64.max && decoded["ratio"] as? Double == 0.1)
            #expect(decoded["flag"] as? Bool == true && decoded["off"] as? Bool == false)
            #expect((decoded["when"] as? Date)?.timeIntervalSinceReferenceDate == 1.5)
            #expect(decoded["wide"] as? String == "寺と庭" && decoded["text"] as? String == "plain")
            #expect(((decoded["nested"] as? [Any])?.first as? [Any])?.count == 2)
        }
        // And what Foundation writes, mapc reads.
        let foundation = try PropertyListSerialization.data(fromPropertyList: ["large": Data([9, 8]), "n": 42, "s": "寺"], format: .binary, options: 0)
        let read = try #require(try PropertyList.decode(foundation) as? [String: Any])
        #expect(read["large"] as? Data == Data([9, 8]) && read["n"] as? Int == 42 && read["s"] as? String == "寺")
    }

    /// A store's metadata keeps an app's keys: read and written again, a boolean stayed 1, a
    /// real 2.0 became the integer 2 and a UInt64 past Int64.max became -1 (Linux casts any
    /// NSNumber to Int). Each keeps its kind and value now, as Foundation reads them back.
    @Test func anAppsMetadataKeysKeepTheirKinds() throws {
        let written = try PropertyListSerialization.data(fromPropertyList: ["kTrue": true, "kFalse": false, "kReal": 2.0, "kU64": NSNumber(value: UInt64.max),
                                                                            "kFloat": NSNumber(value: Float(1.5)), "kInt": -7, "kBig": Int64.min] as [String: Any],
                                                         format: .binary, options: 0)
        let again = try #require(PropertyList.binaryData(try PropertyList.decode(written)))
        let read = try #require(try PropertyListSerialization.propertyList(from: again, options: [], format: nil) as? [String: Any])
        func kind(_ key: String) -> String { (read[key] as? NSNumber).map { String(cString: $0.objCType) } ?? "none" }
        #expect(read["kTrue"] as? Bool == true && read["kFalse"] as? Bool == false && ["c", "B"].contains(kind("kTrue")), "\(kind("kTrue"))")
        #expect(kind("kReal") == "d" && (read["kReal"] as? NSNumber)?.doubleValue == 2.0)
        #expect(kind("kFloat") == "f" && (read["kFloat"] as? NSNumber)?.floatValue == 1.5)
        #expect((read["kU64"] as? NSNumber)?.uint64Value == UInt64.max && kind("kU64") == "Q", "\(String(describing: read["kU64"])) \(kind("kU64"))")
        #expect((read["kInt"] as? NSNumber)?.int64Value == -7 && (read["kBig"] as? NSNumber)?.int64Value == Int64.min)
        // And `status` shows each as what it is.
        let decoded = try #require(try PropertyList.decode(written) as? [String: Any])
        #expect(CoreDataFormat.describe(decoded["kTrue"] as Any) == "true" && CoreDataFormat.describe(decoded["kFalse"] as Any) == "false", "\(CoreDataFormat.describe(decoded["kTrue"] as Any)) \(type(of: decoded["kTrue"]!))")
        #expect(CoreDataFormat.describe(decoded["kReal"] as Any) == "2" || CoreDataFormat.describe(decoded["kReal"] as Any) == "2.0")
        #expect(CoreDataFormat.describe(decoded["kInt"] as Any) == "-7")
    }

    /// Text inside a list or dictionary is quoted, so an empty name shows (`[""]`, which a Core
    /// Data store's version identifiers often hold, read as `[]`) and a comma inside one does not
    /// split it; text on its own is shown as it is.
    @Test func textInsideAListOrDictionaryIsQuoted() {
        #expect(CoreDataFormat.describe([""] as [Any]) == "[\"\"]")
        #expect(CoreDataFormat.describe(["a, b", "c"] as [Any]) == "[\"a, b\", \"c\"]")
        #expect(CoreDataFormat.describe(["k, 1": "v \"q\""] as [String: Any]) == "{\"k, 1\": \"v \\\"q\\\"\"}")
        #expect(CoreDataFormat.describe("plain" as Any) == "plain")
        #expect(CoreDataFormat.describe([NSNumber(value: 3)] as [Any]) == "[3]")
    }

    /// An archived value expression whose arguments share one sub-expression is bounded by the
    /// number of expressions it stands for, not only by its depth.
    /// A built-in function stands on the class that implements it (`_NSPredicateUtilities`,
    /// archived by name); a constant value standing there is a receiver, never dropped.
    @Test func aFunctionsConstantReceiverIsKeptAndABuiltInsClassIsNot() throws {
        let receiver = BinaryPropertyList.functionArchive(operand: .value("palette-"), selector: "stringByAppendingString:", argument: "blue")
        #expect(try ExpressionArchive.text(of: receiver, what: "the value of x") == #"FUNCTION("palette-", "stringByAppendingString:", "blue")"#)
        let builtIn = BinaryPropertyList.functionArchive(operand: .className("_NSPredicateUtilities"), selector: "uppercase:", argument: "blue")
        #expect(try ExpressionArchive.text(of: builtIn, what: "the value of x") == #"uppercase:("blue")"#)
        // An operand referring past the archive's objects read as none: a built-in, the receiver gone.
        let damaged = BinaryPropertyList.functionArchive(operand: .value("palette-"), selector: "stringByAppendingString:", argument: "blue", operandReference: 999)
        let error = #expect(throws: MapcError.self) { try ExpressionArchive.text(of: damaged, what: "the value of x") }
        #expect(error?.description.contains("refers to object 999, past its") == true, "\(String(describing: error))")
    }

    @Test func anArchivedExpressionWithSharedPartsIsRefusedAtOnce() throws {
        let small = try ExpressionArchive.text(of: BinaryPropertyList.sharedExpressionArchive(levels: 2, width: 3), what: "the value of x")
        #expect(small == "sum:(sum:(7, 7, 7), sum:(7, 7, 7), sum:(7, 7, 7))")
        let started = Date()
        let error = #expect(throws: MapcError.self) { try ExpressionArchive.text(of: BinaryPropertyList.sharedExpressionArchive(levels: 4, width: 1000), what: "the value of x") }
        #expect(error?.description.contains("more than \(ExpressionArchive.maxNodes) expressions") == true, "\(String(describing: error))")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// An XML property list nested 600 deep was "not a property list (neither binary, XML nor
    /// text)" where the binary one is said to nest too deep: both say so now.
    @Test func anXMLListNestedTooDeepIsSaidToBe() throws {
        func nested(_ depth: Int) -> Data {
            Data(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">" + String(repeating: "<array>", count: depth) + "<array/>"
                  + String(repeating: "</array>", count: depth) + "</plist>").utf8)
        }
        #expect(throws: PropertyList.Problem.self) { try PropertyList.decode(nested(600)) }
        do { _ = try PropertyList.decode(nested(600)) } catch let problem as PropertyList.Problem {
            #expect(problem.description == "it nests more than 512 levels deep" && !problem.isMalformed)
        }
        #expect(PropertyList.xmlNesting(nested(100)) == 100)
        #expect(PropertyList.xmlNesting(Data("<plist><dict><key>a</key><array/></dict></plist>".utf8)) == 1)
        // Tags in a comment or a CDATA section are text.
        #expect(PropertyList.xmlNesting(Data("<plist><!-- <array><array> --><dict><string><![CDATA[<array><dict>]]></string></dict></plist>".utf8)) == 1)
        #expect(try PropertyList.decode(nested(20)) is [Any])
    }
}
