import Foundation
import Testing

/// What an Xcode mapping model holds besides its expressions, imported or said: an entity
/// mapping's user info (which real policies branch on: dropped, they fell back to `super` and
/// the run lost values, exit 0), the name its editor gave it, and anything the import does not read.
@Suite("Mapping model details")
struct MappingImportDetailsTests {
    /// A model of two versions, M and M 2, each with Item { name }.
    private func project(more: String = "") throws -> URL {
        let folder = try CLI.emptyProject()
        for version in ["M", "M 2"] {
            let model = folder.appendingPathComponent("M.xcdatamodeld/\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
            try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
            \(more)
                </entity>
            </model>

            """.utf8).write(to: model.appendingPathComponent("contents"))
        }
        let imported = try CLI.run(["import", "M.xcdatamodeld"], in: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        return folder
    }

    /// An archived dictionary as Xcode writes a user info.
    private func archive(_ dictionary: NSDictionary) throws -> String {
        try NSKeyedArchiver.archivedData(withRootObject: dictionary, requiringSecureCoding: false).base64EncodedString()
    }

    private func mappingModel(entityLines: String, attributeLines: String = "", in folder: URL) throws {
        let bundle = folder.appendingPathComponent("Item.xcmappingmodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Data("""
        <?xml version="1.0" standalone="yes"?>
        <database>
            <object type="XDDEVATTRIBUTEMAPPING" id="z200">
                <attribute name="name" type="string">name</attribute>
        \(attributeLines)
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z110"></relationship>
            </object>
            <object type="XDDEVMAPPINGMODEL" id="z101">
                <attribute name="sourcemodelpath" type="string">M.xcdatamodeld/M.xcdatamodel</attribute>
                <attribute name="destinationmodelpath" type="string">M.xcdatamodeld/M 2.xcdatamodel</attribute>
                <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z110"></relationship>
            </object>
            <object type="XDDEVENTITYMAPPING" id="z110">
        \(entityLines)
                <attribute name="sourcename" type="string">Item</attribute>
                <attribute name="mappingtypename" type="string">Undefined</attribute>
                <attribute name="mappingnumber" type="int16">1</attribute>
                <attribute name="destinationname" type="string">Item</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z101"></relationship>
                <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z200"></relationship>
            </object>
        </database>

        """.utf8).write(to: bundle.appendingPathComponent("xcmapping.xml"))
    }

    @Test func anEntityMappingsUserInfoIsImported() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let info = try archive(["sourceVersion": "v1.1", "modelVersion": "é 2", "count": 3])
        try mappingModel(entityLines: #"        <attribute name="userinfodata" type="binary">\#(info)</attribute>"#, in: folder)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let yaml = try folder.read("mappings/mapping_M_to_M 2.yaml")
        #expect(yaml.contains("userInfo:") && yaml.contains("sourceVersion: v1.1") && yaml.contains("modelVersion: é 2") && yaml.contains("count: '3'"), "\(yaml)")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
    }

    /// A boolean constant (`YES` typed in Xcode's mapping editor, archived as a property list's
    /// true) was imported as the number 1, by the binary decoder's NSNumber.
    @Test func aBooleanConstantIsImportedAsABoolean() throws {
        let folder = try project(more: #"        <attribute name="done" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive: [String: Any] = [
            "$version": 100000, "$archiver": "NSKeyedArchiver", "$top": ["root": ["CF$UID": 1]],
            "$objects": ["$null", ["NSConstantValue": ["CF$UID": 2], "NSExpressionType": 0, "$class": ["CF$UID": 3]], true,
                         ["$classname": "NSConstantValueExpression", "$classes": ["NSConstantValueExpression", "NSExpression", "NSObject"]]] as [Any],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: archive, format: .binary, options: 0)
        try mappingModel(entityLines: "", attributeLines: "", in: folder)
        let xml = folder.appendingPathComponent("Item.xcmappingmodel/xcmapping.xml")
        let text = try String(contentsOf: xml, encoding: .utf8).replacingOccurrences(of: #"<attribute name="name" type="string">name</attribute>"#,
            with: #"<attribute name="name" type="string">done</attribute><attribute name="valueexpressiondata" type="binary">\#(data.base64EncodedString())</attribute>"#)
        try text.write(to: xml, atomically: true, encoding: .utf8)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let yaml = try folder.read("mappings/mapping_M_to_M 2.yaml")
        #expect(yaml.contains("done: 'YES'"), "\(yaml)")
    }

    /// What the import does not read is said at its element: an attribute of a later Xcode (or
    /// a hand edit), a property mapping's user info (mapc's property mappings have none), a user
    /// info that is no dictionary.
    @Test func whatIsNotImportedIsSaid() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try mappingModel(entityLines: #"        <attribute name="somethingnew" type="string">x</attribute>"#,
                         attributeLines: #"        <attribute name="userinfodata" type="binary">\#(try archive(["k": "v"]))</attribute>"#, in: folder)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("xcmapping.xml:14:9: warning: entity mapping ItemToItem: the attribute 'somethingnew' is not one mapc reads, and is not imported"), "\(run.stderr)")
        #expect(run.stderr.contains("xcmapping.xml:5:9: warning: attribute name of ItemToItem: its user info is not imported"), "\(run.stderr)")
        let notADictionary = try NSKeyedArchiver.archivedData(withRootObject: NSArray(array: ["a"]), requiringSecureCoding: false).base64EncodedString()
        try mappingModel(entityLines: #"        <attribute name="userinfodata" type="binary">\#(notADictionary)</attribute>"#, in: folder)
        let odd = try CLI.run(["import", "Item.xcmappingmodel", "--output", "other"], in: folder)
        #expect(odd.stderr.contains("the user info of entity mapping ItemToItem is not an archived dictionary"), "\(odd.stderr)")
    }

    /// A name given in Xcode's mapping editor is the mapping's name (relationship mappings and
    /// policies look it up by it); it was replaced by `<Source>To<Destination>`.
    @Test func anEntityMappingKeepsTheNameItsEditorGaveIt() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try mappingModel(entityLines: #"        <attribute name="name" type="string">KeepItems</attribute>"#, in: folder)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try folder.read("mappings/mapping_M_to_M 2.yaml").contains("name: KeepItems"))
        // A name a mapping file cannot give is Xcode's standard one, said (the review's case).
        try mappingModel(entityLines: #"        <attribute name="name" type="string">Item-to-Item v2</attribute>"#, in: folder)
        let odd = try CLI.run(["import", "Item.xcmappingmodel", "--output", "odd"], in: folder)
        #expect(odd.status == 0 && odd.stderr.contains("the entity mapping named 'Item-to-Item v2' is named ItemToItem"), "\(odd.stderr)")
        #expect(try folder.read("odd/mapping_M_to_M 2.yaml").contains("name: ItemToItem"))
    }
}

extension MappingImportDetailsTests {
    /// A constant archived as a real (`100.0` in `$source.cents / 100.0`) was imported as the
    /// integer 100, since the decoder's number reads as an `Int` when whole: the division became
    /// an integer one. A property list's real stays a double; its integer stays an integer.
    @Test func aWholeRealConstantIsImportedAsADouble() throws {
        for (constant, written) in [(Any?.some(100.0 as Double), "100.0"), (Any?.some(7 as Int), "7")] {
            let folder = try project(more: #"        <attribute name="rate" optional="YES" attributeType="Double" usesScalarValueType="YES"/>"#)
            defer { try? FileManager.default.removeItem(at: folder) }
            let archive: [String: Any] = [
                "$version": 100000, "$archiver": "NSKeyedArchiver", "$top": ["root": ["CF$UID": 1]],
                "$objects": ["$null", ["NSConstantValue": ["CF$UID": 2], "NSExpressionType": 0, "$class": ["CF$UID": 3]], constant as Any,
                             ["$classname": "NSConstantValueExpression", "$classes": ["NSConstantValueExpression", "NSExpression", "NSObject"]]] as [Any],
            ]
            let data = try PropertyListSerialization.data(fromPropertyList: archive, format: .binary, options: 0)
            let (run, yaml) = try importing(data.base64EncodedString(), in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(yaml.contains("rate: \(written)\n") || yaml.contains("rate: '\(written)'"), "\(written): \(yaml)")
        }
    }

    /// An attribute Xcode maps by its name (no expression: `$source.<name>`) named like a reserved
    /// word of mapc's language (`function`) was imported as `$source.function`, which `check`
    /// refused. The key is written `$source.#function`.
    @Test func anAttributeNamedLikeAKeywordIsImportedAsAKey() throws {
        let folder = try project(more: #"        <attribute name="function" optional="YES" attributeType="String"/>"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        try mappingModel(entityLines: "", in: folder)
        let xml = folder.appendingPathComponent("Item.xcmappingmodel/xcmapping.xml")
        let text = try String(contentsOf: xml, encoding: .utf8).replacingOccurrences(of: #"<attribute name="name" type="string">name</attribute>"#,
                                                                                      with: #"<attribute name="name" type="string">function</attribute>"#)
        try text.write(to: xml, atomically: true, encoding: .utf8)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let yaml = try folder.read("mappings/mapping_M_to_M 2.yaml")
        #expect(yaml.contains("$source.#function"), "\(yaml)")
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
    }
}

extension MappingImportDetailsTests {
    /// A keyed archive of one expression, built from nested dictionaries: each `[String: Any]`
    /// holding "$classname" becomes a class object, every other dictionary an object of its own.
    private func expressionArchive(_ root: [String: Any]) throws -> String {
        var objects: [Any] = ["$null"]
        func add(_ value: Any) -> [String: Any] {
            switch value {
            case let object as [String: Any]:
                let index = objects.count
                objects.append([:] as [String: Any])
                var encoded: [String: Any] = [:]
                for (key, field) in object {
                    if key == "$class", let chain = field as? [String] {
                        encoded[key] = add(["$classname": chain[0], "$classes": chain] as [String: Any])
                    } else if key == "$classname" || key == "$classes" || key == "NSExpressionType" {
                        encoded[key] = field
                    } else {
                        encoded[key] = add(field)
                    }
                }
                objects[index] = encoded
                return ["CF$UID": index]
            case let list as [Any]:
                let items = list.map { add($0) }
                objects.append(["NS.objects": items, "$class": add(["$classname": "NSArray", "$classes": ["NSArray", "NSObject"]] as [String: Any])] as [String: Any])
                return ["CF$UID": objects.count - 1]
            default:
                objects.append(value)
                return ["CF$UID": objects.count - 1]
            }
        }
        let top = add(root)
        let archive: [String: Any] = ["$version": 100000, "$archiver": "NSKeyedArchiver", "$top": ["root": top], "$objects": objects]
        return try PropertyListSerialization.data(fromPropertyList: archive, format: .binary, options: 0).base64EncodedString()
    }

    /// Imports a mapping model whose one attribute mapping (`rate`) holds the archive; returns the
    /// import's result and the mapping file written.
    private func importing(_ archive: String, in folder: URL) throws -> (run: CLIResult, yaml: String) {
        try mappingModel(entityLines: "", in: folder)
        let xml = folder.appendingPathComponent("Item.xcmappingmodel/xcmapping.xml")
        let text = try String(contentsOf: xml, encoding: .utf8).replacingOccurrences(of: #"<attribute name="name" type="string">name</attribute>"#,
            with: #"<attribute name="name" type="string">rate</attribute><attribute name="valueexpressiondata" type="binary">\#(archive)</attribute>"#)
        try text.write(to: xml, atomically: true, encoding: .utf8)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        return (run, (try? folder.read("mappings/mapping_M_to_M 2.yaml")) ?? "")
    }

    /// Xcode archives `CAST($source.name, "NSNumber")` as the built-in `castObject:toType:`, which
    /// was imported under that name, and `check` then said "unknown function". It is `CAST`.
    /// A TERNARY (and a SUBQUERY, a set expression) was said to be "no expression of NSExpression's
    /// own classes"; each is said to be not imported, to write by hand, as the docs say.
    @Test func aCastIsImportedAsCastAndATernaryIsSaidToBeWrittenByHand() throws {
        let folder = try project(more: #"        <attribute name="rate" optional="YES" attributeType="Double" usesScalarValueType="YES"/>"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let constantClass = ["NSConstantValueExpression", "NSExpression", "NSObject"]
        let source: [String: Any] = ["NSExpressionType": 2, "NSVariable": "source", "$class": ["NSVariableExpression", "NSExpression", "NSObject"]]
        let keyPath: [String: Any] = ["NSExpressionType": 4, "NSOperand": source, "NSSelectorName": "valueForKeyPath:",
                                      "NSArguments": [["NSExpressionType": 10, "NSKeyPath": "name", "$class": ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"]] as [String: Any]],
                                      "$class": ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"]]
        let cast: [String: Any] = ["NSExpressionType": 4, "NSSelectorName": "castObject:toType:",
                                   "NSOperand": ["NSExpressionType": 0, "NSConstantValueClassName": "_NSPredicateUtilities", "$class": constantClass] as [String: Any],
                                   "NSArguments": [keyPath, ["NSExpressionType": 0, "NSConstantValue": "NSNumber", "$class": constantClass] as [String: Any]],
                                   "$class": ["NSFunctionExpression", "NSExpression", "NSObject"]]
        let imported = try importing(try expressionArchive(cast), in: folder)
        #expect(imported.run.status == 0 && imported.yaml.contains(#"rate: CAST($source.name, "NSNumber")"#), "\(imported.run.stderr)\(imported.yaml)")
        let ternary: [String: Any] = ["NSExpressionType": 20, "NSTrueExpression": keyPath, "NSFalseExpression": keyPath, "$class": ["NSTernaryExpression", "NSExpression", "NSObject"]]
        let second = try importing(try expressionArchive(ternary), in: folder)
        #expect(second.run.stderr.contains("a TERNARY is not imported; write it in the mapping file by hand") && !second.run.stderr.contains("only NSExpression's own classes"), "\(second.run.stderr)")
    }
}

extension MappingImportDetailsTests {
    /// An attribute mapping without an expression for an attribute the destination entity does
    /// not have (left in the file from an earlier state of the model) was passed over without a
    /// word, where the docs promise nothing is. It is said, at its element.
    @Test func aStaleAttributeMappingIsSaid() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try mappingModel(entityLines: "", in: folder)
        let xml = folder.appendingPathComponent("Item.xcmappingmodel/xcmapping.xml")
        let text = try String(contentsOf: xml, encoding: .utf8).replacingOccurrences(of: #"<attribute name="name" type="string">name</attribute>"#,
                                                                                      with: #"<attribute name="name" type="string">titleStr</attribute>"#)
        try text.write(to: xml, atomically: true, encoding: .utf8)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("xcmapping.xml:3:") && run.stderr.contains("Item of M 2 has no attribute titleStr"), "\(run.stderr)")
    }
}

extension MappingImportDetailsTests {
    /// What `check` says of the mapping just imported was placed at `mapping_M_to_M 2.yaml:…`,
    /// a file that is not there (it was written in ./mappings): said at the file as written.
    @Test func theImportedMappingsProblemsAreSaidAtTheFileWritten() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try mappingModel(entityLines: #"        <attribute name="migrationpolicyclassname" type="string">App.NotPorted</attribute>"#, in: folder)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("./mappings/mapping_M_to_M 2.yaml:") && run.stderr.contains("unknown policy 'NotPorted'"), "\(run.stderr)")
        #expect(!run.stderr.contains("\nmapping_M_to_M 2.yaml:"), "\(run.stderr)")
    }
}

extension MappingImportDetailsTests {
    /// A mapping model that maps no `Tag` (Core Data then drops its objects) was imported without
    /// a word of it in the file: `check --strict` refused the drop, and a remove mapping written
    /// by hand was lost at the next `import --replace`. The drop is written as a remove mapping.
    @Test func anEntityTheModelMapsNotIsWrittenAsARemoveMapping() throws {
        let folder = try project(more: #"</entity><entity name="Tag" representedClassName="Tag" syncable="YES"><attribute name="label" optional="YES" attributeType="String"/>"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        try mappingModel(entityLines: "", in: folder)
        let run = try CLI.run(["import", "Item.xcmappingmodel"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("warning: no entity mapping reads Tag objects of M, so Core Data drops them: written as the remove mapping 'RemoveTag'"), "\(run.stderr)")
        let mapping = try folder.read("mappings/mapping_M_to_M 2.yaml")
        #expect(mapping.contains("  - name: RemoveTag\n    # No entity mapping of Item.xcmappingmodel reads Tag objects, so Core Data does not migrate them: they are dropped.")
                && mapping.contains("    source: Tag\n    type: remove"), "\(mapping)")
        #expect(try CLI.run(["check", "--strict"], in: folder).status == 0)
        // Again, with --replace: the same file.
        #expect(try CLI.run(["import", "--replace", "Item.xcmappingmodel"], in: folder).status == 0)
        #expect(try folder.read("mappings/mapping_M_to_M 2.yaml") == mapping)
        // With a custom policy (which may read any object), the drop is not sure: no remove
        // mapping, and `check` says what it sees (the review).
        try mappingModel(entityLines: #"        <attribute name="migrationpolicyclassname" type="string">ItemPolicy</attribute>"#, in: folder)
        let policy = try CLI.run(["import", "--replace", "Item.xcmappingmodel"], in: folder)
        let withPolicy = try folder.read("mappings/mapping_M_to_M 2.yaml")
        #expect(!policy.stderr.contains("written as the remove mapping") && !withPolicy.contains("RemoveTag") && withPolicy.contains("policy: ItemPolicy"), "\(policy.stderr)")
    }
}
