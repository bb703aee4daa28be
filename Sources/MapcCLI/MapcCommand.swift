import ArgumentParser
import Foundation
import MapcKit

/// The `mapc` command: Core Data style migrations for SQLite stores.
public struct MapcCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "mapc",
        abstract: "Core Data style model versions and migrations for SQLite stores.",
        discussion: "Exit status: 0 success, 1 invalid input (schema, mapping or data), 2 store or file problem, 3 migration failed (store unchanged), 64 bad command line.",
        subcommands: [CheckCommand.self, HashCommand.self, InitCommand.self, LoadCommand.self, DumpCommand.self, StatusCommand.self, EvalCommand.self, RunCommand.self, PlanCommand.self, InferCommand.self, DiffCommand.self, DemoCommand.self]
    )

    public init() {}

    /// Parses the arguments, runs the command and exits with mapc's documented status codes.
    public static func runMain(_ arguments: [String]? = nil) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            Foundation.exit(MapcExitCode.success)
        } catch let error as ExitCodeError {
            Foundation.exit(error.code)
        } catch {
            exit(withError: error)
        }
    }
}
