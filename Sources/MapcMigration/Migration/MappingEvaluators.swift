import Foundation
import MapcFoundation
import MapcModel
import MapcStore

/// The evaluators of a run, one per entity mapping (each with its policy's functions), and what
/// each has bound: `$entityMapping` once, `$source` and `$destination` once per object, not per
/// expression, since they only change with the objects (`$propertyMapping` per expression, in
/// the mappings that read it). A failure comes back located in the
/// mapping file, naming the mapping, the property and the object.
final class MappingEvaluators {
    private let mapping: MappingModel
    private let evaluators: [Evaluator]
    /// The objects each mapping's evaluator has bound to `$source` and `$destination`.
    private var bound: [(source: ObjectRef?, destination: ObjectRef?)]
    /// Whether each mapping's expressions read `$propertyMapping`, bound per expression only there.
    private let readsPropertyMapping: [Bool]

    /// Evaluators reading source objects from `graph`, one per mapping with its policy's functions.
    init(mapping: MappingModel, policies: [EntityMigrationPolicy], graph: StoreObjectGraph, now: Date) {
        self.mapping = mapping
        evaluators = zip(mapping.entityMappings, policies).map { entityMapping, policy in
            let evaluator = Evaluator(context: EvaluationContext(graph: graph, manager: nil, policyFunctions: policy.functions, now: now))
            evaluator.context.variables["entityMapping"] = .handle(.entityMapping(name: entityMapping.name, sourceEntityName: entityMapping.source,
                                                                                  destinationEntityName: entityMapping.destination, userInfo: entityMapping.userInfo))
            return evaluator
        }
        bound = Array(repeating: (nil, nil), count: policies.count)
        readsPropertyMapping = mapping.entityMappings.map { entityMapping in
            (entityMapping.attributes + entityMapping.relationships).contains { $0.expression.text.contains("propertyMapping") }
        }
    }

    /// Answers every evaluator's `FUNCTION($manager, …)` calls (held weakly).
    func answerManagerCalls(with manager: any MigrationManagerFunctions) {
        for evaluator in evaluators { evaluator.context.manager = manager }
    }

    /// Evaluates an expression of the mapping at `index` for a source object (and the destination
    /// object being made or related, when there is one), locating failures in the mapping file.
    func evaluate<T>(_ expression: MappingExpression, at index: Int, for source: SourceObject, destination destinationRef: ObjectRef? = nil,
                     property: String, _ run: (Evaluator, Expr) throws -> T) throws -> T {
        let evaluator = evaluators[index]
        let entityMapping = mapping.entityMappings[index]
        let sourceRef = source.ref
        if bound[index].source != sourceRef || bound[index].destination != destinationRef || bound[index].source == nil {
            evaluator.context.evaluatedObject = .object(sourceRef)
            evaluator.context.variables["source"] = .object(sourceRef)
            evaluator.context.variables["destination"] = destinationRef.map { .object($0) } ?? .null
            bound[index] = (sourceRef, destinationRef)
        }
        if readsPropertyMapping[index] { evaluator.context.variables["propertyMapping"] = .handle(.propertyMapping(name: property)) }
        do {
            return try run(evaluator, expression.expression)
        } catch let error as ExpressionError {
            throw MigrationError.expression(mapping: entityMapping.name, property: property, object: sourceRef, diagnostic: error.diagnostic(in: expression.source))
        } catch let error as MapcError {
            // A source value the expression read that cannot be read (a missing external file), named with its object.
            throw MigrationError.value(mapping: entityMapping.name, entity: sourceRef.entity, object: sourceRef.id, property: property, message: error.description)
        }
    }

    /// Evaluates a mapping's expression with no source object bound (a source expression that is
    /// not Xcode's standard fetch), locating failures in the mapping file.
    func evaluateWithoutSource(_ expression: MappingExpression, at index: Int, property: String) throws -> EvalValue {
        let evaluator = evaluators[index]
        bound[index] = (nil, nil)
        evaluator.context.evaluatedObject = .null
        do {
            return try evaluator.evaluate(expression.expression)
        } catch let error as ExpressionError {
            throw MigrationError.expression(mapping: mapping.entityMappings[index].name, property: property, object: ObjectRef(entity: "", id: ""),
                                            diagnostic: error.diagnostic(in: expression.source))
        }
    }
}
