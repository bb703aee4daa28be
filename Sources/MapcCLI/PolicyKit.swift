import Foundation
import MapcKit
internal import CMapcSystem

/// What compiling a project's policy files against this `mapc` needs: MapcKit's compiled module
/// and those it imports (`.swiftmodule` files), the module maps of the C modules among them, and
/// the compiler that built them. Policies are compiled into a shared library that this very
/// executable loads (its symbols are exported), so nothing of MapcKit is compiled again.
///
/// Two places hold a kit: the build folder mapc was built in (`.build/release/Modules`, the
/// package's and its dependencies' module maps), and an install (`<prefix>/lib/mapc`, written by
/// `mapc install`), which needs no checkout.
struct PolicyKit {
    /// The folder of `.swiftmodule` files.
    var modules: URL
    /// The C modules' module maps.
    var moduleMaps: [URL]
    /// What `swiftc --version` printed for the compiler that built mapc.
    var toolchain: String
    /// Where the kit was found, for messages.
    var origin: String

    /// The folder an install keeps its kits in, relative to the executable's: `../lib/mapc`, a
    /// kit per build (`lib/mapc/<build ID>`), so that an install replaced part way leaves the
    /// previous executable its own kit.
    static let installedFolder = "lib/mapc"

    /// This executable's path, symbolic links resolved.
    static var executable: URL {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return Files.fileURL(resolved)
        }
        return Files.fileURL(CommandLine.arguments.first ?? "mapc").resolvingSymlinksInPath()
    }

    /// The running executable's build identity: its GNU build ID (the linker's hash of its
    /// contents), else a digest of its bytes. Policies compiled for one build of mapc are never
    /// loaded into another.
    static var buildIdentity: String {
        if let id = MapcVersion.buildID { return id }
        if let data = try? Data(contentsOf: executable) { return VersionHash.sha256(data) }
        return "unknown"
    }

    /// The kit of the running executable: installed beside it, or the build folder it is in.
    static func find() throws -> PolicyKit {
        let folder = executable.deletingLastPathComponent()
        let installed = folder.deletingLastPathComponent().appendingPathComponent(installedFolder).appendingPathComponent(buildIdentity)
        if FileManager.default.fileExists(atPath: installed.appendingPathComponent("Modules/MapcKit.swiftmodule").path) {
            return try PolicyKit(installedAt: installed)
        }
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Modules/MapcKit.swiftmodule").path) {
            return try PolicyKit(buildFolder: folder)
        }
        throw PolicyError("this mapc (\(executable.path)) has no MapcKit module to compile policy files against: neither \(installed.path) (an install) "
                          + "nor \(folder.appendingPathComponent("Modules").path) (a build folder) holds one; install mapc with `mapc install --prefix DIR` "
                          + "from a build, or compile the policies into your own mapc (docs/policies.md)", status: MapcExitCode.storeError)
    }

    /// The kit of a SwiftPM build folder (`.build/<configuration>`): its modules, the module maps
    /// SwiftPM generated there, and those of the package's and its dependencies' C targets.
    init(buildFolder: URL) throws {
        modules = buildFolder.appendingPathComponent("Modules")
        origin = buildFolder.path
        let files = FileManager.default
        var maps: [URL] = []
        for entry in (try? files.contentsOfDirectory(atPath: buildFolder.path)) ?? [] where entry.hasSuffix(".build") {
            let map = buildFolder.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if files.fileExists(atPath: map.path) { maps.append(map) }
        }
        // The package is the folder holding `.build`; its dependencies are checked out inside it.
        var dotBuild = buildFolder
        while dotBuild.lastPathComponent != ".build" && dotBuild.pathComponents.count > 1 { dotBuild = dotBuild.deletingLastPathComponent() }
        if dotBuild.lastPathComponent == ".build" {
            let packages = [dotBuild.deletingLastPathComponent()] + ((try? files.contentsOfDirectory(atPath: dotBuild.appendingPathComponent("checkouts").path)) ?? [])
                .map { dotBuild.appendingPathComponent("checkouts").appendingPathComponent($0) }
            for package in packages {
                let sources = package.appendingPathComponent("Sources")
                for target in (try? files.contentsOfDirectory(atPath: sources.path)) ?? [] {
                    for candidate in ["include/module.modulemap", "module.modulemap"] {
                        let map = sources.appendingPathComponent(target).appendingPathComponent(candidate)
                        if files.fileExists(atPath: map.path) { maps.append(map) }
                    }
                }
            }
        }
        // A module SwiftPM generated a map for is not declared twice.
        var seen: Set<String> = []
        moduleMaps = maps.filter { map in Self.moduleName(in: map).map { seen.insert($0).inserted } ?? false }
        let version = (try? files.contentsOfDirectory(atPath: buildFolder.path))?.first { $0.hasPrefix("swift-version-") && $0.hasSuffix(".txt") }
        guard let version, let text = try? String(contentsOf: buildFolder.appendingPathComponent(version), encoding: .utf8) else {
            throw PolicyError("\(buildFolder.path) does not say which compiler built it (no swift-version-*.txt); rebuild mapc with `swift build`", status: MapcExitCode.storeError)
        }
        toolchain = text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The kit an install wrote (`Modules/`, `c-modules/<name>/module.modulemap`, `toolchain`,
    /// `build-id`), which must belong to the running executable.
    init(installedAt folder: URL) throws {
        modules = folder.appendingPathComponent("Modules")
        origin = folder.path
        let cModules = folder.appendingPathComponent("c-modules")
        moduleMaps = ((try? FileManager.default.contentsOfDirectory(atPath: cModules.path)) ?? []).sorted()
            .map { cModules.appendingPathComponent($0).appendingPathComponent("module.modulemap") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
        guard let toolchain = try? String(contentsOf: folder.appendingPathComponent("toolchain"), encoding: .utf8) else {
            throw PolicyError("\(folder.path) is not a complete mapc install (no toolchain file); install mapc again with `mapc install --prefix DIR`", status: MapcExitCode.storeError)
        }
        self.toolchain = toolchain.trimmingCharacters(in: .whitespacesAndNewlines)
        let recorded = (try? String(contentsOf: folder.appendingPathComponent("build-id"), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        guard recorded == Self.buildIdentity else {
            throw PolicyError("the modules in \(folder.path) belong to another build of mapc than \(Self.executable.path); install mapc again with `mapc install --prefix DIR`, which writes both", status: MapcExitCode.storeError)
        }
    }

    /// The first line of a `swiftc --version` text: "Swift version 6.3.1 (swift-6.3.1-RELEASE)".
    static func version(in text: String) -> String {
        text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? text
    }

    /// The module a module map declares (`module CYaml {`), or nil.
    static func moduleName(in map: URL) -> String? {
        guard let text = try? String(contentsOf: map, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "{" || $0 == "\t" })
            if let index = words.firstIndex(of: "module"), index + 1 < words.count, words.first == "module" || words.first == "framework" || words.first == "explicit" {
                return String(words[index + 1])
            }
        }
        return nil
    }

    /// Writes this kit into an install's folder: the modules (no test modules), each C module's
    /// map with the headers it names (absolute paths in a map SwiftPM generated become the
    /// copies'), the compiler's version and the executable's build identity.
    func write(to folder: URL, buildIdentity: String) throws {
        let files = FileManager.default
        try? files.removeItem(at: folder)
        try files.createDirectory(at: folder.appendingPathComponent("Modules"), withIntermediateDirectories: true)
        for entry in try files.contentsOfDirectory(atPath: modules.path) where entry.hasSuffix(".swiftmodule") && !entry.hasSuffix("Tests.swiftmodule") {
            try files.copyItem(at: modules.appendingPathComponent(entry), to: folder.appendingPathComponent("Modules").appendingPathComponent(entry))
        }
        for map in moduleMaps {
            guard let name = Self.moduleName(in: map), var text = try? String(contentsOf: map, encoding: .utf8) else { continue }
            let destination = folder.appendingPathComponent("c-modules").appendingPathComponent(name)
            try files.createDirectory(at: destination, withIntermediateDirectories: true)
            let absolute = text.components(separatedBy: "\"").enumerated().filter { $0.offset % 2 == 1 }.map(\.element).filter { $0.hasPrefix("/") }
            if absolute.isEmpty {
                // A map written with its headers: its folder, headers named relative to it.
                let source = map.deletingLastPathComponent()
                for entry in try files.contentsOfDirectory(atPath: source.path) where entry != "module.modulemap" {
                    try files.copyItem(at: source.appendingPathComponent(entry), to: destination.appendingPathComponent(entry))
                }
            }
            // A map SwiftPM generated names its headers by absolute paths: those, and their neighbours.
            for quoted in absolute {
                let header = Files.fileURL(quoted)
                let copy = destination.appendingPathComponent(header.lastPathComponent)
                if !files.fileExists(atPath: copy.path) { try files.copyItem(at: header, to: copy) }
                // A header's neighbours (an umbrella header includes them).
                for neighbour in (try? files.contentsOfDirectory(atPath: header.deletingLastPathComponent().path)) ?? [] where neighbour.hasSuffix(".h") {
                    let target = destination.appendingPathComponent(neighbour)
                    if !files.fileExists(atPath: target.path) { try files.copyItem(at: header.deletingLastPathComponent().appendingPathComponent(neighbour), to: target) }
                }
                text = text.replacingOccurrences(of: "\"\(quoted)\"", with: "\"\(header.lastPathComponent)\"")
            }
            try Data(text.utf8).write(to: destination.appendingPathComponent("module.modulemap"))
        }
        try Data((toolchain + "\n").utf8).write(to: folder.appendingPathComponent("toolchain"))
        try Data((buildIdentity + "\n").utf8).write(to: folder.appendingPathComponent("build-id"))
    }
}

/// Why a project's policies cannot be compiled or loaded, with the exit status to end with.
struct PolicyError: Error, CustomStringConvertible {
    var description: String
    var status: Int32

    init(_ description: String, status: Int32) {
        self.description = description
        self.status = status
    }
}
