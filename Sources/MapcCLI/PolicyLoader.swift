import Foundation
import MapcKit
#if canImport(Glibc)
import Glibc
#endif

/// Custom policies written as Swift files kept with the project, compiled by mapc itself and
/// loaded into the running `mapc`.
///
/// The files are compiled by `swiftc` into a shared library against MapcKit's compiled module
/// (`PolicyKit`): MapcKit is not compiled again, so a first compile takes seconds. The library
/// is kept in the user's cache (`PolicyCache`) under a digest of mapc's build identity, the
/// compiler and the files, and loaded (`dlopen`) into this process, whose symbols it uses; it
/// registers each policy class with `PolicyRegistry.shared` under its name. An unchanged set of
/// files is loaded from the cache without compiling.
enum PolicyLoader {
    /// The commands whose work may call policies.
    static let commands: Set<String> = ["run", "check", "plan", "graph", "test", "lsp", "import"]
    /// The symbol the generated registration file exports.
    static let entryPoint = "mapc_register_project_policies"
    /// What a change of how policies are compiled changes, so that old entries are not reused.
    static let compileScheme = "mapc policies 1: swiftc -emit-library -parse-as-library -O"

    /// Whether the project has policy files (loaded, or built into this mapc): the user's code,
    /// which runs in the migration and may trap (a batch then migrates in workers: `BatchWorkers`).
    nonisolated(unsafe) static var hasProjectPolicies = false

    /// What loading the policy files found to warn of (`coreDataHookWarnings`).
    nonisolated(unsafe) static var warnings: [Diagnostic] = []
    /// Why the project's policies were not loaded for the language server, which starts without
    /// them and tells the editor (a policy half typed, or no compiler on an editor's PATH,
    /// turned every schema and mapping feature off, the reason on standard error only).
    nonisolated(unsafe) static var loadFailure: String?

    /// Loads the project's policies when the command may need them and the folder has any; exits
    /// with the documented status when they cannot be compiled or loaded.

    static func loadIfAny(_ arguments: [String]) {
        guard let command = arguments.first, commands.contains(command) else { return }
        if command == "lsp" {
            do {
                try load(arguments)
                if !warnings.isEmpty { Console.err(DiagnosticRenderer().render(warnings)) }
            } catch {
                loadFailure = "\(error)"
                PolicyRegistry.shared.markNotLoaded(because: "\(error)")
            }
            return
        }
        if command == "import" {
            // An imported mapping model is checked as `check` would check it, with the project's
            // policies; a data model needs none, and policies that fail to load do not stop an import.
            guard arguments.dropFirst().contains(where: ImportCommand.isMappingModel) else { return }
            do { try load(arguments) } catch {
                Console.err("warning: the project's policies were not loaded, so the imported mapping is checked without them: \(error)")
                PolicyRegistry.shared.markNotLoaded(because: "\(error)")
            }
            return
        }
        // `check` of named files needs policies only for a mapping among them (a schema checked
        // from another folder compiled the project's policies for nothing).
        // (A folder named with --policies is still read: one that does not exist is an error.)
        if command == "check", !checksAMapping(arguments.dropFirst()), !policiesFolder(arguments).named { return }
        do {
            try load(arguments)
            // `check` counts them with its own (`--strict`, `--format json`); the others say them.
            if command != "check", !warnings.isEmpty { Console.err(DiagnosticRenderer().render(warnings)) }
        } catch let error as PolicyError {
            Console.err("error: \(error.description)")
            exit(error.status)
        } catch {
            Console.err("error: \(error)")
            exit(MapcExitCode.storeError)
        }
    }

    /// Whether `check`'s arguments may check a mapping, whose policies must then be known: when
    /// they name no file (the whole project is checked), or name a file that reads as a mapping.
    static func checksAMapping(_ arguments: ArraySlice<String>) -> Bool {
        let files = arguments.filter { Files.kind(of: Files.realPath($0)) == .regularFile }
        guard !files.isEmpty else { return true }
        return files.contains { path in
            // A file mapc cannot read as YAML names no policy `check` could look up.
            guard let source = try? SourceFile.read(path: path) else { return false }
            return ProjectFileKind.recognised(source) == .mapping
        }
    }

    /// The policies folder a command's arguments mean: `--policies DIR` when given, else the
    /// `policies` folder beside the schemas folder (`--schemas DIR`, `./schemas` by default): one
    /// rule, which `PolicyRegistry`'s hint and docs/policies.md state.
    static func policiesFolder(_ arguments: [String]) -> (path: String, named: Bool) {
        func value(of option: String) -> String? {
            for (index, argument) in arguments.enumerated() {
                if argument == option, index + 1 < arguments.count { return arguments[index + 1] }
                if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
            }
            return nil
        }
        if let folder = value(of: "--policies") { return (folder, true) }
        return (SchemaOptions.projectFolder("policies", besideSchemas: value(of: "--schemas") ?? "./schemas"), false)
    }

    /// The names a policy class inherits from directly: MapcKit's base class, plain or qualified.
    static let basePolicyClasses: Set<String> = ["EntityMigrationPolicy", "MapcKit.EntityMigrationPolicy"]

    /// The policy classes some files define, to register: classes declared at the top level of a
    /// file (not nested, not `private` or `fileprivate`, not in a comment, a string or an
    /// `#if false` block) that inherit from `EntityMigrationPolicy`, directly or through another
    /// such class of the files.
    static func policyClasses(in texts: [String]) -> [String] {
        var inherits: [(name: String, base: String)] = []
        for text in texts { inherits += topLevelClasses(in: code(of: text)) }
        var policies = basePolicyClasses
        var found: [String] = []
        var grew = true
        while grew {
            grew = false
            for (name, base) in inherits where policies.contains(base) && !policies.contains(name) {
                policies.insert(name)
                found.append(name)
                grew = true
            }
        }
        return found
    }

    /// The top-level classes of the policy files that are not registered as policies, each with
    /// where it is and why, in a sentence saying what to change: declared `private` or
    /// `fileprivate` (the file registering the classes cannot see it), or inheriting from no
    /// policy class (`policies`: the policy classes of the files, and `EntityMigrationPolicy`).
    static func unregisteredClasses(in sources: [(path: String, text: String)], policies: Set<String>) -> [(name: String, reason: String)] {
        var found: [(name: String, reason: String)] = []
        for source in sources {
            for declaration in everyClassDeclaration(in: code(of: source.text)) where declaration.scopes.isEmpty && !policies.contains(declaration.name) {
                let place = "\(declaration.name) (\(source.path):\(declaration.line))"
                if declaration.isPrivate {
                    guard let base = declaration.base, policies.contains(base) else { continue }
                    found.append((declaration.name, "\(place) is declared private, and the file mapc registers the policy classes in cannot see it: remove `private`"))
                } else {
                    let inherits = declaration.base.map { "inherits from \($0), not EntityMigrationPolicy" } ?? "inherits from nothing"
                    found.append((declaration.name, "\(place) \(inherits): declare it `class \(declaration.name): EntityMigrationPolicy`"))
                }
            }
        }
        return found
    }

    /// The classes declared in `.swift` files in subfolders of the policies folder, which is not
    /// compiled (only the files directly in it are), each with where it is and what to do. Looks
    /// at no more than 1,000 entries and passes over files it cannot read: this is for a message.
    static func classesInSubfolders(of folder: String) -> [(name: String, reason: String)] {
        guard let entries = FileManager.default.enumerator(atPath: folder) else { return [] }
        var found: [(name: String, reason: String)] = [], seen = 0
        while let entry = entries.nextObject() as? String, seen < 1_000 {
            seen += 1
            guard entry.contains("/"), entry.hasSuffix(".swift") else { continue }
            let path = (folder as NSString).appendingPathComponent(entry)
            guard let data = FileManager.default.contents(atPath: path), data.count <= SourceFile.maxBytes, let text = String(data: data, encoding: .utf8) else { continue }
            for declaration in everyClassDeclaration(in: code(of: text)) where declaration.scopes.isEmpty {
                found.append((declaration.name, "\(declaration.name) is declared in \(path):\(declaration.line), in a subfolder of the policies folder, and mapc compiles only the .swift files directly in \(folder): move the file there"))
            }
        }
        return found
    }

    /// Where each policy class of a folder's files is declared, by the name a mapping gives it
    /// (`Name`, or `Outer.Name` nested): the class's name in its file. Files that cannot be read
    /// are passed over (this is for an editor's definitions; `load` says what is wrong with them).
    static func declarations(inFolder folder: String) -> [String: FileLocation] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { $0.hasSuffix(".swift") }.sorted() ?? []
        let sources: [(path: String, text: String)] = names.compactMap { name in
            let path = (folder as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path), data.count <= SourceFile.maxBytes, let text = String(data: data, encoding: .utf8) else { return nil }
            return (path, text)
        }
        let policies = basePolicyClasses.union(policyClasses(in: sources.map(\.text)))
        var found: [String: FileLocation] = [:]
        for source in sources {
            let code = code(of: source.text), lines = SourceFile.lines(of: source.text)
            let declared = classDeclarations(in: code).filter { $0.scopes.isEmpty && policies.contains($0.name) }.map { ($0.name, $0.name, $0.line) }
                + nestedPolicyClasses(in: code, policies: policies).map { ($0.qualifiedName, String($0.qualifiedName.split(separator: ".").last ?? ""), $0.line) }
            for (qualified, name, line) in declared where found[qualified] == nil && line >= 1 && line <= lines.count {
                // The name's column, after `class` on its line.
                let text = lines[line - 1]
                let at = text.range(of: "class\\s+\(NSRegularExpression.escapedPattern(for: name))\\b", options: .regularExpression)
                let column = at.map { text[..<$0.upperBound].unicodeScalars.count - name.unicodeScalars.count + 1 } ?? 1
                found[qualified] = FileLocation(path: source.path, line: line, column: column)
            }
        }
        return found
    }

    /// Core Data's hooks, by the start of their declarations, and mapc's that a port writes instead.
    static let coreDataHooks: [(pattern: String, core: String, mapc: String)] = [
        (#"createDestinationInstances\s*\(\s*forSource\b"#, "createDestinationInstances(forSource:in:manager:)", "override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager)"),
        (#"createRelationships\s*\(\s*forDestination\b"#, "createRelationships(forDestination:in:manager:)", "override func createRelationships(for destination: DestinationObject, mapping: EntityMapping, manager: MigrationManager)"),
        (#"endInstanceCreation\s*\(\s*forMapping\b"#, "endInstanceCreation(forMapping:manager:)", "override func endInstanceCreation(_ mapping: EntityMapping, manager: MigrationManager)"),
        (#"endRelationshipCreation\s*\(\s*forMapping\b"#, "endRelationshipCreation(forMapping:manager:)", "override func endRelationshipCreation(_ mapping: EntityMapping, manager: MigrationManager)"),
        (#"performCustomValidation\s*\(\s*forMapping\b"#, "performCustomValidation(forMapping:manager:)", "override func performCustomValidation(_ mapping: EntityMapping, manager: MigrationManager)"),
        (#"begin\s*\(\s*_\s+\w+\s*:\s*NSEntityMapping\b"#, "begin(_:with:)", "override func begin(_ mapping: EntityMapping, manager: MigrationManager)"),
        (#"end\s*\(\s*_\s+\w+\s*:\s*NSEntityMapping\b"#, "end(_:manager:)", "override func end(_ mapping: EntityMapping, manager: MigrationManager)"),
    ]

    /// Warnings for methods declared with Core Data's hooks' names and labels: a port that keeps
    /// them compiles (they override nothing, and need no `override`) and is never called, the
    /// mapping's default running in silence.
    static func coreDataHookWarnings(in sources: [(path: String, text: String)]) -> [Diagnostic] {
        var warnings: [Diagnostic] = []
        for source in sources {
            let lines = SourceFile.lines(of: code(of: source.text))
            for (index, line) in lines.enumerated() {
                for hook in coreDataHooks {
                    guard let found = line.range(of: #"\bfunc\s+"# + hook.pattern, options: .regularExpression) else { continue }
                    let column = line[..<found.lowerBound].unicodeScalars.count + 1
                    warnings.append(.warning("\(hook.core) is Core Data's hook, which mapc never calls: as written this method runs for no object, and the mapping's default does its work",
                                             at: FileLocation(path: source.path, line: index + 1, column: column), length: 4,
                                             fix: "declare it as mapc's, `\(hook.mapc)` (docs/core-data.md)"))
                }
            }
        }
        return warnings
    }

    /// Whether a character ends a line of Swift: `"\r\n"` is one Character, not `"\n"`, so a file
    /// saved with CRLF line ends has no `"\n"` at all.
    static func isLineEnd(_ character: Character) -> Bool {
        character == "\n" || character == "\r\n" || character == "\r"
    }

    /// The text with comments, string literals and `#if false` blocks blanked out (newlines kept).
    static func code(of text: String) -> String {
        var result = ""
        let characters = Array(text)
        var index = 0, blockDepth = 0, inLineComment = false, inString = false, inMultiline = false, skippingFalse = false
        func at(_ string: String) -> Bool {
            let target = Array(string)
            return index + target.count <= characters.count && Array(characters[index..<(index + target.count)]) == target
        }
        while index < characters.count {
            let character = characters[index]
            let lineStart = index == 0 || isLineEnd(characters[index - 1])
            if lineStart && !inString && !inMultiline && blockDepth == 0 {
                let line = String(characters[index...].prefix { !isLineEnd($0) }).trimmingCharacters(in: .whitespaces)
                if line.hasPrefix("#if false") { skippingFalse = true } else if skippingFalse && line.hasPrefix("#endif") { skippingFalse = false }
            }
            if isLineEnd(character) { inLineComment = false; result.append(character); index += 1; continue }
            if skippingFalse || inLineComment { result.append(" "); index += 1; continue }
            if blockDepth > 0 {
                if at("*/") { blockDepth -= 1; result += "  "; index += 2; continue }
                if at("/*") { blockDepth += 1; result += "  "; index += 2; continue }
                result.append(" "); index += 1; continue
            }
            if inMultiline {
                if at("\"\"\"") { inMultiline = false; result += "   "; index += 3; continue }
                result.append(" "); index += 1; continue
            }
            if inString {
                if character == "\\" { result += "  "; index += 2; continue }
                if character == "\"" { inString = false }
                result.append(" "); index += 1; continue
            }
            if at("//") { inLineComment = true; result += "  "; index += 2; continue }
            if at("/*") { blockDepth = 1; result += "  "; index += 2; continue }
            if at("\"\"\"") { inMultiline = true; result += "   "; index += 3; continue }
            if character == "\"" { inString = true; result.append(" "); index += 1; continue }
            result.append(character)
            index += 1
        }
        return result
    }

    /// `class Name: Base` declarations at brace depth 0, not private.
    static func topLevelClasses(in code: String) -> [(name: String, base: String)] {
        classDeclarations(in: code).filter { $0.scopes.isEmpty }.map { ($0.name, $0.base) }
    }

    /// The classes declared inside another type (not in a function's body) that inherit from one
    /// of `policies`, by their qualified name (`Outer.Name`), with the line of their declaration.
    static func nestedPolicyClasses(in code: String, policies: Set<String>) -> [(qualifiedName: String, line: Int)] {
        classDeclarations(in: code).filter { !$0.scopes.isEmpty && policies.contains($0.base) }.compactMap { declaration in
            let outer = declaration.scopes.compactMap { $0 }
            guard outer.count == declaration.scopes.count else { return nil }
            return ((outer + [declaration.name]).joined(separator: "."), declaration.line)
        }
    }

    /// Every non-private `class Name: Base` declaration, with the types (by name; nil for a body
    /// of another kind, a function's) whose braces enclose it, and its line.
    private static func classDeclarations(in code: String) -> [(scopes: [String?], name: String, base: String, line: Int)] {
        everyClassDeclaration(in: code).compactMap { declaration in
            guard !declaration.isPrivate, let base = declaration.base else { return nil }
            return (declaration.scopes, declaration.name, base, declaration.line)
        }
    }

    /// Every `class Name` declaration (private, or inheriting from nothing, too), with the types
    /// (by name; nil for a body of another kind, a function's) whose braces enclose it, and its line.
    private static func everyClassDeclaration(in code: String) -> [(scopes: [String?], name: String, base: String?, isPrivate: Bool, line: Int)] {
        var found: [(scopes: [String?], name: String, base: String?, isPrivate: Bool, line: Int)] = []
        let typeKinds: Set<String> = ["class", "struct", "enum", "extension", "actor"]
        var scopes: [String?] = [], line = 1, tokens: [String] = [], current = ""
        func flush() {
            if !current.isEmpty { tokens.append(current); current = "" }
        }
        for character in code {
            switch character {
            case "{":
                flush()
                // Its line is the `class` keyword's, which may be above the brace's.
                found += declarations(in: tokens).map { (scopes, $0.name, $0.base, $0.isPrivate, line - $0.linesToBrace) }
                scopes.append(tokens.lastIndex { typeKinds.contains($0) }.flatMap { index in tokens[(index + 1)...].first { $0 != "\n" } })
                tokens = []
            case "}":
                flush()
                if !scopes.isEmpty { scopes.removeLast() }
                tokens = []
            case ":", ",", "<", ">":
                flush()
                tokens.append(String(character))
            default:
                if character.isLetter || character.isNumber || character == "_" || character == "." { current.append(character) } else {
                    flush()
                    if isLineEnd(character) || character == ";" { tokens.append("\n") }
                    if isLineEnd(character) { line += 1 }
                }
            }
        }
        return found
    }

    /// The class a run of tokens before a `{` declares, with its first inherited type (nil for
    /// none), whether it is `private` or `fileprivate`, and how many lines below its `class`
    /// keyword the brace is. Nothing for a generic class (its base is not read) or a `class func`.
    private static func declarations(in tokens: [String]) -> [(name: String, base: String?, isPrivate: Bool, linesToBrace: Int)] {
        guard let classIndex = tokens.lastIndex(of: "class") else { return [] }
        let after = tokens[(classIndex + 1)...].filter { $0 != "\n" }
        let notNames: Set<String> = ["func", "var", "let", "subscript", "init", "deinit", "static", "final", "override", "open", "public",
                                     "internal", "private", "fileprivate", "required", "convenience", "typealias", "protocol"]
        guard let name = after.first, !notNames.contains(name), name.first.map({ $0.isLetter || $0 == "_" }) == true else { return [] }
        let base: String?
        if after.count >= 3, after[after.startIndex + 1] == ":" { base = after[after.startIndex + 2] } else if after.count == 1 { base = nil } else { return [] }
        // The modifiers on the declaration's own line.
        let lineStart = tokens[..<classIndex].lastIndex(of: "\n").map { $0 + 1 } ?? 0
        let isPrivate = tokens[lineStart..<classIndex].contains { $0 == "private" || $0 == "fileprivate" }
        return [(name, base, isPrivate, tokens[classIndex...].filter { $0 == "\n" }.count)]
    }

    private static func load(_ arguments: [String]) throws {
        let folder = policiesFolder(arguments)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter { $0.hasSuffix(".swift") }.sorted() ?? []
        for unregistered in classesInSubfolders(of: folder.path) { PolicyRegistry.shared.markUnregistered(unregistered.name, because: unregistered.reason) }
        guard !names.isEmpty else {
            guard folder.named else { return }
            switch Files.kind(of: Files.realPath(folder.path)) {
            case .directory: throw PolicyError("\(folder.path) holds no .swift policy files", status: MapcExitCode.invalidInput)
            // Exit 2, as any folder named that does not exist (`--schemas`, `--mappings`).
            case .missing: throw PolicyError("the policies folder \(folder.path) does not exist; check the --policies path", status: MapcExitCode.storeError)
            default: throw PolicyError("\(folder.path) is not a folder; --policies names the folder that holds the policy files", status: MapcExitCode.invalidInput)
            }
        }
        var sources: [(path: String, text: String)] = []
        for name in names {
            let path = (folder.path as NSString).appendingPathComponent(name)
            let data = try Files.read(path, what: "the policy file")
            guard let text = String(data: data, encoding: .utf8) else {
                throw PolicyError("the policy file \(path) is not UTF-8 text", status: MapcExitCode.invalidInput)
            }
            sources.append((path, text))
        }
        warnings = coreDataHookWarnings(in: sources)
        let classes = policyClasses(in: sources.map(\.text))
        let policies = basePolicyClasses.union(classes)
        // A policy class nested in a type is not registered: a mapping naming it `Outer.Name` must
        // not get a top-level `Name` instead (the name after a module's is the class's).
        for source in sources {
            for nested in nestedPolicyClasses(in: code(of: source.text), policies: policies) {
                PolicyRegistry.shared.markNested(nested.qualifiedName, at: "\(source.path):\(nested.line)")
            }
        }
        let unregistered = unregisteredClasses(in: sources, policies: policies)
        for class_ in unregistered { PolicyRegistry.shared.markUnregistered(class_.name, because: class_.reason) }
        guard !classes.isEmpty else {
            throw PolicyError("the policy files (\(sources.map(\.path).joined(separator: ", "))) define no class inheriting from EntityMigrationPolicy"
                              + (unregistered.isEmpty ? "" : ": " + unregistered.map(\.reason).joined(separator: "; ")), status: MapcExitCode.invalidInput)
        }
        hasProjectPolicies = true
        // A mapc built with these policies (an app's own) has them already.
        if classes.allSatisfy({ PolicyRegistry.shared.policy(named: $0) != nil }) { return }

        let kit = try PolicyKit.find()
        let cache = PolicyCache.current
        var hashed = [compileScheme, PolicyKit.buildIdentity, kit.toolchain]
        for source in sources { hashed += [(source.path as NSString).lastPathComponent, source.text] }
        let key = VersionHash.sha256(hashed.joined(separator: "\u{0}"))
        let library = try cache.verifiedLibrary(key: key) ?? compile(sources.map(\.path), classes: classes, kit: kit, cache: cache, key: key)
        try register(library)
        PolicyRegistry.shared.noteCompiled(from: folder.path)
    }

    /// Compiles the files into a library, with a generated file registering `classes`, and keeps
    /// it in the cache. Two processes compiling the same files take turns.
    private static func compile(_ paths: [String], classes: [String], kit: PolicyKit, cache: PolicyCache, key: String) throws -> OpenLibrary {
        let entries = try cache.entries()
        let lock = open(entries.appendingPathComponent(".lock").path, O_CREAT | O_RDWR, 0o600)
        defer { if lock >= 0 { close(lock) } }
        if lock >= 0 { flock(lock, LOCK_EX) }
        if let done = try cache.verifiedLibrary(key: key) { return done }

        let compiler = try Compiler.matching(kit)
        let work = Files.fileURL(NSTemporaryDirectory()).appendingPathComponent("mapc-policies-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let registration = work.appendingPathComponent("MapcRegisterProjectPolicies.swift")
        try Data("""
        // Generated by mapc: registers the project's policies when mapc loads them.
        import MapcKit

        /// Registers each policy class of the project under its name (backquoted: a class may be
        /// named like a keyword; the registry by its module: one may be named like it).
        @_cdecl("\(entryPoint)")
        public func mapcRegisterProjectPolicies() {
        \(classes.map { "    MapcMigration.PolicyRegistry.shared.register(`\($0)`.self, as: \(String(reflecting: $0)))" }.joined(separator: "\n"))
        }

        """.utf8).write(to: registration)
        let output = work.appendingPathComponent(PolicyCache.libraryName)
        var arguments = ["-emit-library", "-parse-as-library", "-O", "-module-name", PolicyRegistry.compiledModule,
                         "-module-cache-path", cache.root.appendingPathComponent("module-cache").path, "-I", kit.modules.path]
        for map in kit.moduleMaps { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        arguments += ["-o", output.path] + paths + [registration.path]

        let what = "the policies in \(paths.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")) (\(classes.joined(separator: ", ")))"
        let progress = CompileProgress(what: what)
        let result = try compiler.run(arguments)
        progress.finish(succeeded: result.status == 0)
        guard result.status == 0 else {
            // The compiler's own diagnostics, with their source lines, at the project's files.
            throw PolicyError("the policies do not compile:\n\(result.output.trimmingCharacters(in: .whitespacesAndNewlines))", status: MapcExitCode.invalidInput)
        }
        // Warnings too (an unused value, a deprecated call), as the compiler words them.
        if result.output.contains("warning:") { Console.err(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return try cache.store(output, key: key)
    }

    /// Loads a compiled library into this process and runs its registration.
    private static func register(_ library: OpenLibrary) throws {
        defer { close(library.descriptor) }
        // A policy's prints go to standard error, not into the results a script reads.
        Console.keepStandardOutputFromPolicies()
        guard let handle = dlopen(library.loadName, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            throw PolicyError("cannot load the compiled policies (\(reason)); if this is your own mapc, link it with -Xlinker --export-dynamic, "
                              + "or register your policies in it (docs/policies.md)", status: MapcExitCode.storeError)
        }
        guard let symbol = dlsym(handle, entryPoint) else {
            throw PolicyError("the compiled policies \(library.path) have no \(entryPoint); delete the folder and run again", status: MapcExitCode.storeError)
        }
        typealias Registration = @convention(c) () -> Void
        unsafeBitCast(symbol, to: Registration.self)()
    }
}

/// The Swift compiler that compiles policies: `$MAPC_SWIFTC`, else `swiftc` on `PATH`, which must
/// be the one that built mapc (a module is read only by the compiler that wrote it).
struct Compiler {
    var path: String

    /// The compiler, checked against the kit's.
    static func matching(_ kit: PolicyKit) throws -> Compiler {
        let environment = ProcessInfo.processInfo.environment
        let compiler = Compiler(path: environment["MAPC_SWIFTC"].flatMap { $0.isEmpty ? nil : $0 } ?? "swiftc")
        var isFolder: ObjCBool = false
        if compiler.path.contains("/"), FileManager.default.fileExists(atPath: compiler.path, isDirectory: &isFolder), isFolder.boolValue {
            // Foundation says a folder "doesn't exist" when asked to run it: said as a folder, naming
            // the compiler inside when it holds one (a toolchain's root or its `bin`).
            let inside = ["swiftc", "bin/swiftc", "usr/bin/swiftc"].map { (compiler.path as NSString).appendingPathComponent($0) }
            let suggested = inside.first { FileManager.default.isExecutableFile(atPath: $0) }
            throw PolicyError("MAPC_SWIFTC is \(compiler.path), a folder, not the Swift compiler: set it to the swiftc of the toolchain that built mapc "
                              + "(\(PolicyKit.version(in: kit.toolchain)))" + (suggested.map { ", \($0)" } ?? ", such as <toolchain>/usr/bin/swiftc"), status: MapcExitCode.storeError)
        }
        let version: (status: Int32, output: String)
        do { version = try compiler.run(["--version"]) } catch {
            throw PolicyError("mapc compiles policy files with the Swift compiler, and \(compiler.path) cannot be run (\(Files.reason(of: error))); put the toolchain that built mapc "
                              + "(\(PolicyKit.version(in: kit.toolchain))) on PATH, or set MAPC_SWIFTC to its swiftc", status: MapcExitCode.storeError)
        }
        let found = PolicyKit.version(in: version.output), expected = PolicyKit.version(in: kit.toolchain)
        guard version.status == 0 else {
            // It did not say its version: not a mismatch, a compiler that could not run here (not on
            // PATH, a temporary folder it cannot use), in its own words.
            let said = version.output.split(separator: "\n").prefix(3).joined(separator: "; ")
            let temporary = said.contains("TmpDir") || said.contains("permissionDenied") ? " (it needs a temporary folder it can write: TMPDIR)" : ""
            throw PolicyError("mapc compiles policy files with the Swift compiler, and `\(compiler.path) --version` failed (exit status \(version.status): \(said.isEmpty ? "nothing said" : said))\(temporary); "
                              + "put the toolchain that built mapc (\(expected)) on PATH, or set MAPC_SWIFTC to its swiftc", status: MapcExitCode.storeError)
        }
        guard found == expected else {
            throw PolicyError("mapc was built with \(expected), but \(compiler.path) is \(found.isEmpty ? "not a Swift compiler" : found); policy files are compiled "
                              + "against mapc's modules, which only the compiler that built them reads: put that toolchain first on PATH or set MAPC_SWIFTC to its swiftc, "
                              + "or rebuild mapc with this one", status: MapcExitCode.storeError)
        }
        return compiler
    }

    /// Runs the compiler with the arguments: its status and what it printed (both streams).
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        if path.contains("/") {
            process.executableURL = Files.fileURL(path)
            process.arguments = arguments
        } else {
            process.executableURL = Files.fileURL("/usr/bin/env")
            process.arguments = [path] + arguments
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}

/// What a compile shows while it runs: on a terminal a line naming what is compiled with the
/// seconds so far, redrawn each half second; otherwise one line when it starts and one when it ends.
final class CompileProgress: @unchecked Sendable {
    private let what: String
    private let started = Date()
    private let isTerminal = Console.redrawsLines
    private let lock = NSLock()
    private var done = false

    init(what: String) {
        self.what = what
        if isTerminal {
            let thread = Thread { [weak self] in
                while let self, !self.isDone {
                    self.draw()
                    Thread.sleep(forTimeInterval: 0.5)
                }
            }
            thread.start()
        } else {
            Console.err("compiling \(what)…")
        }
    }

    private var isDone: Bool { lock.withLock { done } }

    private func draw() {
        lock.withLock {
            guard !done else { return }
            Console.errText("compiling \(what)… \(Int(Date().timeIntervalSince(started))) s", redrawing: true)
        }
    }

    /// Ends the display with how long the compile took.
    func finish(succeeded: Bool) {
        lock.withLock {
            done = true
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            let line = succeeded ? "compiled \(what) in \(seconds) s" : "compiling \(what) failed after \(seconds) s"
            Console.errText(line + "\n", redrawing: isTerminal)
        }
    }
}
