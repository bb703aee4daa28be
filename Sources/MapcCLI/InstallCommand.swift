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
        let root = URL(fileURLWithPath: prefix ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local").path).standardizedFileURL
        do {
            let kit = try PolicyKit.find()
            let bin = root.appendingPathComponent("bin"), library = root.appendingPathComponent(PolicyKit.installedFolder)
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let source = PolicyKit.executable
            let target = bin.appendingPathComponent("mapc")
            // The kit first, in a folder of its own moved into place, then the executable: a
            // failure part way leaves the previous install working.
            let staging = root.appendingPathComponent("lib/.mapc-install-\(getpid())")
            try? FileManager.default.removeItem(at: staging)
            try FileManager.default.createDirectory(at: staging.deletingLastPathComponent(), withIntermediateDirectories: true)
            try kit.write(to: staging, buildIdentity: PolicyKit.buildIdentity)
            // The demo's example, so that `mapc demo` works without the checkout too.
            if let demo = MapcCommand.demo {
                let example = staging.appendingPathComponent("example")
                try FileManager.default.createDirectory(at: example, withIntermediateDirectories: true)
                for (folder, name) in [(demo.schemasFolder, "schemas"), (demo.mappingsFolder, "mappings")] where FileManager.default.fileExists(atPath: folder) {
                    try FileManager.default.copyItem(at: URL(fileURLWithPath: folder), to: example.appendingPathComponent(name))
                }
            }
            if source.standardizedFileURL.path != target.standardizedFileURL.path {
                let temporary = bin.appendingPathComponent(".mapc-install-\(getpid())")
                try? FileManager.default.removeItem(at: temporary)
                try FileManager.default.copyItem(at: source, to: temporary)
                chmod(temporary.path, 0o755)
                try? FileManager.default.removeItem(at: library)
                try FileManager.default.moveItem(at: staging, to: library)
                guard rename(temporary.path, target.path) == 0 else {
                    throw PolicyError("cannot write \(target.path): \(String(cString: strerror(errno)))", status: MapcExitCode.storeError)
                }
            } else {
                try? FileManager.default.removeItem(at: library)
                try FileManager.default.moveItem(at: staging, to: library)
            }
            Console.out("installed \(target.path) and \(library.path) (compiling policy files with \(PolicyKit.version(in: kit.toolchain)))")
            let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { URL(fileURLWithPath: String($0)).standardizedFileURL.path }
            if !path.contains(bin.path) {
                Console.out("\(bin.path) is not on PATH: add it (export PATH=\"\(bin.path):$PATH\") to run mapc by name")
            }
        } catch let error as PolicyError {
            Console.err("error: \(error.description)")
            throw ExitCodeError(error.status)
        } catch {
            Console.err("error: cannot install into \(root.path): \(error.localizedDescription)")
            throw ExitCodeError(MapcExitCode.storeError)
        }
    }
}
