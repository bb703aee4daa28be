import MapcCLI
import MapcExamples
import MapcKit

// Before anything uses SQLite: its memory statistics cost a global mutex per allocation.
Migrator.disableSQLiteMemoryStatistics()

// The crash-testing harness's hook; inactive unless MAPC_FAULT is set.
FaultInjection.installFromEnvironment()

// An app's own `mapc` registers its policies here, before running the commands. This one
// registers none: a project's policy files are compiled and loaded by the commands
// (docs/policies.md), and the demo registers its example's.

/// The example `mapc demo` runs: a version 1 store and a version 2 store, migrated to the newest version.
let uncloudNotes = DemoProject(
    name: "UnCloudNotes", schemasFolder: UnCloudNotesDemo.schemasFolder, mappingsFolder: UnCloudNotesDemo.mappingsFolder, projectFolders: UnCloudNotesDemo.projectFolders,
    stores: { notes in
        [("notes-v1.db", UnCloudNotesDemo.v1Fixture(count: notes), "a store from version 1 of the app (\(notes) notes, no images yet)"),
         ("notes-v2.db", UnCloudNotesDemo.v2Fixture(count: max(3, notes / 2)), "a store from version 2 (\(max(3, notes / 2)) notes, every third with a photo)")]
    },
    registerPolicies: { registerUnCloudNotesPolicies() })

MapcCommand.runMain(demo: uncloudNotes)
