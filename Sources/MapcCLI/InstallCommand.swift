import ArgumentParser
import Foundation
import MapcKit
#if canImport(Glibc)
import Glibc
#endif

/// `mapc install [--prefix DIR]`: copies this `mapc` into `DIR/bin` and what compiling policy
/// files against it needs into `DIR/lib/mapc`, so that it runs from `PATH` and compiles policies
/// without the checkout it was built from.
struct InstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install this mapc into a prefix (bin/mapc, and lib/mapc for compiling policy files), to run without its checkout.",
        discussion: "From a checkout: swift run -c release mapc install --prefix ~/.local. Policy files are then compiled with the Swift toolchain that built mapc; put it on PATH (or set MAPC_SWIFTC)."
    )

    @Option(help: ArgumentHelp("The folder to install into: the executable goes to DIR/bin, the modules to DIR/lib/mapc. (default: ~/.local)", valueName: "dir"))
    var prefix: String?

    func run() throws {
        let root = Files.fileURL(prefix ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local").path).standardizedFileURL
        do {
            let kit = try PolicyKit.find()
            let identity = PolicyKit.buildIdentity
            let bin = root.appendingPathComponent("bin"), kits = root.appendingPathComponent(PolicyKit.installedFolder)
            let library = kits.appendingPathComponent(identity)
            try Files.makeFolder(bin.path)
            try Files.makeFolder(kits.path)
            let source = PolicyKit.executable
            let target = bin.appendingPathComponent("mapc")
            // This build's kit in a folder of its own, moved into place complete; then the
            // executable, renamed over the old one. Killed or failing at any point, the old
            // executable still has its kit (kits are named by build), and the new one is complete.
            let staging = kits.appendingPathComponent(".install-\(getpid())")
            try? FileManager.default.removeItem(at: staging)
            try kit.write(to: staging, buildIdentity: identity)
            try? FileManager.default.removeItem(at: library)
            try FileManager.default.moveItem(at: staging, to: library)
            // The demo's example, so that `mapc demo` works without the checkout too, and a copy
            // of it is the whole project of the README's tour.
            if let demo = MapcCommand.demo {
                let example = kits.appendingPathComponent("example"), fresh = kits.appendingPathComponent(".example-\(getpid())")
                try? FileManager.default.removeItem(at: fresh)
                try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
                let folders = [(demo.schemasFolder, "schemas"), (demo.mappingsFolder, "mappings")] + demo.projectFolders.map { ($0, Files.fileURL($0).lastPathComponent) }
                for (folder, name) in folders where FileManager.default.fileExists(atPath: folder) {
                    try Self.copyFollowingLinks(Files.fileURL(folder), to: fresh.appendingPathComponent(name))
                }
                try? FileManager.default.removeItem(at: example)
                try FileManager.default.moveItem(at: fresh, to: example)
            }
            if source.standardizedFileURL.path != target.standardizedFileURL.path {
                let temporary = bin.appendingPathComponent(".mapc-install-\(getpid())")
                try? FileManager.default.removeItem(at: temporary)
                try FileManager.default.copyItem(at: source, to: temporary)
                chmod(temporary.path, 0o755)
                guard rename(temporary.path, target.path) == 0 else {
                    throw PolicyError("cannot write \(target.path): \(String(cString: strerror(errno)))", status: MapcExitCode.storeError)
                }
            }
            // The kits of builds no longer installed.
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: kits.path)) ?? [] where entry != identity && entry != "example" && !entry.hasPrefix(".") {
                try? FileManager.default.removeItem(at: kits.appendingPathComponent(entry))
            }
            Console.text("installed \(target.path) and \(library.path) (compiling policy files with \(PolicyKit.version(in: kit.toolchain)))")
            let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { Files.fileURL(String($0)).standardizedFileURL.path }
            if !path.contains(bin.path) {
                Console.err("note: \(bin.path) is not on PATH: add it (export PATH=\"\(bin.path):$PATH\") to run mapc by name")
            }
        } catch let error as PolicyError {
            Console.err("error: \(error.description)")
            throw ExitCodeError(error.status)
        } catch {
            Console.err("error: cannot install into \(root.path): \(Files.reason(of: error))")
            throw ExitCodeError(MapcExitCode.storeError)
        }
    }

    /// Copies a folder with the files its links lead to, not the links: the checkout's
    /// `policies/` links into `Sources/`, which an install has not.
    private static func copyFollowingLinks(_ folder: URL, to target: URL, depth: Int = 0) throws {
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let entry = folder.appendingPathComponent(name).resolvingSymlinksInPath()
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: entry.path, isDirectory: &isFolder) else { continue }
            if isFolder.boolValue {
                if depth < 8 { try copyFollowingLinks(entry, to: target.appendingPathComponent(name), depth: depth + 1) }
            } else {
                try FileManager.default.copyItem(at: entry, to: target.appendingPathComponent(name))
            }
        }
    }
}
