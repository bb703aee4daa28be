import Foundation
import Testing

/// What a probe of real apps' model histories, imported as their teams keep them, found.
@Suite("Findings of a probe of real model histories", .serialized)
struct ModelHistoryProbeFindingsTests {
    /// Writes an Xcode model of `versions` (name and the attributes of its one entity, `Tag`), the
    /// current one named by `.xccurrentversion`.
    private func xcodeModel(in folder: URL, versions: [(name: String, attributes: [String])], current: String) throws -> URL {
        let model = folder.appendingPathComponent("DataModel.xcdatamodeld")
        for version in versions {
            let directory = model.appendingPathComponent("\(version.name).xcdatamodel")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let attributes = version.attributes.map { "        <attribute name=\"\($0)\" optional=\"YES\" attributeType=\"String\"/>\n" }.joined()
            try Data(("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n"
                      + "    <entity name=\"Tag\" syncable=\"YES\">\n" + attributes + "    </entity>\n</model>\n").utf8)
                .write(to: directory.appendingPathComponent("contents"))
        }
        try Data(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
                  + "<plist version=\"1.0\">\n<dict>\n\t<key>_XCCurrentVersionName</key>\n\t<string>\(current).xcdatamodel</string>\n</dict>\n</plist>\n").utf8)
            .write(to: model.appendingPathComponent(".xccurrentversion"))
        return model
    }

    /// Versions numbered in base 36 (`DataModel 01` … `DataModel 09`, `DataModel 0A (+Server)`,
    /// `DataModel 0B`: a real app's history) were ordered by their numbers, `0A` as 0 and so before
    /// `01`; the current version was moved last and the warning advised taking the real versions
    /// `01` … `09` out. A store at `0A` then "migrated" back to `01`, dropping what `0A` added.
    /// Where the names order one way by number and another by text, and only the text's order has
    /// the current version last, the text's order is taken, and said.
    @Test func versionsNumberedInBase36AreOrderedByTheirText() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try xcodeModel(in: folder, versions: [("DataModel 01", ["tagName"]), ("DataModel 02 (+Location)", ["tagName", "place"]),
                                                          ("DataModel 09", ["tagName", "place", "lastModified"]),
                                                          ("DataModel 0A (+Server)", ["tagName", "place", "lastModified", "server"]),
                                                          ("DataModel 0B", ["tagName", "place", "lastModified", "server", "sizes"])],
                                   current: "DataModel 0B")
        let run = try CLI.run(["import", model.path, "--output", "schemas"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        let order = try folder.read("schemas/versions.yaml")
        #expect(order.contains("versions: [DataModel 01, DataModel 02 (+Location), DataModel 09, DataModel 0A (+Server), DataModel 0B]"), "\(order)")
        #expect(run.stderr.contains("ordered by their text") && run.stderr.contains("'DataModel 0A (+Server)'") && run.stderr.contains("versions.yaml")
                && !run.stderr.contains("take them out"), "\(run.stderr)")
        // A store at 0A keeps its values on the way to the current version.
        try folder.write(#"{"version": "DataModel 0A (+Server)", "objects": {"Tag": [{"id": "t", "tagName": "a", "lastModified": "yesterday", "server": "srv-1"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "s.db", "--layout", "core-data"], in: folder).status == 0)
        let migrated = try CLI.run(["run", "--quiet", "s.db"], in: folder)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let dump = try CLI.run(["dump", "s.db"], in: folder)
        #expect(dump.stdout.contains(#""server": "srv-1""#) && dump.stdout.contains(#""lastModified": "yesterday""#) && dump.stdout.contains("DataModel 0B"), "\(dump.stdout)")
    }

    /// Where no order of the names has the current version last (a version in progress after it),
    /// it is ordered last as before, and the advice asks to check the order rather than to take
    /// versions out first.
    @Test func aVersionAfterTheCurrentOneAsksForTheOrderToBeChecked() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try xcodeModel(in: folder, versions: [("Model", ["a"]), ("Model 2", ["a", "b"]), ("Model 3", ["a", "b", "c"]), ("Model 10", ["a", "b", "c", "d"])],
                                   current: "Model 3")
        let run = try CLI.run(["import", model.path, "--output", "schemas"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try folder.read("schemas/versions.yaml").contains("versions: [Model, Model 2, Model 10, Model 3]"))
        #expect(run.stderr.contains("'Model 10' sorts after it by name") && run.stderr.contains("check the order in versions.yaml"), "\(run.stderr)")
        // Placed at the name .xccurrentversion gives (it was at 1:1, the file's XML declaration).
        #expect(run.stderr.contains(".xccurrentversion:6:10: warning: 'Model 3' is the current version"), "\(run.stderr)")
    }
}

extension ModelHistoryProbeFindingsTests {
    /// Versions named by what they did (`Original`, `Added Tags`, `With Photos`) were ordered
    /// alphabetically without a word where that happened to put the current version last: a store
    /// at `Added Tags` would have gone through `Original`. Names that do not say an order are said.
    @Test func namesThatDoNotSayTheirOrderAreSaid() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try xcodeModel(in: folder, versions: [("Original", ["a"]), ("Added Tags", ["a", "tags"]), ("With Photos", ["a", "tags", "photo"])], current: "With Photos")
        let run = try CLI.run(["import", model.path, "--output", "schemas"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("warning: the version names do not say their order") && run.stderr.contains("versions.yaml"), "\(run.stderr)")
        // Numbered alike, they do.
        let numbered = try xcodeModel(in: folder.appendingPathComponent("n"), versions: [("Model", ["a"]), ("Model 2", ["a", "b"]), ("Model 10", ["a", "b", "c"])], current: "Model 10")
        let quiet = try CLI.run(["import", numbered.path, "--output", "numbered"], in: folder)
        #expect(quiet.status == 0 && !quiet.stderr.contains("warning"), "\(quiet.stderr)")
        // Two versions, the current one last: there is only one order.
        let two = try xcodeModel(in: folder.appendingPathComponent("t"), versions: [("Original", ["a"]), ("Added Tags", ["a", "tags"])], current: "Added Tags")
        let pair = try CLI.run(["import", two.path, "--output", "two"], in: folder)
        #expect(pair.status == 0 && !pair.stderr.contains("warning"), "\(pair.stderr)")
        #expect(try folder.read("two/versions.yaml").contains("versions: [Original, Added Tags]"))
    }
}

extension ModelHistoryProbeFindingsTests {
    /// An optional attribute made required without a default (a real app's `Album.comment`) made
    /// `check` fail ("the step has no mapping file and cannot be inferred") where `plan` and `run`
    /// migrate every store holding no nil of it, as Core Data's inference does: a team's CI failed
    /// on a history that migrates. `check` warns, naming what a store must not hold; `run` still
    /// refuses a store holding a nil, naming its objects.
    @Test func aStepOnlyANilStopsIsAWarningOfCheck() throws {
        let folder = try CLI.project(versions: [("v1", "  Album:\n    attributes:\n      comment: string?\n"), ("v2", "  Album:\n    attributes:\n      comment: string\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try CLI.run(["check"], in: folder)
        #expect(check.status == 0 && check.stderr.contains("warning: the step v1 -> v2 is inferred only for a store holding no nil of Album.comment")
                && !check.stderr.contains("cannot be inferred"), "\(check.stderr)")
        try folder.write(#"{"version": "v1", "objects": {"Album": [{"id": "a", "comment": "x"}]}}"#, to: "full.json")
        try folder.write(#"{"version": "v1", "objects": {"Album": [{"id": "a", "comment": "x"}, {"id": "b"}]}}"#, to: "holes.json")
        #expect(try CLI.run(["load", "full.json", "full.db"], in: folder).status == 0)
        #expect(try CLI.run(["load", "holes.json", "holes.db"], in: folder).status == 0)
        #expect(try CLI.run(["run", "--quiet", "full.db"], in: folder).status == 0)
        let refused = try CLI.run(["run", "--quiet", "holes.db"], in: folder)
        #expect(refused.status != 0 && refused.stderr.contains("Album objects whose comment is nil") && refused.stderr.contains("or give 'comment' a default in v2"), "\(refused.stderr)")
    }
}

extension ModelHistoryProbeFindingsTests {
    /// The base-36 order held only for histories without an unnumbered first version and with
    /// the current version last by text (a review): `DataModel, DataModel 01 … 0B` was ordered
    /// `DataModel, 0A, 01, …`, a version in progress put the others by number, one version
    /// imported on its own (`0A` joining `01 … 09`) went first, and a name with a digit before a
    /// letter anywhere (`App3D 2`) was taken for base 36.
    @Test func base36NumberingIsReadWhereverItIs() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        func history(_ names: [String]) -> [(name: String, attributes: [String])] {
            names.enumerated().map { index, name in (name, (0...index).map { "a\($0)" }) }
        }
        // An unnumbered first version.
        let based = try xcodeModel(in: folder.appendingPathComponent("b1"), versions: history(["DataModel", "DataModel 01", "DataModel 02", "DataModel 09", "DataModel 0A", "DataModel 0B"]), current: "DataModel 0B")
        let first = try CLI.run(["import", based.path, "--output", "b1"], in: folder)
        #expect(first.status == 0 && first.stderr.contains("numbered in base 36"), "\(first.stderr)")
        #expect(try folder.read("b1/versions.yaml").contains("versions: [DataModel, DataModel 01, DataModel 02, DataModel 09, DataModel 0A, DataModel 0B]"))
        // A version in progress after the current one.
        let inProgress = try xcodeModel(in: folder.appendingPathComponent("b2"), versions: history(["DataModel 01", "DataModel 02", "DataModel 09", "DataModel 0A", "DataModel 0B"]), current: "DataModel 0A")
        let second = try CLI.run(["import", inProgress.path, "--output", "b2"], in: folder)
        #expect(second.status == 0 && second.stderr.contains("'DataModel 0B' sorts after it"), "\(second.stderr)")
        #expect(try folder.read("b2/versions.yaml").contains("versions: [DataModel 01, DataModel 02, DataModel 09, DataModel 0B, DataModel 0A]"))
        // One version joining a folder's history.
        let joined = try xcodeModel(in: folder.appendingPathComponent("b3"), versions: history(["DataModel 01", "DataModel 02", "DataModel 09", "DataModel 0A"]), current: "DataModel 09")
        let added = joined.appendingPathComponent("DataModel 0A.xcdatamodel"), aside = folder.appendingPathComponent("DataModel 0A.xcdatamodel")
        try FileManager.default.moveItem(at: added, to: aside)
        #expect(try CLI.run(["import", joined.path, "--output", "b3"], in: folder).status == 0)
        try FileManager.default.moveItem(at: aside, to: added)
        let one = try CLI.run(["import", added.path, "--output", "b3"], in: folder)
        #expect(one.status == 0, "\(one.stderr)")
        let order = try folder.read("b3/versions.yaml")
        #expect(order.contains("[DataModel 01, DataModel 02, DataModel 09, DataModel 0A]") || order.contains("  - DataModel 01\n  - DataModel 02\n  - DataModel 09\n  - DataModel 0A\n"), "\(order)")
        // A digit before a letter in the model's own name is no base-36 code.
        let plain = try xcodeModel(in: folder.appendingPathComponent("b4"), versions: history(["App3D 2", "App3D 3", "App3D 9", "App3D 10"]), current: "App3D 10")
        let fourth = try CLI.run(["import", plain.path, "--output", "b4"], in: folder)
        #expect(fourth.status == 0 && !fourth.stderr.contains("warning"), "\(fourth.stderr)")
        #expect(try folder.read("b4/versions.yaml").contains("versions: [App3D 2, App3D 3, App3D 9, App3D 10]"))
    }
}

extension ModelHistoryProbeFindingsTests {
    /// `mapc import M.xcdatamodel --output s` crashed (signal 4): Foundation's
    /// `deletingLastPathComponent` traps on Linux for a path of one character, which the check
    /// for a file in the way of the folder asked. Folders of one character are made, by every
    /// command that makes one.
    @Test func aFolderNamedByOneCharacterIsMade() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try xcodeModel(in: folder, versions: [("M", ["a"]), ("M 2", ["a", "b"])], current: "M 2")
        let imported = try CLI.run(["import", model.path, "--output", "s"], in: folder)
        #expect(imported.status == 0 && folder.exists("s/versions.yaml"), "\(imported.stderr)")
        let schemas = try CLI.run(["editor-schemas", "--output", "e"], in: folder)
        #expect(schemas.status == 0 && !schemas.stderr.contains("crashed"), "\(schemas.stderr)")
        let inferred = try CLI.run(["infer", "--schemas", "s", "--from", "M", "--to", "M 2", "--output", "m/x.yaml"], in: folder)
        #expect(inferred.status == 0 && !inferred.stderr.contains("crashed"), "\(inferred.stderr)")
    }
}

/// Findings of a probe of every command's path arguments in unusual shapes.
@Suite("Path arguments", .serialized)
struct PathArgumentTests {
    /// A quoted `~` (`mapc run '~/t.db'`, a folder named `~` here) was taken for the home folder:
    /// Foundation's `URL(fileURLWithPath:)` expands it on Linux, so `run` migrated a store of the
    /// home folder, exit 0, and `--output '~/o.db'` wrote there. A path is what its text says.
    @Test func aTildeInAPathIsAFolderOfThatName() throws {
        let folder = try CLI.project(versions: [("v1", "  Tag:\n    attributes:\n      name: string?\n"), ("v2", "  Tag:\n    attributes:\n      name: string?\n      note: string?\n")])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("~"), withIntermediateDirectories: true)
        try folder.write(#"{"version": "v1", "objects": {"Tag": [{"id": "t", "name": "a"}]}}"#, to: "d.json")
        #expect(try CLI.run(["load", "d.json", "~/t.db"], in: folder).status == 0)
        #expect(try CLI.run(["load", "d.json", "s.db"], in: folder).status == 0)
        let status = try CLI.run(["status", "~/t.db"], in: folder)
        #expect(status.status == 0 && status.stdout.contains("v1"), "\(status.stdout)\(status.stderr)")
        let run = try CLI.run(["run", "--quiet", "~/t.db"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try CLI.run(["status", "~/t.db"], in: folder).stdout.contains("v2"))
        let output = try CLI.run(["run", "--quiet", "s.db", "--output", "~/o.db"], in: folder)
        #expect(output.status == 0 && folder.exists("~/o.db"), "\(output.stderr)")
    }
}

extension PathArgumentTests {
    /// `import` named the model after the folder's whole name (`Kitchen.xcdatamodeld`) when the
    /// version was given without a folder part from inside the bundle, and `import .` inside a
    /// version's folder took `Kitchen.xcdatamodel` for the version's name. A path is read whole.
    @Test func aModelGivenFromInsideItIsNamedAsFromOutside() throws {
        let folder = try CLI.emptyProject()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = folder.appendingPathComponent("Kitchen.xcdatamodeld")
        try FileManager.default.copyItem(at: ImportCommandTests.fixtures.appendingPathComponent("Kitchen.xcdatamodeld"), to: bundle)
        let inside = try CLI.run(["import", "Kitchen 2.xcdatamodel", "--output", "../a"], in: bundle)
        #expect(inside.status == 0, "\(inside.stderr)")
        let schema = try folder.read("a/Kitchen 2.yaml")
        #expect(schema.contains("model: Kitchen\n"), "\(schema.prefix(300))")
        let dot = try CLI.run(["import", ".", "--output", "../../b"], in: bundle.appendingPathComponent("Kitchen 2.xcdatamodel"))
        #expect(dot.status == 0 && folder.exists("b/Kitchen 2.yaml"), "\(dot.stderr)")
        #expect(try folder.read("b/Kitchen 2.yaml").contains("model: Kitchen\n"))
    }
}

extension PathArgumentTests {
    /// An empty path is the working folder to Foundation: `install --prefix ''` installed into
    /// `./bin` and `./lib`, and `test --record --expected ''` wrote the expected files here. An
    /// option that names a path is refused an empty one, as a usage error, before anything runs.
    @Test func anEmptyPathIsAUsageError() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        for arguments in [["install", "--prefix", ""], ["install", "--prefix="], ["test", "--record", "--expected", ""], ["dump", "x.db", "-o", ""], ["check", "--schemas", ""]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 64 && run.stderr.contains("names no path"), "\(arguments): \(run.stderr)")
        }
        #expect(!folder.exists("bin") && !folder.exists("lib"))
        // After `--`, an empty argument is an argument (a store's name, refused as such).
        #expect(try CLI.run(["status", "--", ""], in: folder).stderr.contains("names no path") == false)
    }
}

extension PathArgumentTests {
    /// A file of the working folder named like a version took the version's place: with a copy of
    /// v3's schema saved as `v1`, `init --schema v1` made a v3 store, exit 0. A name that is both
    /// a file here and a version of the schemas folder is refused, saying how to name either.
    @Test func aNameThatIsBothAFileAndAVersionIsAsked() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write(try folder.read("schemas/v3.yaml"), to: "v1")
        let ambiguous = try CLI.run(["init", "--schema", "v1", "amb.db"], in: folder)
        #expect(ambiguous.status != 0 && ambiguous.stderr.contains("names both the file ./v1 and version v1") && !folder.exists("amb.db"), "\(ambiguous.stderr)")
        #expect(try CLI.run(["hash", "v1"], in: folder).stderr.contains("names both"))
        let file = try CLI.run(["init", "--schema", "./v1", "file.db"], in: folder)
        #expect(file.status == 0 && file.stdout.contains("v3"), "\(file.stdout)\(file.stderr)")
        let version = try CLI.run(["init", "--schema", "v2", "v2.db"], in: folder)
        #expect(version.status == 0 && version.stdout.contains("v2"), "\(version.stdout)\(version.stderr)")
    }
}

extension PathArgumentTests {
    /// A store's name with a trailing slash (`n.db/`) was migrated in place by `run` and read by
    /// `status`, "no such store" to `plan` and `dump`, and `init new.db/` said "No such file or
    /// directory". A name ending in '/' names a folder: every command says so, the same way.
    @Test func aStoreNameEndingInASlashIsSaidToNameAFolder() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try CLI.run(["init", "--schema", "v1", "n.db"], in: folder).status == 0)
        let before = try Data(contentsOf: folder.appendingPathComponent("n.db"))
        for arguments in [["run", "--quiet", "n.db/"], ["run", "--dry-run", "n.db/"], ["status", "n.db/"], ["plan", "n.db/"], ["dump", "n.db/"]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 2 && run.stderr.contains("n.db/ ends with '/'") && run.stderr.contains("write n.db"), "\(arguments): \(run.status) \(run.stderr)")
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("n.db")) == before)
        let new = try CLI.run(["init", "--schema", "v1", "new.db/"], in: folder)
        #expect(new.status == 2 && new.stderr.contains("new.db/ ends with '/'") && new.stderr.contains("write new.db"), "\(new.stderr)")
        #expect(!folder.exists("new.db"))
        let output = try CLI.run(["run", "n.db", "--output", "o.db/"], in: folder)
        #expect(output.status == 2 && output.stderr.contains("write o.db"), "\(output.stderr)")
        #expect(!folder.exists("o.db"))
        try folder.write(#"{"version": "v1", "objects": {}}"#, to: "d.json")
        let load = try CLI.run(["load", "d.json", "loaded.db/"], in: folder)
        #expect(load.status == 2 && load.stderr.contains("write loaded.db"), "\(load.stderr)")
    }
}

extension PathArgumentTests {
    /// `test --expected FILE` failed every case ("nothing to compare with: write FILE/notes.json"),
    /// and with `--record` each case's write failed; `--fixtures FILE` said there was no such
    /// folder. A file named as one of test's folders is refused before any case runs, as such.
    @Test func aFileNamedAsTestsFolderIsRefusedAsAFile() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("fixtures/notes-v1.sqlite"), to: folder.appendingPathComponent("fixtures/v1.sqlite"))
        try folder.write("not a folder\n", to: "results")
        for arguments in [["test", "--expected", "results"], ["test", "--record", "--expected", "results"], ["test", "--fixtures", "results"]] {
            let run = try CLI.run(arguments, in: folder)
            #expect(run.status == 2 && run.stderr.contains("results is a file, not a folder") && !run.stdout.contains("FAIL"), "\(arguments): \(run.stdout)\(run.stderr)")
        }
        #expect(try folder.read("results") == "not a folder\n")
    }
}

extension PathArgumentTests {
    /// `init` and `load` wrote a store's name raw in "created …" (an escape sequence in the name
    /// recoloured the terminal), where every other message shows it as `<U+001B>`; so did `test`'s
    /// PASS and FAIL lines for a fixture's name. Text for people shows control characters.
    @Test func controlCharactersOfANameAreShownInEveryLineForPeople() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = "a\u{1B}[31mb.db"
        let initialized = try CLI.run(["init", "--schema", "v1", name], in: folder)
        #expect(initialized.status == 0 && initialized.stdout.contains("created a<U+001B>[31mb.db") && !initialized.stdout.contains("\u{1B}"), "\(initialized.stdout)")
        try folder.write(#"{"version": "v1", "objects": {}}"#, to: "d.json")
        let loaded = try CLI.run(["load", "d.json", "c\u{1B}d.db"], in: folder)
        #expect(loaded.status == 0 && loaded.stdout.contains("created c<U+001B>d.db") && !loaded.stdout.contains("\u{1B}"), "\(loaded.stdout)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.appendingPathComponent(name), to: folder.appendingPathComponent("fixtures/e\u{1B}f.sqlite"))
        let test = try CLI.run(["test"], in: folder)
        #expect(test.status == 1 && test.stdout.contains("FAIL e<U+001B>f") && !test.stdout.contains("\u{1B}"), "\(test.stdout)")
    }
}

extension PathArgumentTests {
    /// A store whose name is 246 to 255 bytes long could be made but not migrated: its lock's
    /// name (`NAME.mapc-lock`) passed the system's 255 ("File name too long"). A lock for such a
    /// name is named, as the temporary files are, by a cut of it and a digest of the whole.
    @Test func aStoreWithALongNameIsMigrated() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        for length in [245, 252] {
            // `.tmp` in the name, where the run looks for what a killed run left: not the lock.
            let name = "export.tmp." + String(repeating: "n", count: length - 11) + ".db"
            #expect(try CLI.run(["init", "--schema", "v1", name], in: folder).status == 0)
            let run = try CLI.run(["run", "--quiet", "--to", "v2", name], in: folder)
            #expect(run.status == 0, "\(length): \(run.stderr)")
            #expect(try CLI.run(["status", name], in: folder).stdout.contains("v2"), "\(length)")
        }
        // Two long names sharing their first 180 bytes have locks of their own, which their runs keep.
        let names = (try FileManager.default.contentsOfDirectory(atPath: folder.path)).filter { $0.hasSuffix(".mapc-lock") && $0.hasPrefix(".export") }
        #expect(names.count == 2, "\(names)")
        let status = try CLI.run(["status", "export.tmp." + String(repeating: "n", count: 241) + ".db"], in: folder)
        #expect(!status.stdout.contains("temporary") && !status.stderr.contains("temporary"), "\(status.stdout)\(status.stderr)")
    }
}

extension PathArgumentTests {
    /// `infer --from -1` (a version named `-1`) said only "Missing value for '--from'": the value
    /// was read as an option. Said, with the way to write it, as mapc's own suggestions write it.
    @Test func aValueStartingWithADashIsToldToBeWrittenWithEquals() throws {
        let folder = try CLI.project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["infer", "--from", "-1", "--to", "v2"], in: folder)
        #expect(run.status == 64 && run.stderr.contains("help: '-1' was read as an option; a value that starts with '-' is written with '=': --from=-1"), "\(run.stderr)")
    }
}
