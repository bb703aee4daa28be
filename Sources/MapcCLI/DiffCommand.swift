import ArgumentParser
import MapcKit

/// `mapc diff VERSION VERSION`: a readable schema diff and the inference verdict.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show what changed between two versions and whether the step can be inferred."
    )

    @Argument(help: ArgumentHelp("The older version.", valueName: "from"))
    var from: String

    @Argument(help: ArgumentHelp("The newer version.", valueName: "to"))
    var to: String

    @OptionGroup var schemaOptions: SchemaOptions

    func run() throws {
        try reportingErrors {
            let catalog = try schemaOptions.readableCatalog()
            // Versions, or schema files (one that is missing said as such, exit 1).
            let source = try schemaOptions.schema(from, in: catalog), destination = try schemaOptions.schema(to, in: catalog)
            let result = MappingInference.infer(from: source, to: destination, through: catalog.versions(between: source, and: destination))
            var lines = ["\(source.displayName) -> \(to)"]
            lines.append("model hash  \(VersionHash.modelHash(of: source).prefix(12)) -> \(VersionHash.modelHash(of: destination).prefix(12))")
            let before = VersionHash.entityHashes(of: source), after = VersionHash.entityHashes(of: destination)
            for name in Set(before.keys).union(after.keys).sorted() where before[name] != after[name] {
                lines.append("  \(name): \(before[name].map { String($0.prefix(12)) } ?? "-") -> \(after[name].map { String($0.prefix(12)) } ?? "-")")
            }
            // Defaults too, which no migration applies (objects keep their values) but new objects get.
            let defaults = Self.defaultChanges(from: source, to: destination) + Self.indexChanges(from: source, to: destination, origins: result.origins)
            lines.append(result.changes.isEmpty && defaults.isEmpty ? "no changes" : "changes:")
            lines += result.changes.map { "  \($0)" } + defaults.map { "  \($0)" }
            lines += result.hints.map { "note: \($0)" }
            // Versions whose hashes are equal are one version to a store: nothing between them is ever applied.
            let alike = StoreFormat.all.filter { $0.entityHashes(of: source) == $0.entityHashes(of: destination) }
            if source.version != destination.version, !alike.isEmpty, !result.changes.isEmpty {
                // A Core Data store names no version: its hashes say which it is. mapc's format
                // names the version it was written at, and a run takes it through the steps.
                let inCoreData = alike.contains { $0.name == StoreFormat.coreData.name }, inMapc = alike.contains { $0.name == StoreFormat.mapc.name }
                var note = "note: a store of \(source.version) is a store of \(destination.version) (their \(alike.map(\.name).joined(separator: " and ")) hashes are the same)"
                if inCoreData {
                    note += ": a Core Data store, which names no version, is taken for \(destination.version), so a run migrates none and these changes are never applied to it; "
                        + "where one needs a migration (not a delete rule, a derivation or what was not imported), give what changed a versionHashModifier to make it one"
                }
                if inMapc { note += (inCoreData ? "; " : ": ") + "a store in mapc's format names its version, and a run takes it through the steps between" }
                lines.append(note)
            }
            let order = (try? catalog.position(of: source.version), try? catalog.position(of: destination.version))
            if source.version == destination.version {
                lines.append("verdict: the same version; nothing to migrate")
            } else if let from = order.0, let to = order.1, to < from {
                lines.append("verdict: a downgrade (\(catalog.orderDescription)); mapc never infers one: write the mapping from \(source.version) to \(destination.version) by hand")
            } else if result.problems.isEmpty, order.0 == nil || order.1 == nil, case .failure(let unknown) = Result(catching: { try catalog.orderedSchemas() }) {
                // Which is older cannot be told: `infer` and `run` refuse the step until it is declared.
                lines.append("verdict: inferable if \(source.version) is the older, which cannot be told: \(unknown)")
            } else if result.problems.isEmpty {
                lines.append("verdict: inferable (lightweight migration); `mapc infer \(English.option("--from", from)) \(English.option("--to", to))` shows the mapping")
                let dropped = result.droppedValues
                if !dropped.isEmpty {
                    lines.append("note: an inferred migration drops the values of \(dropped.joined(separator: ", ")); write a mapping file if they should move elsewhere "
                                 + "(`mapc run` asks for --accept-data-loss before it drops them)")
                }
            } else {
                lines.append("verdict: needs a mapping file, because:")
                lines += result.problems.map { "  - \($0)" }
            }
            Console.text(lines.joined(separator: "\n"))
        }
    }

    /// Indexes added or removed in entities kept, by the properties they index, entities and
    /// properties matched as the inference matched them (renames included): "changed entity Word:
    /// index byKey (key) added". A store's indexes, not its values: a migration writes the new
    /// version's.
    static func indexChanges(from source: Schema, to destination: Schema, origins: InferredOrigins) -> [SchemaChange] {
        var lines: [SchemaChange] = []
        for entity in destination.entities {
            guard let oldName = origins.entities[entity.name], let old = source.entity(named: oldName) else { continue }
            // Each index as the source names its properties (a renamed property is the same one).
            func sourceName(_ property: String) -> String {
                if case .carried(let from, _, _, _)? = origins.properties[entity.name]?[property] { return from }
                return property
            }
            let before = Set(old.indexes.map(\.properties)), after = Set(entity.indexes.map { $0.properties.map(sourceName) })
            for index in entity.indexes where !before.contains(index.properties.map(sourceName)) {
                lines.append(SchemaChange(kind: .changed, entity: entity.name, property: nil, detail: "index \(index.name) (\(index.properties.joined(separator: ", "))) added"))
            }
            for index in old.indexes where !after.contains(index.properties) {
                lines.append(SchemaChange(kind: .changed, entity: entity.name, property: nil, detail: "index \(index.name) (\(index.properties.joined(separator: ", "))) removed"))
            }
        }
        return lines
    }

    /// Attributes kept (by name or renaming identifier) whose default changed: "changed
    /// Session.speed: default 20 -> 2 (new objects only; stored values stay)".
    static func defaultChanges(from source: Schema, to destination: Schema) -> [SchemaChange] {
        var lines: [SchemaChange] = []
        for entity in destination.entities {
            guard let old = source.entity(named: entity.canonicalIdentifier) ?? source.entity(named: entity.name) else { continue }
            for attribute in entity.attributes {
                // Each default as its type writes it (a float's 0.1, not the double it widens to):
                // a type changed alone (float -> double, both 0.1) changes no default.
                let written = { (value: Value?, type: AttributeType) in value.map { DataFile.json($0, type: type).serialized() } }
                guard let before = old.attributes.first(where: { $0.canonicalIdentifier == attribute.canonicalIdentifier || $0.name == attribute.name }),
                      written(before.defaultValue, before.type) != written(attribute.defaultValue, attribute.type) else { continue }
                let shown = { (value: Value?, type: AttributeType) in value?.description(as: type) ?? "none" }
                // Made required at once, the new default is also what stored nils become (the
                // inferred step says "nil becomes …"): stored values do not all stay then.
                let fillsNils = LightweightInference.nilFill(from: before, to: attribute) != nil
                lines.append(SchemaChange(kind: .changed, entity: entity.name, property: attribute.name,
                                          detail: "default \(shown(before.defaultValue, before.type)) -> \(shown(attribute.defaultValue, attribute.type)) "
                                            + (fillsNils ? "(for new objects, and stored nils, as it is made required)" : "(new objects only; stored values stay)")))
            }
        }
        return lines
    }
}
