// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "mapc",
    platforms: [.macOS(.v13)],
    products: [
        // The engine: schemas, expressions, stores in mapc's and Core Data's formats, migrations.
        .library(name: "MapcKit", targets: ["MapcKit"]),
        // The command set, so an app can build its own `mapc` with its own policies.
        .library(name: "MapcCLI", targets: ["MapcCLI"]),
        // The worked examples' policies (UnCloudNotes, Moody), for tools built on MapcCLI.
        .library(name: "MapcExamples", targets: ["MapcExamples"]),
        .executable(name: "mapc", targets: ["mapc"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        // C helpers: the crash tests' fault-injection hook (a SQLite VFS shim, inactive unless
        // MAPC_FAULT is set), extended attributes, which Swift's Glibc module lacks, and
        // sqlite3_db_config, which is variadic and so not callable from Swift.
        .target(name: "CMapcSystem", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The library's layers, lowest first: each a target, so that a layer cannot use one above
        // it (docs/architecture.md). MapcKit re-exports them all; apps import MapcKit alone.
        // Diagnostics and support: source files, diagnostics, JSON, YAML with positions, files.
        .target(name: "MapcFoundation", dependencies: ["CMapcSystem", .product(name: "Yams", package: "Yams")]),
        // The model: schemas and values, and the expression language. No SQLite.
        .target(name: "MapcModel", dependencies: ["MapcFoundation", .product(name: "Yams", package: "Yams"), .product(name: "Crypto", package: "swift-crypto")]),
        // Stores in mapc's and Core Data's formats, every piece of SQL about them, and data files.
        .target(name: "MapcStore", dependencies: ["MapcModel", "CMapcSystem", .product(name: "GRDB", package: "GRDB.swift")]),
        // Mapping models, inference, the migration engine, policies, the planner and `Migrator`.
        .target(name: "MapcMigration", dependencies: ["MapcStore", "CMapcSystem", .product(name: "Yams", package: "Yams"), .product(name: "GRDB", package: "GRDB.swift")]),
        // Tooling over the engine: Xcode's model and mapping model importers, the editor's project.
        .target(name: "MapcTooling", dependencies: ["MapcStore", "MapcMigration"]),
        .target(name: "MapcKit", dependencies: ["MapcFoundation", "MapcModel", "MapcStore", "MapcMigration", "MapcTooling"]),
        .target(
            name: "MapcCLI",
            dependencies: [
                "MapcKit",
                "CMapcSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The UnCloudNotes tutorial's custom policy and demo: the worked example the shipped
        // `mapc` executable links (the MapcCLI library does not).
        .target(name: "MapcExamples", dependencies: ["MapcKit"]),
        // Its symbols are exported so that a project's policies, compiled into a shared library
        // against MapcKit's module, are loaded into it (docs/policies.md).
        .executableTarget(name: "mapc", dependencies: ["MapcCLI", "MapcExamples"],
                          linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"])]),
        .testTarget(name: "MapcKitTests", dependencies: ["MapcKit", "MapcFoundation", "MapcModel", "MapcStore", "MapcMigration", "MapcTooling", "MapcExamples", .product(name: "Yams", package: "Yams"), .product(name: "GRDB", package: "GRDB.swift")], exclude: ["Fixtures"]),
        .testTarget(name: "MapcCLITests", dependencies: ["MapcCLI", "MapcKit", "MapcFoundation", "MapcModel", "MapcStore", "MapcMigration", "MapcTooling", "mapc"], exclude: ["Fixtures"]),
    ]
)
