// MapcKit is the library's one module to import: the layers below are SwiftPM targets of their
// own, so that the compiler, not a convention, keeps each from using the layers above it
// (docs/architecture.md). An app, a tool and a project's policy files import MapcKit alone.
@_exported import MapcFoundation
@_exported import MapcModel
@_exported import MapcStore
@_exported import MapcMigration
@_exported import MapcTooling
