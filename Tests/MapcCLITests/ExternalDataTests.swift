import Foundation
@testable import MapcStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Core Data keeps large values of binary attributes that allow external storage in files in
/// `.<name>_SUPPORT/_EXTERNAL_DATA/` beside the store; the column holds a reference. A store
/// written under another name must take them along, or its references lead nowhere.
@Suite("Core Data's external values", .serialized)
struct ExternalDataTests {
    /// A Core Data store `Photos.sqlite` at v1 with one photo, and two external value files.
    private func project() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mapc-external-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("schemas"), withIntermediateDirectories: true)
        try folder.write("versions: [v1, v2]\n", to: "schemas/versions.yaml")
        try folder.write("""
            model: Photos
            version: v1
            entities:
              Photo:
                attributes:
                  title: { type: string }
                  image: { type: binary, optional: true, externalStorage: true }

            """, to: "schemas/v1.yaml")
        try folder.write("""
            model: Photos
            version: v2
            entities:
              Photo:
                attributes:
                  title: { type: string }
                  image: { type: binary, optional: true, externalStorage: true }
                  caption: { type: string, optional: true }

            """, to: "schemas/v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Photo": [{"id": "p1", "title": "Sea", "image": "AjVDNEU3QTg2LTFGMUItNEM1NS05RTNBLTJCMUE3RDlDMEUxMQA="}]}}"#, to: "photos.json")
        let loaded = try CLI.run(["load", "--layout", "core-data", "photos.json", "Photos.sqlite"], in: folder)
        #expect(loaded.status == 0, "\(loaded.stderr)")
        let values = folder.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: values, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 2_500).write(to: values.appendingPathComponent("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11"))
        try Data("second".utf8).write(to: values.appendingPathComponent("0B7C2D43-9A7E-4F4C-8E0D-6F2B3C1A5D22"))
        return folder
    }

    @Test func theSupportFolderIsNamedAfterTheStoreWithoutItsExtension() {
        #expect(CoreDataExternalData(store: "/a/b/Photos.sqlite").supportFolder == "/a/b/.Photos_SUPPORT")
        #expect(CoreDataExternalData(store: "/a/Moody 3.moody").dataFolder == "/a/.Moody 3_SUPPORT/_EXTERNAL_DATA")
        #expect(CoreDataExternalData(store: "/a/store").supportFolder == "/a/.store_SUPPORT")
    }

    /// A step that turns an attribute's external storage off reads each value out of Core Data's
    /// marker (inline) or its file; turned on again, the bytes get the inline marker. Both paths,
    /// compiled and interpreted, give the same (the compiled path leaves such a value to the
    /// interpreter). It copied the marker and the file's name as the value.
    @Test(arguments: [false, true])
    func turningExternalStorageOffReadsTheValuesOutAndOnMarksThem(interpret: Bool) throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("Photos.sqlite"))
        for (version, external) in [("v2", false), ("v3", true)] {
            try folder.write("model: Photos\nversion: \(version)\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n"
                             + "      image: { type: binary, optional: true, externalStorage: \(external) }\n", to: "schemas/\(version).yaml")
        }
        try folder.write("versions: [v1, v2, v3]\n", to: "schemas/versions.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Photo": [{"id": "a", "title": "inline", "image": "AWhlbGxv"}, {"id": "b", "title": "file", "image": "AjVDNEU3QTg2LTFGMUItNEM1NS05RTNBLTJCMUE3RDlDMEUxMQA="}, {"id": "c", "title": "none"}]}}"#, to: "photos.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "photos.json", "Photos.sqlite"], in: folder).status == 0)
        let options = interpret ? ["--interpret"] : []
        let off = try CLI.run(["run", "--quiet", "--to", "v2"] + options + ["Photos.sqlite"], in: folder)
        #expect(off.status == 0, "\(off.stderr)")
        let file = String(repeating: "07", count: 2_500)
        #expect(try hexImages(folder) == ["68656C6C6F", file, "NULL"])
        let on = try CLI.run(["run", "--quiet", "--to", "v3"] + options + ["Photos.sqlite"], in: folder)
        #expect(on.status == 0, "\(on.stderr)")
        #expect(try hexImages(folder) == ["0168656C6C6F", "01" + file, "NULL"])
    }

    /// The same through a mapping file of type copy (which the compiled path built its own way and
    /// copied as stored), and across formats: bytes from mapc's format into a Core Data attribute
    /// that allows external storage get the marker, and a Core Data store's values into mapc's
    /// format (its files' loss accepted) are the bytes, out of the marker or the file.
    @Test(arguments: [false, true])
    func aCopyMappingAndAChangeOfFormatConvertToo(interpret: Bool) throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("Photos.sqlite"))
        try folder.write("model: Photos\nversion: v2\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n      image: { type: binary, optional: true }\n", to: "schemas/v2.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("source: v1\ndestination: v2\nentityMappings:\n  - { name: PhotoToPhoto, source: Photo, destination: Photo, type: copy }\n", to: "mappings/mapping_v1_to_v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Photo": [{"id": "a", "title": "inline", "image": "AWhlbGxv"}, {"id": "b", "title": "file", "image": "AjVDNEU3QTg2LTFGMUItNEM1NS05RTNBLTJCMUE3RDlDMEUxMQA="}]}}"#, to: "photos.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "photos.json", "Photos.sqlite"], in: folder).status == 0)
        let options = interpret ? ["--interpret"] : []
        let file = String(repeating: "07", count: 2_500)
        let copied = try CLI.run(["run", "--quiet", "--to", "v2", "--output", "copied.sqlite"] + options + ["Photos.sqlite"], in: folder)
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(try hexImages(folder, "copied.sqlite") == ["68656C6C6F", file])
        // Into mapc's format (the values read out of their files).
        let mapc = try CLI.run(["run", "--quiet", "--to", "v2", "--layout", "mapc", "--output", "plain.db"] + options + ["Photos.sqlite"], in: folder)
        #expect(mapc.status == 0, "\(mapc.stderr)")
        let plain = try CLI.run(["dump", "plain.db"], in: folder)
        #expect(plain.stdout.contains("\"image\": \"aGVsbG8=\""), "\(plain.stdout)")
        // And back into a Core Data store whose attribute allows external storage: marked.
        try folder.write("model: Photos\nversion: v3\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n      image: { type: binary, optional: true, externalStorage: true }\n", to: "schemas/v3.yaml")
        try folder.write("versions: [v1, v2, v3]\n", to: "schemas/versions.yaml")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("mappings"))
        let back = try CLI.run(["run", "--quiet", "--to", "v3", "--layout", "core-data", "--output", "back.sqlite"] + options + ["plain.db"], in: folder)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try hexImages(folder, "back.sqlite") == ["0168656C6C6F", "01" + file])
    }

    /// `mapc test` takes a fixture's external values along with its copy: a step that reads them
    /// out of their files found none beside the copy.
    @Test func aFixturesExternalValuesGoWithItsCopy() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("Photos.sqlite"))
        try folder.write("model: Photos\nversion: v2\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n      image: { type: binary, optional: true }\n", to: "schemas/v2.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fixtures"), withIntermediateDirectories: true)
        try folder.write(#"{"version": "v1", "objects": {"Photo": [{"id": "b", "title": "file", "image": "AjVDNEU3QTg2LTFGMUItNEM1NS05RTNBLTJCMUE3RDlDMEUxMQA="}]}}"#, to: "photos.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "photos.json", "fixtures/photos-v1.sqlite"], in: folder).status == 0)
        try FileManager.default.moveItem(at: folder.appendingPathComponent(".Photos_SUPPORT"), to: folder.appendingPathComponent("fixtures/.photos-v1_SUPPORT"))
        let record = try CLI.run(["test", "--record"], in: folder)
        #expect(record.status == 0, "\(record.stdout)\(record.stderr)")
        let expected = try folder.read("expected/photos-v1.json")
        #expect(expected.contains(Data(repeating: 7, count: 2_500).base64EncodedString()), "\(expected.prefix(300))")
        let test = try CLI.run(["test"], in: folder)
        #expect(test.status == 0 && test.stdout.contains("PASS photos-v1"), "\(test.stdout)\(test.stderr)")
        let status = try CLI.run(["status", "fixtures/photos-v1.sqlite"], in: folder)
        #expect(status.stdout.contains("v1"), "the fixture is never written: \(status.stdout)")
    }

    /// A value in neither of Core Data's forms is refused, naming the object: never guessed at.
    @Test func aValueInNoFormCoreDataWritesIsRefused() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("Photos.sqlite"))
        try folder.write("model: Photos\nversion: v2\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n      image: { type: binary, optional: true }\n", to: "schemas/v2.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Photo": [{"id": "a", "title": "odd", "image": "BW9kZA=="}]}}"#, to: "photos.json")
        // `load` refuses it (below): the store is made with a valid value, then damaged.
        let refused = try CLI.run(["load", "--layout", "core-data", "photos.json", "Photos.sqlite"], in: folder)
        #expect(refused.status == 1 && refused.stderr.contains("Photo 'a', key 'image': an attribute that allows external storage keeps Core Data's form") && refused.stderr.contains("its first byte is 05")
                && refused.stderr.contains(#"For a data file holding the bytes alone, say so at its top: "layout": "mapc""#), "\(refused.stderr)")
        try folder.write(#"{"version": "v1", "objects": {"Photo": [{"id": "a", "title": "odd", "image": "AW9kZA=="}]}}"#, to: "photos.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "photos.json", "Photos.sqlite"], in: folder).status == 0)
        try sqlite(folder, "Photos.sqlite", "UPDATE ZPHOTO SET ZIMAGE = x'056f6464'")
        let original = try Data(contentsOf: folder.appendingPathComponent("Photos.sqlite"))
        let run = try CLI.run(["run", "--quiet", "Photos.sqlite"], in: folder)
        #expect(run.status == 3 && run.stderr.contains("Photo 'Photo/p1', property 'image': the value's first byte is 05, neither Core Data's marker"), "\(run.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("Photos.sqlite")) == original)
    }

    /// An expression other than a plain copy reads the bytes the app reads, out of the marker or
    /// the file (it read the marker and the file's name), and what it gives an attribute that
    /// allows external storage is stored marked; `eval` over the store shows the bytes too. A
    /// missing file is named, never read as a value.
    @Test func anExpressionReadsTheFilesBytesAndAMissingFileIsNamed() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try folder.write("model: Photos\nversion: v2\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n      image: { type: binary, optional: true, externalStorage: true }\n"
                         + "      copy: { type: binary, optional: true, externalStorage: true }\n      plain: { type: binary, optional: true }\n", to: "schemas/v2.yaml")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try folder.write("""
            source: v1
            destination: v2
            entityMappings:
              - name: PhotoToPhoto
                source: Photo
                destination: Photo
                attributes:
                  title: $source.title
                  image: $source.image
                  copy: "TERNARY($source.title == 'none', nil, $source.image)"
                  plain: "TERNARY($source.title == 'none', nil, $source.image)"

            """, to: "mappings/mapping_v1_to_v2.yaml")
        let eval = try CLI.run(["eval", "--store", "Photos.sqlite", "--entity", "Photo", "image"], in: folder)
        #expect(eval.status == 0 && eval.stdout.contains(Data(repeating: 7, count: 2_500).base64EncodedString().prefix(40)), "\(eval.stdout)\(eval.stderr)")
        for options in [[], ["--interpret"]] {
            let run = try CLI.run(["run", "--quiet", "--to", "v2", "--output", "out\(options.count).sqlite"] + options + ["Photos.sqlite"], in: folder)
            #expect(run.status == 0, "\(run.stderr)")
            let store = "out\(options.count).sqlite"
            #expect(try sqliteOutput(folder, store, "SELECT hex(ZIMAGE) FROM ZPHOTO") == "02" + "5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11".utf8.map { String(format: "%02X", $0) }.joined() + "00", "a plain copy keeps the reference")
            #expect(try sqliteOutput(folder, store, "SELECT hex(ZCOPY) FROM ZPHOTO") == "01" + String(repeating: "07", count: 2_500))
            #expect(try sqliteOutput(folder, store, "SELECT hex(ZPLAIN) FROM ZPHOTO") == String(repeating: "07", count: 2_500))
        }
        try FileManager.default.removeItem(at: folder.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA/5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11"))
        let missing = try CLI.run(["run", "--quiet", "--to", "v2", "Photos.sqlite"], in: folder)
        #expect(missing.status == 3 && missing.stderr.contains("mapping_v1_to_v2.yaml:10:14: error: Photo 'Photo/p1': the value is kept in Core Data's external file 5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11, which is not in"), "\(missing.stderr)")
        #expect(try CLI.run(["status", "Photos.sqlite"], in: folder).stdout.contains("v1"))
    }

    /// A transformable attribute holds bytes too: a value copied between a binary attribute that
    /// allows external storage and a transformable one (by a plain copy or an inferred change of
    /// type) leaves or takes the marker as a binary one does (the marker and the file's name were
    /// copied as the value, and bytes went in unmarked). A binary default of such an attribute is
    /// stored marked too (it was written bare, which `load` refused).
    @Test(arguments: [false, true])
    func transformablesAndDefaultsTakeTheFormToo(interpret: Bool) throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("Photos.sqlite"))
        try folder.write("versions: [v1, v2, v3]\n", to: "schemas/versions.yaml")
        try folder.write("model: Photos\nversion: v2\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n      image: { type: transformable, optional: true }\n", to: "schemas/v2.yaml")
        try folder.write("model: Photos\nversion: v3\nentities:\n  Photo:\n    attributes:\n      title: { type: string }\n      image: { type: binary, optional: true, externalStorage: true }\n"
                         + "      added: { type: binary, optional: true, externalStorage: true, default: \"aGk=\" }\n", to: "schemas/v3.yaml")
        try folder.write(#"{"version": "v1", "objects": {"Photo": [{"id": "a", "title": "inline", "image": "AWhlbGxv"}, {"id": "b", "title": "file", "image": "AjVDNEU3QTg2LTFGMUItNEM1NS05RTNBLTJCMUE3RDlDMEUxMQA="}]}}"#, to: "photos.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "photos.json", "Photos.sqlite"], in: folder).status == 0)
        let options = interpret ? ["--interpret"] : []
        let file = String(repeating: "07", count: 2_500)
        let toTransformable = try CLI.run(["run", "--quiet", "--to", "v2", "--every-version"] + options + ["Photos.sqlite"], in: folder)
        #expect(toTransformable.status == 0, "\(toTransformable.stderr)")
        #expect(try hexImages(folder) == ["68656C6C6F", file])
        let back = try CLI.run(["run", "--quiet", "--to", "v3"] + options + ["Photos.sqlite"], in: folder)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try hexImages(folder) == ["0168656C6C6F", "01" + file])
        #expect(try sqliteOutput(folder, "Photos.sqlite", "SELECT hex(ZADDED) FROM ZPHOTO ORDER BY Z_PK") == "016869\n016869")
        // `load` gives the default the same form.
        try folder.write(#"{"version": "v3", "objects": {"Photo": [{"id": "c", "title": "new"}]}}"#, to: "v3.json")
        #expect(try CLI.run(["load", "--layout", "core-data", "v3.json", "New.sqlite"], in: folder).status == 0)
        #expect(try sqliteOutput(folder, "New.sqlite", "SELECT hex(ZADDED) FROM ZPHOTO") == "016869")
    }

    /// A value whose external file is missing (a backup taken without the hidden folder) is said
    /// by a run that copies it as it is (it went through without a word, the reference left dangling).
    @Test func aMissingExternalFileIsSaid() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA/5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11"))
        let run = try CLI.run(["run", "--dry-run", "Photos.sqlite"], in: folder)
        #expect(run.status == 0 && run.stderr.contains("Core Data's external files missing from") && run.stderr.contains("named by 1 value (")
                && run.stderr.contains("Photo 'Photo/p1', image: file 5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11"), "\(run.stderr)")
    }

    /// Each photo's image as hex, in key order, by the sqlite3 shell.
    private func hexImages(_ folder: URL, _ store: String = "Photos.sqlite") throws -> [String] {
        try sqliteOutput(folder, store, "SELECT CASE WHEN ZIMAGE IS NULL THEN 'NULL' ELSE hex(ZIMAGE) END FROM ZPHOTO ORDER BY Z_PK").split(separator: "\n").map(String.init)
    }

    @Test func statusCountsThem() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = try CLI.run(["status", "Photos.sqlite"], in: folder)
        #expect(text.status == 0 && text.stdout.contains("external data 2 files (2.5 kB) in .Photos_SUPPORT/_EXTERNAL_DATA"), "\(text.stdout)")
        let json = try CLI.run(["status", "--format", "json", "Photos.sqlite"], in: folder)
        #expect(json.stdout.contains(#""externalData": "2 files (2.5 kB) in .Photos_SUPPORT/_EXTERNAL_DATA""#), "\(json.stdout)")
    }

    @Test func aDumpSaysItHoldsReferences() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let dump = try CLI.run(["dump", "Photos.sqlite"], in: folder)
        #expect(dump.status == 0 && dump.stdout.contains("\"title\": \"Sea\""), "\(dump.stderr)")
        #expect(dump.stderr.contains("note: Photos.sqlite keeps large binary values in files beside it (2 files (2.5 kB) in .Photos_SUPPORT/_EXTERNAL_DATA)"), "\(dump.stderr)")
    }

    @Test func anOutputElsewhereTakesACopyOfThem() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("out"), withIntermediateDirectories: true)
        let run = try CLI.run(["run", "--output", "out/Migrated.sqlite", "Photos.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("note: copied the store's external values (2 files (2.5 kB) in .Photos_SUPPORT/_EXTERNAL_DATA) to .Migrated_SUPPORT beside the new store"), "\(run.stderr)")
        let copied = folder.appendingPathComponent("out/.Migrated_SUPPORT/_EXTERNAL_DATA")
        #expect(try Data(contentsOf: copied.appendingPathComponent("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11")) == Data(repeating: 7, count: 2_500))
        #expect(try Data(contentsOf: copied.appendingPathComponent("0B7C2D43-9A7E-4F4C-8E0D-6F2B3C1A5D22")) == Data("second".utf8))
        // The original keeps its own, and nothing temporary is left in either folder.
        #expect(folder.exists(".Photos_SUPPORT/_EXTERNAL_DATA/5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11"))
        for place in [folder, folder.appendingPathComponent("out")] {
            let left = try FileManager.default.contentsOfDirectory(atPath: place.path).filter { $0.contains(".tmp") }
            #expect(left.isEmpty, "\(left)")
        }
        #expect(try CLI.run(["status", "out/Migrated.sqlite"], in: folder).stdout.contains("external data 2 files"))

        // A store already at the version asked for, copied to an output, takes them too.
        let copy = try CLI.run(["run", "--to", "v1", "--output", "Copy.sqlite", "Photos.sqlite"], in: folder)
        #expect(copy.status == 0 && copy.stderr.contains("to .Copy_SUPPORT beside the new store"), "\(copy.stderr)")
        #expect(folder.exists(".Copy_SUPPORT/_EXTERNAL_DATA/0B7C2D43-9A7E-4F4C-8E0D-6F2B3C1A5D22"))
    }

    @Test func anOutputWhoseSupportFolderIsTakenIsRefusedBeforeAnythingIsWritten() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(".Other_SUPPORT/_EXTERNAL_DATA"), withIntermediateDirectories: true)
        try Data("someone else's".utf8).write(to: folder.appendingPathComponent(".Other_SUPPORT/_EXTERNAL_DATA/X"))
        let run = try CLI.run(["run", "--output", "Other.sqlite", "Photos.sqlite"], in: folder)
        #expect(run.status != 0 && run.stderr.contains(".Other_SUPPORT already exists"), "\(run.stderr)")
        #expect(!folder.exists("Other.sqlite"))
        #expect(try Data(contentsOf: folder.appendingPathComponent(".Other_SUPPORT/_EXTERNAL_DATA/X")) == Data("someone else's".utf8))
    }

    /// A run killed after the copy was put in place and before the new store was leaves the copy
    /// alone: the next run replaces it rather than refusing the folder as another store's.
    @Test func aKilledRunsCopyIsReplacedByTheNextRun() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(".Migrated_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try Data("second".utf8).write(to: copy.appendingPathComponent("0B7C2D43-9A7E-4F4C-8E0D-6F2B3C1A5D22"))
        // Without the run's mark, the folder is taken for another store's and kept.
        let refused = try CLI.run(["run", "--output", "Migrated.sqlite", "Photos.sqlite"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains(".Migrated_SUPPORT already exists"), "\(refused.stderr)")
        try Data().write(to: folder.appendingPathComponent(".Migrated_SUPPORT/.mapc-copy-unfinished"))
        let run = try CLI.run(["run", "--output", "Migrated.sqlite", "Photos.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy.path).count == 2)
        #expect(!folder.exists(".Migrated_SUPPORT/.mapc-copy-unfinished"), "a finished copy has no mark")
    }

    /// Two names with one stem share a support folder: `--output Photos.db` beside `Photos.sqlite`
    /// would have the new store's copy replace (or be) the store's own.
    @Test func anOutputSharingTheStoresSupportFolderIsRefused() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "--output", "Photos.db", "Photos.sqlite"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("would share .Photos_SUPPORT"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA").path).count == 2)
        #expect(!folder.exists("Photos.db"))
    }

    /// Links in the support folder are followed (the folder itself, `_EXTERNAL_DATA`, a file),
    /// and what is neither a file nor a folder (a FIFO would block the copy) is refused up front.
    @Test func linksAreFollowedAndAFIFOIsRefused() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The support folder moved elsewhere and linked, with its values behind another link.
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere.appendingPathComponent("support"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA"), to: elsewhere.appendingPathComponent("values"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent(".Photos_SUPPORT"))
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent(".Photos_SUPPORT").path, withDestinationPath: elsewhere.appendingPathComponent("support").path)
        try FileManager.default.createSymbolicLink(atPath: elsewhere.appendingPathComponent("support/_EXTERNAL_DATA").path, withDestinationPath: "../values")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("out"), withIntermediateDirectories: true)
        let copied = try CLI.run(["run", "--output", "out/Migrated.sqlite", "Photos.sqlite"], in: folder)
        #expect(copied.status == 0 && copied.stderr.contains("copied the store's external values (2 files"), "\(copied.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out/.Migrated_SUPPORT/_EXTERNAL_DATA").path).count == 2)
        #expect(mkfifo(elsewhere.appendingPathComponent("values/pipe").path, 0o644) == 0)
        let refused = try CLI.run(["run", "--output", "Other.sqlite", "Photos.sqlite"], in: folder)
        #expect(refused.status == 2 && refused.stderr.contains("is neither a file nor a folder"), "\(refused.stderr)")
        #expect(!folder.exists("Other.sqlite") && !folder.exists(".Other_SUPPORT"))
    }

    /// A conversion to mapc's format keeps each value's bytes, read out of its file (by a plain
    /// copy, as by an expression or a policy), so it loses nothing and takes no folder along.
    @Test func aConversionToMapcsFormatKeepsTheBytes() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let converted = try CLI.run(["run", "--layout", "mapc", "--output", "converted.db", "Photos.sqlite"], in: folder)
        #expect(converted.status == 0 && !converted.stderr.contains("external values"), "\(converted.stderr)")
        let dump = try CLI.run(["dump", "converted.db"], in: folder)
        #expect(dump.stdout.contains("\"image\": \"\(Data(repeating: 7, count: 2_500).base64EncodedString())\""), "\(dump.stdout.prefix(400))")
        #expect(!folder.exists(".converted_SUPPORT"))
        // In place too.
        let inPlace = try CLI.run(["run", "--layout", "mapc", "Photos.sqlite"], in: folder)
        #expect(inPlace.status == 0, "\(inPlace.stderr)")
        #expect(try CLI.run(["dump", "Photos.sqlite"], in: folder).stdout.contains(Data(repeating: 7, count: 2_500).base64EncodedString()))
    }

    /// A dump says which layout's form its values of such attributes are in, and `load` into the
    /// other layout converts them: `01 68 65 6c 6c 6f` of a Core Data store ("hello" kept inline)
    /// went into a mapc store with its marker as a first byte, and a mapc store's bytes `01 68 69`
    /// into a Core Data store as the marked "hi", their first byte lost; both with exit 0. A
    /// reference to a file of the store's external data, which the data file does not carry, is
    /// refused, naming the object and the way to convert the store itself.
    @Test func aDumpLoadedIntoTheOtherLayoutKeepsTheBytes() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try sqlite(folder, "Photos.sqlite", "UPDATE ZPHOTO SET ZIMAGE = X'0168656C6C6F'")
        let dump = try CLI.run(["dump", "--output", "core.json", "Photos.sqlite"], in: folder)
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(try folder.read("core.json").contains(#""layout": "core-data""#))
        #expect(try CLI.run(["load", "--layout", "mapc", "core.json", "m.db"], in: folder).status == 0)
        #expect(try sqliteOutput(folder, "m.db", "SELECT hex(image) FROM Photo") == "68656C6C6F")
        // Back: mapc's bytes 01 68 69 (a value that begins with what reads as a marker).
        try sqlite(folder, "m.db", "UPDATE Photo SET image = X'016869'")
        #expect(try CLI.run(["dump", "--output", "mapc.json", "m.db"], in: folder).status == 0)
        #expect(try folder.read("mapc.json").contains(#""layout": "mapc""#))
        #expect(try CLI.run(["load", "--layout", "core-data", "mapc.json", "c.sqlite"], in: folder).status == 0)
        #expect(try hexImages(folder, "c.sqlite") == ["01016869"])
        // Within one layout the form is kept as it is.
        #expect(try CLI.run(["load", "--layout", "core-data", "core.json", "same.sqlite"], in: folder).status == 0)
        #expect(try hexImages(folder, "same.sqlite") == ["0168656C6C6F"])
        // A file's reference cannot become bytes without the store's files.
        let reference = "02" + Data("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11".utf8).map { String(format: "%02X", $0) }.joined() + "00"
        try sqlite(folder, "Photos.sqlite", "UPDATE ZPHOTO SET ZIMAGE = X'\(reference)'")
        #expect(try CLI.run(["dump", "--output", "referencing.json", "Photos.sqlite"], in: folder).status == 0)
        let refused = try CLI.run(["load", "--layout", "mapc", "referencing.json", "r.db"], in: folder)
        #expect(refused.status == 1 && refused.stderr.contains("Photo 'Photo/p1'") && refused.stderr.contains("5C4E7A86-1F1B-4C55-9E3A-2B1A7D9C0E11")
                && refused.stderr.contains("mapc run --layout mapc"), "\(refused.stderr)")
        #expect(!folder.exists("r.db"))
    }

    /// `run --layout` converts a store already at the version asked for (it said to dump and
    /// load it, which cannot carry a reference to an external file): a step of that version to
    /// itself, in the other layout, with the files read; in place or to an output.
    @Test func aStoreAtItsVersionIsConvertedByARun() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let picture = Data(repeating: 7, count: 2_500).base64EncodedString()
        let copy = try CLI.run(["run", "--layout", "mapc", "--to", "v1", "--output", "c.db", "Photos.sqlite"], in: folder)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("c.db"), to: folder.appendingPathComponent("m.db"))
        #expect(copy.status == 0 && copy.stderr.contains("v1 -> v1"), "\(copy.stdout)\(copy.stderr)")
        #expect(try CLI.run(["status", "c.db"], in: folder).stdout.contains("mapc"))
        #expect(try CLI.run(["dump", "c.db"], in: folder).stdout.contains(picture))
        let dryRun = try CLI.run(["run", "--layout", "mapc", "--to", "v1", "--dry-run", "Photos.sqlite"], in: folder)
        #expect(dryRun.status == 0 && dryRun.stdout.contains("dry run: Photos.sqlite would migrate"), "\(dryRun.stdout)\(dryRun.stderr)")
        let inPlace = try CLI.run(["run", "--quiet", "--layout", "mapc", "--to", "v1", "Photos.sqlite"], in: folder)
        #expect(inPlace.status == 0 && inPlace.stderr.contains("note: the store holds its external values itself now: .Photos_SUPPORT beside it"), "\(inPlace.stderr)")
        #expect(try CLI.run(["dump", "Photos.sqlite"], in: folder).stdout.contains(picture))
        // In a batch too (it reported the store current, unconverted).
        try FileManager.default.copyItem(at: folder.appendingPathComponent("c.db"), to: folder.appendingPathComponent("d.db"))
        let batch = try CLI.run(["run", "--layout", "core-data", "--to", "v1", "c.db", "d.db"], in: folder)
        #expect(batch.status == 0, "\(batch.stdout)\(batch.stderr)")
        // A mapc store's ids go, which is said (they went in silence).
        try FileManager.default.copyItem(at: folder.appendingPathComponent("m.db"), to: folder.appendingPathComponent("e.db"))
        let ids = try CLI.run(["run", "--layout", "core-data", "--to", "v1", "e.db"], in: folder)
        #expect(ids.status == 0 && ids.stderr.contains("note: the objects' ids are not kept in a Core Data store"), "\(ids.stdout)\(ids.stderr)")
        for name in ["c.db", "d.db"] { #expect(try CLI.run(["status", name], in: folder).stdout.contains("Core Data"), "\(name): \(batch.stdout)") }
        // A batch says its stores' notes once each, with the stores (it said none).
        #expect(batch.stderr.contains("note (c.db, d.db): the objects' ids are not kept in a Core Data store"), "\(batch.stderr)")
        // In its own layout it is current: nothing to do.
        let again = try CLI.run(["run", "--layout", "mapc", "--to", "v1", "Photos.sqlite"], in: folder)
        #expect(again.status == 0 && again.stdout.contains("already at v1; nothing to do"), "\(again.stdout)")
        // Once in mapc's format, a later step in place says nothing of a folder it never read.
        let later = try CLI.run(["run", "--layout", "mapc", "--to", "v2", "Photos.sqlite"], in: folder)
        #expect(later.status == 0 && !later.stderr.contains("external values itself"), "\(later.stderr)")
    }

    /// In place, the store keeps its name, so its folder still belongs to it.
    @Test func inPlaceTheFolderStaysAsItIs() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run(["run", "Photos.sqlite"], in: folder)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("external values"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA").path).count == 2)
    }

    /// A store named through a link: its values are found beside the file the link leads to when
    /// there are none beside the link, by status, a run and a conversion alike.
    @Test func aStoreNamedThroughALinkFindsItsValuesBesideItsFile() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("Link.sqlite").path, withDestinationPath: "Photos.sqlite")
        #expect(try CLI.run(["status", "Link.sqlite"], in: folder).stdout.contains("external data 2 files"))
        let converted = try CLI.run(["run", "--layout", "mapc", "--output", "Converted.db", "Link.sqlite"], in: folder)
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(try CLI.run(["dump", "Converted.db"], in: folder).stdout.contains(Data(repeating: 7, count: 2_500).base64EncodedString()))
        let copied = try CLI.run(["run", "--output", "Out.sqlite", "Link.sqlite"], in: folder)
        #expect(copied.status == 0 && folder.exists(".Out_SUPPORT/_EXTERNAL_DATA/0B7C2D43-9A7E-4F4C-8E0D-6F2B3C1A5D22"), "\(copied.stderr)")
    }

    /// A folder that cannot be walked (a link to nothing in it) is not taken for one without
    /// values where they matter: status says so, and a copy beside an output is refused (a
    /// conversion reads only the values' own files).
    @Test func aSupportFolderThatCannotBeWalkedIsSaid() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent(".Photos_SUPPORT/dangling").path, withDestinationPath: "/nonexistent/mapc")
        let status = try CLI.run(["status", "Photos.sqlite"], in: folder)
        #expect(status.stdout.contains("external data in .Photos_SUPPORT, which cannot be counted"), "\(status.stdout)")
        let copied = try CLI.run(["run", "--output", "Out.sqlite", "Photos.sqlite"], in: folder)
        #expect(copied.status == 2 && copied.stderr.contains("dangling"), "\(copied.stderr)")
        #expect(try CLI.run(["run", "--layout", "mapc", "--output", "Converted.db", "Photos.sqlite"], in: folder).status == 0)
        // In place, in its own format, the folder stays as it is and does not matter.
        #expect(try CLI.run(["run", "Photos.sqlite"], in: folder).status == 0)
    }

    /// A killed run's marked copy beside an output goes even when the store being migrated has
    /// no external values (it was adopted by the new store, another store's values).
    @Test func aMarkedCopyGoesWhateverTheStoreHolds() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent(".Photos_SUPPORT"))
        let leftover = folder.appendingPathComponent(".Out_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: leftover.appendingPathComponent("A"))
        try Data().write(to: folder.appendingPathComponent(".Out_SUPPORT/.mapc-copy-unfinished"))
        let run = try CLI.run(["run", "--output", "Out.sqlite", "Photos.sqlite"], in: folder)
        #expect(run.status == 0 && !folder.exists(".Out_SUPPORT"), "\(run.stderr)")
    }

    /// Two runs writing one new file take turns: the output is locked as a store is, so one does
    /// not remove what the other left beside it.
    @Test func anOutputBeingWrittenIsLocked() throws {
        let folder = try project()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lock = open(folder.appendingPathComponent("Out.sqlite.mapc-lock").path, O_RDWR | O_CREAT, 0o644)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        let run = try CLI.run(["run", "--output", "Out.sqlite", "Photos.sqlite"], in: folder)
        #expect(run.status == 2 && run.stderr.contains("another mapc command is writing"), "\(run.stderr)")
        #expect(!folder.exists("Out.sqlite") && !folder.exists(".Out_SUPPORT"))
    }
}
