import ArgumentParser
import Foundation
import MapcKit

/// `mapc eval EXPRESSION`: evaluates an expression or predicate, for people writing mappings.
struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Evaluate an expression or predicate against a JSON object or the objects of a store.",
        discussion: """
        Prints each result as JSON, one per line. With --object the JSON object is bound to $source and SELF. \
        With --store and --entity the expression is checked against the schema, then evaluated for each object of the \
        entity (sub-entities included) that passes --where, and each line names its object: Note 'n1': "Groceries"; \
        $id is the object's id (--where '$id == "n1"'). \
        Errors point at the expression with a caret.
        """
    )

    @Argument(help: ArgumentHelp("The expression, in NSExpression / NSPredicate format syntax.", valueName: "expression"))
    var expression: String

    @Flag(help: "Evaluate the text as a predicate (prints true or false).")
    var predicate = false

    @Option(help: ArgumentHelp("A JSON object bound to $source and SELF; '@file.json' reads a file.", valueName: "json"))
    var object: String?

    @Option(help: ArgumentHelp("A store whose objects to evaluate against (with --entity).", valueName: "store"))
    var store: String?

    @Option(help: ArgumentHelp("The entity whose objects to evaluate against.", valueName: "entity"))
    var entity: String?

    @Option(name: .customLong("where"), help: ArgumentHelp("Only objects for which this predicate holds.", valueName: "predicate"))
    var wherePredicate: String?

    @OptionGroup var schemaOptions: SchemaOptions

    func validate() throws {
        if store != nil && entity == nil { throw ValidationError("--store needs --entity, the entity whose objects to evaluate") }
        if entity != nil && store == nil { throw ValidationError("--entity needs --store") }
        if object != nil && store != nil { throw ValidationError("use either --object or --store, not both") }
        if wherePredicate != nil && store == nil { throw ValidationError("--where applies to --store evaluations") }
    }

    func run() throws {
        let source = ExpressionSource(text: expression, origin: FileLocation(path: "<expression>", line: 1, column: 1))
        let whereSource = wherePredicate.map { ExpressionSource(text: $0, origin: FileLocation(path: "<where>", line: 1, column: 1)) }
        let renderer = DiagnosticRenderer(sources: [source.standaloneFile] + (whereSource.map { [$0.standaloneFile] } ?? []))
        func parse(_ source: ExpressionSource) throws -> Expr {
            switch source.parse() {
            case .success(let parsed): return parsed
            case .failure(let diagnostic):
                Console.err(renderer.render(diagnostic))
                throw ExitCodeError(MapcExitCode.invalidInput)
            }
        }
        let parsed = try parse(source)
        let filter = try whereSource.map(parse)
        func report(_ error: ExpressionError, in source: ExpressionSource, object: String? = nil) -> ExitCodeError {
            var diagnostic = error.diagnostic(in: source)
            if let object { diagnostic.message += " (evaluating \(object))" }
            Console.err(renderer.render(diagnostic))
            return ExitCodeError(MapcExitCode.invalidInput)
        }
        try reportingErrors {
            if let store, let entity {
                let opened = try Store.open(at: store, catalog: try schemaOptions.readableCatalog(), readOnly: true)
                guard opened.schema.entity(named: entity) != nil else {
                    throw MapcError.notFound("no entity '\(entity)' in version \(opened.schema.version)" + (Suggestions.didYouMean(entity, in: opened.schema.entities.map(\.name)).map { "; \($0)" } ?? ""))
                }
                var diagnostics: [Diagnostic] = []
                var checker = ExpressionChecker(scope: CheckScope(schema: opened.schema, source: entity, variables: ["id": .string]), source: source)
                if predicate { checker.checkPredicate(parsed) } else { checker.check(parsed) }
                diagnostics += checker.diagnostics
                if let filter, let whereSource {
                    var whereChecker = ExpressionChecker(scope: CheckScope(schema: opened.schema, source: entity, variables: ["id": .string]), source: whereSource)
                    whereChecker.checkPredicate(filter)
                    diagnostics += whereChecker.diagnostics
                }
                if !diagnostics.isEmpty { Console.err(renderer.render(diagnostics)) }
                if diagnostics.hasErrors { throw ExitCodeError(MapcExitCode.invalidInput) }
                let graph = StoreObjectGraph(store: opened)
                let evaluator = Evaluator(context: EvaluationContext(graph: graph))
                var evaluated = 0
                // A float attribute read as it is (`price`, `$source.price`) is shown as `dump` shows it
                // (0.1, not the double 0.10000000149011612 the language computes with).
                var floatKey = false
                if case .keyPath(let root, let components) = parsed.kind, root.kind == .evaluatedObject || root.kind == .variable("source"), components.count == 1,
                   case .key(let key, _) = components[0], let entityDescription = opened.schema.entity(named: entity),
                   case .attribute(let attribute)? = opened.schema.property(named: key, in: entityDescription), attribute.type == .float {
                    floatKey = true
                }
                func shown(_ value: EvalValue) -> String {
                    if floatKey, case .scalar(.double(let d)) = value { return DataFile.json(.double(d), type: .float).serialized() }
                    // Dates as the store's dump writes them: text that reads back as the stored instant.
                    return value.json(dateEpoch: opened.strategy.dateEpoch).serialized()
                }
                for member in opened.schema.entity(named: entity).map({ opened.schema.hierarchy(under: $0) }) ?? [] where !member.isAbstract {
                    // Batches are read and released before evaluating: expressions read the store again.
                    try opened.forEachBatch(ofExactEntity: member.name) { batch in for object in batch {
                        graph.remember(object)
                        let ref = EvalValue.object(graph.ref(object))
                        evaluator.context.evaluatedObject = ref
                        evaluator.context.variables["source"] = ref
                        evaluator.context.variables["id"] = .scalar(.string(object.id))
                        do {
                            // As a mapping's filter selects: a fetch of the store's objects (nil in a comparison is unknown).
                            if let filter, !(try evaluator.evaluateStorePredicate(filter)) { continue }
                        } catch let error as ExpressionError {
                            throw report(error, in: whereSource!, object: "\(object.entity) '\(object.id)'")
                        }
                        evaluated += 1
                        do {
                            let result = predicate ? String(try evaluator.evaluatePredicate(parsed)) : shown(try evaluator.evaluate(parsed))
                            Console.out("\(object.entity) '\(object.id)': \(result)")
                        } catch let error as ExpressionError {
                            throw report(error, in: source, object: "\(object.entity) '\(object.id)'")
                        }
                    } }
                }
                if evaluated == 0 { Console.err("note: no \(entity) object" + (filter == nil ? "s in the store" : " passes --where")) }
                return
            }
            // Checked as far as no schema allows: literals and operators (`1 == "1"` is an error
            // here as in a mapping file); keys are of any type.
            var checker = ExpressionChecker(scope: CheckScope(schema: nil, source: nil), source: source)
            if predicate { checker.checkPredicate(parsed) } else { checker.check(parsed) }
            if !checker.diagnostics.isEmpty { Console.err(renderer.render(checker.diagnostics)) }
            if checker.diagnostics.hasErrors { throw ExitCodeError(MapcExitCode.invalidInput) }
            var root: EvalValue = .null
            var graph: any ObjectGraph = InMemoryObjectGraph(objects: [], schema: nil)
            if let object {
                let text: Data, origin: String
                if object.hasPrefix("@") {
                    origin = String(object.dropFirst())
                    text = try Files.read(origin, what: "the object's JSON")
                } else {
                    (text, origin) = (Data(object.utf8), "--object")
                }
                // Its mistakes are placed in the file it came from.
                let json = try JSONValue.parse(text, path: origin)
                guard case .object = json else {
                    throw MapcError.input("\(origin) is not a JSON object: --object binds $source to an object (`{\"title\": \"Groceries\"}`)")
                }
                let jsonGraph = try JSONObjectGraph(json: json)
                root = jsonGraph.root
                graph = jsonGraph
            }
            let evaluator = Evaluator(context: EvaluationContext(graph: graph, evaluatedObject: root, variables: ["source": root]))
            do {
                Console.out(predicate ? String(try evaluator.evaluatePredicate(parsed)) : try evaluator.evaluate(parsed).json.serialized())
            } catch let error as ExpressionError {
                throw report(error, in: source)
            }
        }
    }
}
