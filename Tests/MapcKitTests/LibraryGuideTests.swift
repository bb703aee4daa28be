import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

/// The code of docs/library.md, run. Each `// guide:` … `// end guide` region below is one
/// swift block of the guide, character for character (after removing the indentation): the last
/// test fails when the guide and this file drift apart, so the guide's examples cannot rot.
@Suite("Library guide", .serialized)
struct LibraryGuideTests {
    /// An app's resources: a copy of the shipped schemas and mappings, and a version 1 store.
    /// A store of the UnCloudNotes fixture data of `version`.
    static func makeStore(at url: URL, version: String, resources: URL) throws {
        let fixture = packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/\(version).json")
        let json = try JSONValue.parse(try Data(contentsOf: fixture), path: fixture.path)
        let schema = try SchemaCatalog(directory: resources.appendingPathComponent("schemas").path).require(version: version)
        let store = try Store.create(at: url.path, schema: schema)
        try store.insert(try DataFile.read(json, schema: schema).objects)
        try store.close()
    }

    struct App {
        let resources: URL
        let storeURL: URL
        let folder: URL

        init() throws {
            folder = try temporaryFolder()
            resources = folder.appendingPathComponent("Resources")
            try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
            for name in ["schemas", "mappings"] {
                try FileManager.default.copyItem(at: packageRoot.appendingPathComponent(name), to: resources.appendingPathComponent(name))
            }
            storeURL = folder.appendingPathComponent("Notes.sqlite")
            try LibraryGuideTests.makeStore(at: storeURL, version: "v1", resources: resources)
            // The UnCloudNotes example's policy, which the v3 to v4 mapping names.
            registerUnCloudNotesPolicies()
        }
    }

    @Test func migratingInOneCall() throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let (resources, storeURL) = (app.resources, app.storeURL)
        // guide: one call
        let migrator = try Migrator(schemasFolder: resources.appendingPathComponent("schemas"),
                                    mappingsFolder: resources.appendingPathComponent("mappings"))
        let outcome = try migrator.migrate(storeAt: storeURL)
        print("migrated in \(outcome.steps.count) steps")
        // end guide
        #expect(outcome.steps.map(\.destinationVersion) == ["v2", "v3", "v4"])
        #expect(try migrator.status(ofStoreAt: storeURL).version == "v4")
        #expect(try migrator.migrate(storeAt: storeURL).steps.isEmpty, "a store at the newest version is left alone")
    }

    @Test func askingFirst() throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let (resources, storeURL) = (app.resources, app.storeURL)
        let migrator = try Migrator(schemasFolder: resources.appendingPathComponent("schemas"),
                                    mappingsFolder: resources.appendingPathComponent("mappings"))
        let before = try Data(contentsOf: storeURL)
        // guide: status and plan
        let status = try migrator.status(ofStoreAt: storeURL)
        print(status.formatName, status.version ?? "no known version", status.objectCounts)

        let plan = try migrator.plan(forStoreAt: storeURL, to: "v3")
        if plan.isNeeded {
            for step in plan.steps {
                print(step.source.version, "→", step.destination.version, step.isInferred ? "(inferred)" : "(mapping file)")
            }
        }
        // end guide
        #expect(status.version == "v1" && status.formatName == "mapc")
        #expect("\(status.objectCounts)" == "Note \(status.objectCounts["Note"] ?? -1)" && status.objectCounts.total > 0, "counts print as the CLI prints them")
        #expect(plan.steps.map(\.isInferred) == [true, false])
        #expect(try Data(contentsOf: storeURL) == before, "asking never writes")
    }

    @Test func progressAndCancellation() async throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let (resources, storeURL) = (app.resources, app.storeURL)
        let migrator = try Migrator(schemasFolder: resources.appendingPathComponent("schemas"),
                                    mappingsFolder: resources.appendingPathComponent("mappings"))
        // A cancelled run leaves the store as it was.
        let before = try Data(contentsOf: storeURL)
        var cancelled = MigrationOptions()
        cancelled.isCancelled = { true }
        let error = await #expect(throws: MigrationError.self) { try await migrator.migrate(storeAt: storeURL, options: cancelled) }
        #expect(error?.localizedDescription == "the migration was cancelled; nothing was changed")
        #expect(try Data(contentsOf: storeURL) == before)
        // guide: async
        let task = Task {
            try await migrator.migrate(storeAt: storeURL, to: "v4") { progress in
                print("\(Int(progress.fractionCompleted * 100))%: step \(progress.step + 1) of \(progress.steps), \(progress.phase) \(progress.mapping ?? "")")
            }
        }
        // task.cancel() stops the migration between batches; the store stays as it was.
        let outcome = try await task.value
        // end guide
        #expect(outcome.result?.path == storeURL.path && outcome.steps.count == 3)
    }

    /// Cancelling the task of the async `migrate` stops the migration, which runs on a thread of
    /// its own, and leaves the store as it was: of a store, and of a plan (the plan, check,
    /// migrate flow had no async form, and blocked a thread of the pool, uncancellable).
    @Test(arguments: [false, true])
    func cancellingTheTaskStopsTheMigration(ofAPlan: Bool) async throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        registerUnCloudNotesPolicies()
        let migrator = try Migrator(schemasFolder: app.resources.appendingPathComponent("schemas"),
                                    mappingsFolder: app.resources.appendingPathComponent("mappings"))
        let before = try Data(contentsOf: app.storeURL)
        let started = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
        let plan = try await migrator.plan(forStoreAt: app.storeURL, to: "v4")
        let task = Task {
            let progress: @Sendable (MigrationProgress) -> Void = { progress in
                if progress.isStepStart && progress.step == 0 {
                    started.signal()
                    // The first step goes on once the task has been cancelled.
                    cancelled.wait()
                }
            }
            return ofAPlan ? try await migrator.migrate(plan, progress: progress) : try await migrator.migrate(storeAt: app.storeURL, to: "v4", progress: progress)
        }
        await Task.detached { started.wait() }.value
        task.cancel()
        cancelled.signal()
        let result = await task.result
        #expect(throws: MigrationError.self) { try result.get() }
        if case .failure(let error as MigrationError) = result { #expect(error.localizedDescription == "the migration was cancelled; nothing was changed") }
        #expect(try Data(contentsOf: app.storeURL) == before)
    }

    @Test func dryRunOutputAndBackup() throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let (resources, storeURL, folder) = (app.resources, app.storeURL, app.folder)
        let migrator = try Migrator(schemasFolder: resources.appendingPathComponent("schemas"),
                                    mappingsFolder: resources.appendingPathComponent("mappings"))
        // guide: options
        var rehearsal = MigrationOptions()
        rehearsal.dryRun = true                     // migrate and validate a scratch copy, change nothing
        _ = try migrator.migrate(storeAt: storeURL, options: rehearsal)

        var elsewhere = MigrationOptions()
        elsewhere.output = folder.appendingPathComponent("Notes-v4.sqlite")   // a new file; the store stays
        _ = try migrator.migrate(storeAt: storeURL, options: elsewhere)

        var inPlace = MigrationOptions()
        inPlace.keepBackup = true                   // the original stays beside it, as Notes.sqlite.backup-v1-…
        let outcome = try migrator.migrate(storeAt: storeURL, options: inPlace)
        print("backup:", outcome.backup?.path ?? "none")
        // end guide
        #expect(try migrator.status(ofStoreAt: folder.appendingPathComponent("Notes-v4.sqlite")).version == "v4")
        #expect(try migrator.status(ofStoreAt: storeURL).version == "v4")
        let backup = try #require(outcome.backup)
        #expect(try migrator.status(ofStoreAt: backup).version == "v1")
    }

    @Test func bundledFilesAndTypedErrors() throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let storeURL = app.storeURL
        let read = { (name: String) in try String(contentsOf: packageRoot.appendingPathComponent(name), encoding: .utf8) }
        let (v1Text, v2Text, v3Text) = (try read("schemas/v1.yaml"), try read("schemas/v2.yaml"), try read("schemas/v3.yaml"))
        // guide: bundled files
        let migrator = try Migrator(schemaFiles: ["v1.yaml": v1Text, "v2.yaml": v2Text, "v3.yaml": v3Text,
                                                  "versions.yaml": "versions: [v1, v2, v3]\n"])
        do {
            _ = try migrator.migrate(storeAt: storeURL)
        } catch let error as PlanError {
            // A step has no mapping file and cannot be inferred: error.suggestedFile names the file to write.
            print(error.localizedDescription)
        } catch let error as MigrationError {
            // A mapping failed on an object, or the result broke the schema's rules. The store is untouched.
            print(error.localizedDescription)
        }
        // end guide
        // Without its mapping file, v1 to v3 is inferred in one step: the images v2 added and v3
        // removes never held a value in a v1 store.
        #expect(try migrator.status(ofStoreAt: storeURL).version == "v3")
        // A v2 store has images: the step v2 -> v3 can only be inferred by dropping them, and the
        // run refuses and changes nothing.
        let v2Store = app.folder.appendingPathComponent("Notes-v2.sqlite")
        try Self.makeStore(at: v2Store, version: "v2", resources: app.resources)
        #expect(try migrator.plan(forStoreAt: v2Store).droppedValues.map(\.dropped) == [["Note.image"]])
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(storeAt: v2Store) }
        #expect(error?.localizedDescription.hasPrefix("the inferred step v2 -> v3 would drop the values of Note.image") == true, "\(String(describing: error))")
        #expect(try migrator.status(ofStoreAt: v2Store).version == "v2")
        // A step inference cannot make at all (a new required attribute with no default) has no plan.
        let v1Store = app.folder.appendingPathComponent("Notes-v1.sqlite")
        try Self.makeStore(at: v1Store, version: "v1", resources: app.resources)
        let v2Required = v2Text.replacingOccurrences(of: "      image:", with: "      priority:     { type: int64 }\n      image:")
        let broken = try Migrator(schemaFiles: ["v1.yaml": v1Text, "v2.yaml": v2Required, "versions.yaml": "versions: [v1, v2]\n"])
        let planError = #expect(throws: PlanError.self) { try broken.plan(forStoreAt: v1Store) }
        #expect(planError?.suggestedFile == "mapping_v1_to_v2.yaml")
        #expect(planError?.localizedDescription.contains("priority") == true, "\(String(describing: planError))")
    }

    @Test func oneStepBetweenStoresYouOpen() throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let resources = app.resources
        let migrator = try Migrator(schemasFolder: resources.appendingPathComponent("schemas"),
                                    mappingsFolder: resources.appendingPathComponent("mappings"))
        // guide: one step
        let v2 = try migrator.schemas.require(version: "v2")
        let v3 = try migrator.schemas.require(version: "v3")
        let source = try Store.inMemory(schema: v2)
        try source.insert([
            ObjectData(id: "n1", entity: "Note", attributes: [
                "title": .string("Groceries"), "body": .string("Milk"), "dateCreated": .date(Date()),
                "displayIndex": .integer(0), "image": .binary(Data([0x89, 0x50, 0x4E, 0x47])),
            ]),
        ])
        let destination = try Store.inMemory(schema: v3, format: .coreData)
        if let mapping = migrator.mappings.mapping(from: "v2", to: "v3") {
            let summary = try StepMigration(source: source, destination: destination, mapping: mapping).run()
            print(summary.created)                  // NoteToNote 1, NoteToAttachment 1
        }
        let attachments = try destination.objects(of: "Attachment")
        // end guide
        #expect(attachments.count == 1 && attachments[0].relationships["note"] == ["Note/p1"])
    }

    @Test func fixtureMigrations() throws {
        let app = try App()
        defer { try? FileManager.default.removeItem(at: app.folder) }
        let resources = app.resources
        let fixture = packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/v1.json").path
        // guide: fixtures
        let store = try FixtureMigration.migrate(fixture: fixture, to: "v4",
                                                 schemas: resources.appendingPathComponent("schemas").path,
                                                 mappings: resources.appendingPathComponent("mappings").path)
        let migrated = try DataFile.dump(store).serialized(pretty: true)
        // end guide
        let expected = try String(contentsOf: packageRoot.appendingPathComponent("Tests/MapcKitTests/Fixtures/uncloudnotes/expected-v4-from-v1.json"), encoding: .utf8)
        #expect(migrated.trimmingCharacters(in: .whitespacesAndNewlines) == expected.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The guide's swift blocks, each found among this file's regions.
    @Test func theGuideShowsThisFilesCode() throws {
        let guide = try String(contentsOf: packageRoot.appendingPathComponent("docs/library.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        func dedent(_ lines: [Substring]) -> String {
            let indent = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
            return lines.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
        }
        var regions: [String] = []
        var current: [Substring]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// guide:") { current = [] } else if trimmed == "// end guide" {
                regions.append(dedent(current ?? []))
                current = nil
            } else if current != nil { current?.append(line) }
        }
        var blocks: [String] = []
        var block: [Substring]?
        for line in guide.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```swift" { block = [] } else if line == "```", let lines = block {
                blocks.append(lines.joined(separator: "\n"))
                block = nil
            } else if block != nil { block?.append(line) }
        }
        // The package manifest and the import line are the only blocks not run here.
        let checked = blocks.filter { !$0.hasPrefix("// Package.swift") && $0 != "import MapcKit" }
        #expect(checked.count == regions.count, "the guide has \(checked.count) examples, this file \(regions.count)")
        for block in checked {
            #expect(regions.contains(block), "this guide example is not run by LibraryGuideTests:\n\(block)")
        }
    }
}
