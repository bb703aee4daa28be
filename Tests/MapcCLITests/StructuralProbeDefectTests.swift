import Foundation
import GRDB
import Testing

/// Defects a probe of structural model changes found (renames, inheritance, relationships,
/// constraints between versions), run through the CLI on both store formats.
@Suite("Defects found by a probe of structural changes", .serialized)
struct StructuralProbeDefectTests {
    /// A uniqueness constraint added where existing objects share a value: the compiled step
    /// (one `INSERT … SELECT`) failed on the third item, and, on a Core Data store (whose
    /// migration file keeps no journal), left the first two in the file for the interpreter to
    /// meet again: the first item was named as the one breaking the constraint and as the one it
    /// clashed with. The third is named now, with the first, on both formats.
    @Test(arguments: ["mapc", "core-data"])
    func theObjectBreakingANewUniquenessConstraintIsNamed(layout: String) throws {
        let item = "      name: string\n      code: string\n"
        let folder = try CLI.project(versions: [("v1", "  Item:\n    attributes:\n\(item)"),
                                  ("v2", "  Item:\n    uniquenessConstraints: [[code]]\n    attributes:\n\(item)")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i1", "name": "a", "code": "x"}, {"id": "i2", "name": "b", "code": "y"}, {"id": "i3", "name": "c", "code": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 3, "\(run.stderr)")
        let (third, first) = layout == "mapc" ? ("i3", "i1") : ("Item/p3", "Item/p1")
        let line = run.stderr.split(separator: "\n").first { $0.contains("uniqueness constraint") }.map(String.init) ?? run.stderr
        #expect(line.contains("Item '\(third)'") && line.contains("Item '\(first)'") && !line.contains("Item 'Item/p2'") && !line.contains("'i2'"), "\(line)")
    }

    /// A to-one without an inverse that gains a to-one inverse, where two posts share a tag: the
    /// run is refused (a one-to-one cannot hold it), but it said "does not point back (value: 1)",
    /// a row key. It names the tag now, says why, and what to do.
    @Test(arguments: ["mapc", "core-data"])
    func aOneToOneInverseTwoObjectsShareIsExplained(layout: String) throws {
        let folder = try CLI.project(versions: [("v1", "  Post:\n    attributes: { title: string }\n    relationships:\n      tag: { destination: Tag, inverse: null, optional: true }\n  Tag:\n    attributes: { label: string }\n"),
                                  ("v2", "  Post:\n    attributes: { title: string }\n    relationships:\n      tag: { destination: Tag, inverse: post, optional: true }\n  Tag:\n    attributes: { label: string }\n    relationships:\n      post: { destination: Post, inverse: tag, optional: true }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Post": [{"id": "a", "title": "A", "tag": "t1"}, {"id": "b", "title": "B", "tag": "t1"}], "Tag": [{"id": "t1", "label": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "--layout", layout, "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        let tag = layout == "mapc" ? "t1" : "Tag/p1"
        #expect(run.status == 3 && run.stderr.contains("the Tag it refers to does not have this Post as its 'post' (a one-to-one links objects in pairs; where two Posts share one Tag")
                && run.stderr.contains("make 'post' to-many") && run.stderr.contains("(value: \"\(tag)\")"), "\(run.stderr)")
    }

    /// A to-many without an inverse that gains a to-one inverse, where two posts share a tag:
    /// refused, naming the post already holding the tag by its id (it said "the Post with key 1").
    @Test func aSecondOwnerIsRefusedNamingTheFirstByItsID() throws {
        let folder = try CLI.project(versions: [("v1", "  Post:\n    attributes: { title: string }\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: null, optional: true }\n  Tag:\n    attributes: { label: string }\n"),
                                  ("v2", "  Post:\n    attributes: { title: string }\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: post, optional: true }\n  Tag:\n    attributes: { label: string }\n    relationships:\n      post: { destination: Post, inverse: tags, optional: true }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Post": [{"id": "first", "title": "A", "tags": ["t1"]}, {"id": "second", "title": "B", "tags": ["t1"]}], "Tag": [{"id": "t1", "label": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status != 0 && run.stderr.contains("Tag 't1' is linked from Post 'first' already") && !run.stderr.contains("with key"), "\(run.stderr)")
    }

    /// An entity made abstract is refused on the models alone: the reason said "Person objects
    /// exist", read off no store (this one has none). It says what is known, and what to write.
    @Test func anEntityMadeAbstractIsRefusedForWhatItMayHold() throws {
        let person = "    attributes: { name: string }\n  Employee:\n    parent: Person\n    attributes: { dept: string? }\n"
        let folder = try CLI.project(versions: [("v1", "  Person:\n\(person)"), ("v2", "  Person:\n    abstract: true\n\(person)")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        let said = diff.stdout + diff.stderr
        #expect(!said.contains("objects exist") && said.contains("Person is abstract in v2 but was concrete in v1: objects of exactly Person (not of a sub-entity) would have no entity")
                && said.contains("write the step's mapping"), "\(said)")
    }

    /// Renaming identifiers that carry one value into two properties, or name no property of the
    /// entity (another entity's), were taken in silence: two copies, or a new empty property. The
    /// step is inferred as before, and `check` and `diff` say what the identifiers do.
    @Test func renamingIdentifiersThatCopyOrNameNothingAreSaid() throws {
        let folder = try CLI.project(versions: [("v1", "  Person:\n    attributes: { name: string?, title: string? }\n  Company:\n    attributes: { title: string? }\n"),
                                  ("v2", "  Person:\n    attributes:\n      first: { type: string, optional: true, renamingIdentifier: name }\n      nick: { type: string, optional: true, renamingIdentifier: name }\n"
                                         + "      title: string?\n      companyTitle: { type: string, optional: true, renamingIdentifier: label }\n  Company:\n    attributes: { title: string? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        let said = check.stdout + check.stderr
        #expect(check.status == 0 && said.contains("warning: the step v1 -> v2 is inferred: Person.first and Person.nick all take the values of name of Person in v1")
                && said.contains("Person.companyTitle has renamingIdentifier 'label', which names no property of Person in v1"), "\(said)")
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains("note: Person.first and Person.nick all take the values of name"), "\(diff.stdout)")
        // `infer` says it too, the step inferred whole (it said nothing).
        let infer = try CLI.run(["infer", "--from", "v1", "--to", "v2"], in: folder)
        #expect(infer.status == 0 && infer.stderr.contains("note: Person.first and Person.nick all take the values of name"), "\(infer.stderr)")
    }

    /// An entity moved under another parent inherits the parent's properties: `diff` said
    /// "added Machine.power", a property Machine had unchanged. It says Car gets it.
    @Test func aPropertyInheritedFromANewParentIsSaidOfTheEntityMoved() throws {
        let rest = "  Machine:\n    attributes: { power: double? }\n"
        let folder = try CLI.project(versions: [("v1", "  Vehicle:\n    attributes: { wheels: int16? }\n  Car:\n    parent: Vehicle\n    attributes: { seats: int16? }\n\(rest)"),
                                  ("v2", "  Vehicle:\n    attributes: { wheels: int16? }\n  Car:\n    parent: Machine\n    attributes: { seats: int16? }\n\(rest)")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(!diff.stdout.contains("Machine.power") && diff.stdout.contains("Car.power: inherited from Machine, which it is now under; double, optional")
                && diff.stdout.contains("Car.wheels: attribute of Car (inherited from Vehicle, which it is no longer under)"), "\(diff.stdout)")
    }

    /// A store holding nil where its version requires a value (as Core Data never checks in a
    /// batch update) was dumped in silence into a file that `load` then refuses: the dump says so.
    @Test func aDumpSaysWhatLoadWouldRefuse() throws {
        let folder = try CLI.project(versions: [("v1", "  Item:\n    attributes: { name: string, code: string? }\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i1", "name": "a"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let clean = try CLI.run(["dump", "s.db"], in: folder)
        #expect(clean.status == 0 && !clean.stderr.contains("note:"), "\(clean.stderr)")
        try sqlite(folder, "s.db", "UPDATE Item SET name = NULL")
        let dump = try CLI.run(["dump", "--output", "out.json", "s.db"], in: folder)
        #expect(dump.status == 0 && dump.stderr.contains("note: s.db breaks the rules of v1 in 1 place (Item 'i1', property 'name': required") && dump.stderr.contains("`mapc load` refuses the dump until they are mended"), "\(dump.stderr)")
        #expect(try CLI.run(["load", "out.json", "again.db"], in: folder).status == 1)
        // A reference to no object is dumped as null, which `load` takes: not said as refused.
        let schema = "  Item:\n    attributes: { name: string }\n    relationships:\n      box: { destination: Box, inverse: items, optional: true }\n  Box:\n    attributes: { label: string? }\n    relationships:\n      items: { destination: Item, toMany: true, inverse: box, optional: true }\n"
        try folder.write("model: S\nversion: v1\nentities:\n\(schema)", to: "schemas/v1.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Item": [{"id": "i1", "name": "a", "box": "b1"}], "Box": [{"id": "b1"}]}}"#, to: "boxes.json")
        #expect(try CLI.run(["load", "boxes.json", "boxes.db"], in: folder).status == 0)
        try sqlite(folder, "boxes.db", "UPDATE Item SET box = 99")
        let dangling = try CLI.run(["dump", "--output", "boxes-out.json", "boxes.db"], in: folder)
        #expect(dangling.status == 0 && !dangling.stderr.contains("refuses the dump"), "\(dangling.stderr)")
        #expect(try CLI.run(["load", "boxes-out.json", "boxes-again.db"], in: folder).status == 0)
    }

    /// A sub-entity removed where a required to-one may lead to its objects: `plan` passed the step
    /// and `run` failed validating "required relationship empty", the cause unsaid. `diff` and
    /// `check` say it now, and so does the failed run.
    @Test func aRequiredLinkToDroppedObjectsIsSaid() throws {
        let people = "  Person:\n    attributes: { name: string }\n    relationships:\n      led: { destination: Project, toMany: true, inverse: lead, optional: true }\n"
        let project = "  Project:\n    attributes: { title: string }\n    relationships:\n      lead: { destination: Person, inverse: led, optional: false }\n"
        let folder = try CLI.project(versions: [("v1", people + "  Employee:\n    parent: Person\n    attributes: { dept: string? }\n" + project), ("v2", people + project)])
        defer { try? FileManager.default.removeItem(at: folder) }
        let said = "Project.lead is required, and may lead to Employee objects, which the step drops"
        let diff = try CLI.run(["diff", "v1", "v2"], in: folder)
        #expect(diff.stdout.contains(said), "\(diff.stdout)")
        #expect(try CLI.run(["check"], in: folder).stderr.contains(said))
        try folder.write(#"{"version": "v1", "objects": {"Person": [{"id": "p1", "name": "P"}], "Employee": [{"id": "e1", "name": "E"}], "Project": [{"id": "j1", "title": "a", "lead": "p1"}, {"id": "j2", "title": "b", "lead": "e1"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let run = try CLI.run(["run", "--accept-data-loss", "s.db"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("Project 'j2'") && run.stderr.contains(said), "\(run.stderr)")
    }

    /// A mapping file that leaves an entity out drops its objects, as Core Data's would: `check`
    /// warned, but `run` said nothing while every tag went (exit 0). The run shows the mapping
    /// files' warnings now, as a compiler shows its warnings while it builds.
    @Test func aRunShowsItsMappingFilesWarnings() throws {
        let entities = "  Note:\n    attributes: { title: string }\n  Tag:\n    attributes: { name: string }\n"
        let folder = try CLI.project(versions: [("v1", entities), ("v2", entities.replacingOccurrences(of: "title: string", with: "title: string, body: string?"))])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - name: NoteToNote\n    source: Note\n    destination: Note\n    attributes:\n      title: $source.title\n", to: "mappings/v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Note": [{"id": "n1", "title": "a"}], "Tag": [{"id": "t1", "name": "x"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("s.db"), to: folder.appendingPathComponent("t.db"))
        let run = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("warning: no entity mapping reads Tag objects of v1; they would be dropped"), "\(run.stderr)")
        // A batch says it once, with the stores it concerns.
        try FileManager.default.copyItem(at: folder.appendingPathComponent("t.db"), to: folder.appendingPathComponent("u.db"))
        let batch = try CLI.run(["run", "t.db", "u.db"], in: folder)
        #expect(batch.status == 0 && batch.stderr.contains("note (t.db, u.db): ./mappings/v1_to_v2.yaml:3:1: warning: no entity mapping reads Tag objects of v1"), "\(batch.stderr)")
    }
}
