import ArgumentParser
import Foundation
import MapcKit
internal import CMapcSystem

/// The `mapc` command: Core Data style migrations for SQLite stores.
public struct MapcCommand: ParsableCommand {
    /// The commands, the version and the documented exit statuses.
    public static let configuration = CommandConfiguration(
        commandName: "mapc",
        abstract: "Core Data style model versions and migrations for SQLite stores.",
        discussion: "Exit status: 0 success, 1 invalid input (schema, mapping or data), 2 store or file problem, 3 migration failed (store unchanged), 64 bad command line, 130, 143 and 129 stopped by SIGINT, SIGTERM or SIGHUP (stores not yet replaced unchanged; from a script, send SIGTERM: a shell's background job ignores SIGINT), 132, 133, 134 and 139 a trap in a project's policy (store unchanged), 141 standard output closed by its reader. See docs/cli.md.",
        version: MapcVersion.described,
        subcommands: [CheckCommand.self, ImportCommand.self, GraphCommand.self, EditorSchemasCommand.self, HashCommand.self, InitCommand.self, LoadCommand.self, DumpCommand.self, StatusCommand.self, EvalCommand.self, RunCommand.self, PlanCommand.self, InferCommand.self, DiffCommand.self, TestCommand.self, LSPCommand.self, DemoCommand.self, InstallCommand.self]
    )

    /// The root command, parsed from the arguments by ArgumentParser.
    public init() {}

    /// The example `mapc demo` runs, supplied by the executable (nil: `demo` says there is none).
    nonisolated(unsafe) public static var demo: DemoProject?

    /// Why mapc cannot name files here, or nil: an argument or the working folder's path that is
    /// not UTF-8 text (a name in Latin-1). Swift decodes such bytes into replacement characters,
    /// and a path so decoded names another file, or none: every path would be wrong.
    static func nonUTF8Problem() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index], String(validatingCString: argument) == nil else { continue }
            return "argument \(index) ('\(String(cString: argument))') is not UTF-8 text; mapc reads paths as UTF-8: rename the file (for example with `convmv -f latin1 -t utf8`), or reach it through a link with a UTF-8 name"
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        if getcwd(&buffer, buffer.count) != nil, String(validatingCString: buffer) == nil {
            return "the working folder's path (\(String(cString: buffer))) is not UTF-8 text; mapc reads paths as UTF-8, and would look for every relative path elsewhere: run it from another folder, or rename this one"
        }
        return nil
    }

    /// Why `--version` in a command with other arguments is a mistake, or nil. ArgumentParser
    /// gives every command a `--version` flag that prints mapc's version and does nothing else
    /// (exit 0), so `mapc init --version v2 s.db` created no store and said nothing of it. The
    /// options that take a model version are read off the command's own help.
    static func misusedVersionFlag(_ given: [String], command name: String) -> String? {
        guard given.count > 2, given.dropFirst().contains("--version"),
              let command = configuration.subcommands.first(where: { $0.configuration.commandName == name }) else { return nil }
        let help = helpMessage(for: command, columns: 10_000)
        var options: [String] = []
        for line in help.split(separator: "\n") {
            for word in line.split(separator: " ") where word.hasPrefix("--") && line.contains("\(word) <version>") && !options.contains(String(word)) {
                options.append(String(word))
            }
        }
        // Else an argument that names a version (`hash <file|version>`, `diff <from> <to>`), if any.
        let arguments = help.components(separatedBy: "ARGUMENTS:").dropFirst().first?.components(separatedBy: "OPTIONS:").first ?? ""
        let hint = !options.isEmpty ? "a model version is given with " + options.map { "\($0) <version>" }.joined(separator: " or ")
            : arguments.lowercased().contains("version") ? "a model version is given as one of its arguments" : "`mapc \(name)` takes no model version"
        return "--version prints mapc's own version and takes no value, so nothing was done; \(hint) (see `mapc \(name) --help`)"
    }

    /// The options that name a file or folder.
    static let pathOptions: Set<String> = ["--prefix", "--expected", "--output", "-o", "--schemas", "--mappings", "--policies", "--fixtures", "--junit", "--stores-from", "--directory"]

    /// Why an option that names a path is given an empty one (`--prefix ''`), or nil: Foundation
    /// takes an empty path for the working folder, so `install --prefix ''` installed there.
    static func emptyPathProblem(_ given: [String]) -> String? {
        for (index, argument) in given.enumerated() {
            if argument == "--" { break }
            let (option, value): (String, String?) = argument.hasPrefix("--") && argument.contains("=")
                ? (String(argument.prefix { $0 != "=" }), String(argument.drop { $0 != "=" }.dropFirst()))
                : (argument, index + 1 < given.count ? given[index + 1] : nil)
            if pathOptions.contains(option), value == "" {
                return "\(option) names no path (it is empty); name a file or folder, such as \(option) ./out"
            }
        }
        return nil
    }

    /// Parses the arguments, runs the command and exits with mapc's documented status codes.
    /// `demo` is the example `mapc demo` runs.
    public static func runMain(_ arguments: [String]? = nil, demo: DemoProject? = nil) -> Never {
        self.demo = demo
        Store.unfinishedWriteRolledBack = { path in RolledBackWrites.rolledBack(path) }
        let given = arguments ?? Array(CommandLine.arguments.dropFirst())
        // ArgumentParser's `help` prints the root help for an unknown command and succeeds, and
        // calls a mistyped command "unexpected arguments": both are named, with the closest command.
        let names = configuration.subcommands.compactMap { $0.configuration.commandName }
        let asked = given.first == "help" ? given.dropFirst().first : given.first
        if let asked, !asked.hasPrefix("-"), asked != "help", !names.contains(asked) {
            let suggestion = Suggestions.didYouMean(asked, in: names).map { "; \($0)" } ?? ""
            Console.errText("error: unknown command '\(asked)'\(suggestion)\ncommands: \(names.joined(separator: ", "))\n")
            Foundation.exit(MapcExitCode.usage)
        }
        // ArgumentParser's `help run extra` prints run's help, the extra word unread: no command
        // of mapc has commands of its own, so `help` takes one command name at most.
        if given.first == "help", let asked, let extra = given.dropFirst(2).first {
            Console.err("error: unexpected argument '\(extra)': `mapc help` takes one command's name (mapc \(asked) has no commands of its own); see `mapc help \(asked)`")
            Foundation.exit(MapcExitCode.usage)
        }
        if let asked, let problem = misusedVersionFlag(given, command: asked) {
            Console.err("error: \(problem)")
            Foundation.exit(MapcExitCode.usage)
        }
        if let problem = emptyPathProblem(given) {
            Console.err("error: \(problem)")
            Foundation.exit(MapcExitCode.usage)
        }
        if let problem = nonUTF8Problem() {
            Console.err("error: \(problem)")
            Foundation.exit(MapcExitCode.storeError)
        }
        do {
            var command = try parseAsRoot(arguments)
            // A project's policy files, compiled (or found compiled) and loaded into this process,
            // once the command line is known to be right and asks for one of mapc's commands:
            // `run --help` parses as ArgumentParser's help command, which needs no policy (and
            // must print even while a policy does not compile).
            if configuration.subcommands.contains(where: { $0 == type(of: command) }) { PolicyLoader.loadIfAny(given) }
            // A crash in a policy (the user's code, run here) is reported with which one it was.
            mapc_crash_note_install()
            try command.run()
            Foundation.exit(MapcExitCode.success)
        } catch let error as ExitCodeError {
            Foundation.exit(error.code)
        } catch {
            // `mapc eval -title` reads `-title` as an option ("Missing expected argument"): the
            // way to write such an expression is said, as the docs say it.
            if given.first == "eval", exitCode(for: error) == .validationFailure,
               let dashed = given.dropFirst().prefix(while: { $0 != "--" }).first(where: { $0.hasPrefix("-") && !$0.hasPrefix("--") && $0 != "-h" }) {
                Console.err(fullMessage(for: error))
                Console.err("help: '\(dashed)' was read as an option; an expression that starts with '-' goes after `--`, which ends the options: mapc eval -- '\(dashed)'")
                Foundation.exit(exitCode(for: error).rawValue)
            }
            // `--from -1`: a value that starts with '-' is read as an option, and the option as
            // missing its value; written `--from=-1`, it is the value (a version may be named so).
            let message = fullMessage(for: error)
            if exitCode(for: error) == .validationFailure, let option = message.range(of: "Missing value for '--").map({ message[$0.upperBound...].prefix { $0 != "'" && $0 != " " } }),
               let index = given.firstIndex(of: "--" + option), index + 1 < given.count, given[index + 1].hasPrefix("-"), given[index + 1] != "--" {
                Console.err(message)
                Console.err("help: '\(given[index + 1])' was read as an option; a value that starts with '-' is written with '=': --\(option)=\(given[index + 1])")
                Foundation.exit(exitCode(for: error).rawValue)
            }
            // Help and the version are results: written as any result is, a write that fails
            // (`mapc --help > /dev/full`) said and status 2, where ArgumentParser's print is
            // unchecked and exits 0. The text is ArgumentParser's, with its print's line end.
            if exitCode(for: error) == .success {
                Console.out(fullMessage(for: error) + "\n")
                Foundation.exit(MapcExitCode.success)
            }
            exit(withError: error)
        }
    }
}
