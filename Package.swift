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
        .target(
            name: "MapcKit",
            dependencies: [
                "CMapcSystem",
                .product(name: "Yams", package: "Yams"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
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
        .testTarget(name: "MapcKitTests", dependencies: ["MapcKit", "MapcExamples", .product(name: "Yams", package: "Yams"), .product(name: "GRDB", package: "GRDB.swift")], exclude: ["Fixtures"]),
        .testTarget(name: "MapcCLITests", dependencies: ["MapcCLI", "MapcKit", "mapc"], exclude: ["Fixtures"]),
    ]
)
