import Foundation
import MapcFoundation
import MapcModel
import MapcStore

/// Builds destination objects from a mapping's expressions: per mapping and destination entity an
/// attribute plan worked out once (each stored attribute's expression, copy or default), then per
/// source object the values in the order the entity's rows take them, coerced to the attributes'
/// types. It also makes storable what a policy set by hand. It writes nothing: the run writes the
/// rows it gives.
final class DestinationBuilder {
    let mapping: MappingModel
    let destinationSchema: Schema
    let sourceSchema: Schema
    /// The run's writer, asked for the order of a row's values.
    let writer: RowWriter
    /// The run's evaluators, which evaluate the expressions.
    let evaluators: MappingEvaluators
    /// How a value copied from a source attribute changes its stored form on the way to a
    /// destination attribute (Core Data's external storage turned on or off); nil when it does not.
    var externalConversion: (Attribute, Attribute) -> CoreDataExternalValue.Conversion? = { _, _ in nil }
    /// The source graph, which reads the files of Core Data's external values copied as stored.
    var sourceGraph: StoreObjectGraph?
    /// Per destination entity, its attributes whose values the destination keeps marked
    /// (`CoreDataExternalValue`): what expressions and policies give them is stored marked.
    private var markedAttributes: [String: Set<String>] = [:]
    /// Whether any attribute of the destination keeps its values marked (most stores have none).
    private lazy var keepsMarkedValues = CoreDataExternalValue.anyMarked(in: destinationSchema, format: writer.store.format)

    private var attributePlans: [String: AttributePlan] = [:]
    /// The plan asked for last: objects come mapping by mapping, so it is found without hashing.
    private var lastAttributePlan: (index: Int, entity: String, plan: AttributePlan)?
    /// Per destination entity: its stored attributes' types and defaults, for checking what policies set.
    private var storedAttributes: [String: (types: [String: AttributeType], defaults: [(String, Value)])] = [:]

    init(mapping: MappingModel, destinationSchema: Schema, sourceSchema: Schema, writer: RowWriter, evaluators: MappingEvaluators) {
        self.mapping = mapping
        self.destinationSchema = destinationSchema
        self.sourceSchema = sourceSchema
        self.writer = writer
        self.evaluators = evaluators
    }

    /// How one destination attribute gets its value in a mapping: an expression, a copy, or the
    /// default. A class: the steps are walked for every object, and a reference is one retain
    /// where a struct of these fields was a copy of each.
    final class AttributeStep {
        let name: String
        let type: AttributeType
        let expression: MappingExpression?
        /// For an expression `$source.name`: the attribute read. Its value is the one the source
        /// object was read with (what the evaluator's key path would find), taken without
        /// evaluating; an object read without it (a transient, a relationship) goes through the evaluator.
        let sourceAttribute: String?
        let copies: Bool
        /// For a value copied from a source attribute: the change of its stored form, if any.
        let conversion: CoreDataExternalValue.Conversion?
        /// Whether the destination keeps the attribute's values marked: an expression's result
        /// (the bytes the app reads) is then stored after the inline marker.
        let isMarked: Bool
        let defaultValue: Value
        /// Whether the default is already of the attribute's type (so `write` need not coerce it).
        let defaultIsStorable: Bool

        init(name: String, type: AttributeType, expression: MappingExpression?, sourceAttribute: String?, copies: Bool, conversion: CoreDataExternalValue.Conversion?,
             isMarked: Bool, defaultValue: Value) {
            self.name = name
            self.isMarked = isMarked
            self.type = type
            self.expression = expression
            self.sourceAttribute = sourceAttribute
            self.copies = copies
            self.conversion = conversion
            self.defaultValue = defaultValue
            if case .success(let coerced) = ValueCoercion.coerce(.scalar(defaultValue), to: type) { defaultIsStorable = coerced == defaultValue } else { defaultIsStorable = false }
        }
    }

    /// A mapping's attribute steps for one destination entity, with the entity's attribute types.
    struct AttributePlan {
        var steps: [AttributeStep]
        var types: [String: AttributeType]
        var isConcrete: Bool
        /// Whether the steps are in the order the entity's rows take their values (they are the
        /// same stored attributes; a row's values need no reordering).
        var matchesInsertOrder: Bool
    }

    /// Per mapping and destination entity, worked out once rather than per object.
    func attributePlan(_ index: Int, _ entityName: String) throws -> AttributePlan {
        if let last = lastAttributePlan, last.index == index, last.entity == entityName { return last.plan }
        let key = "\(index)/\(entityName)"
        if let plan = attributePlans[key] {
            lastAttributePlan = (index, entityName, plan)
            return plan
        }
        guard let destinationEntity = destinationSchema.entity(named: entityName) else {
            throw MigrationError.setup("mapping '\(mapping.entityMappings[index].name)' has no destination entity '\(entityName)' in \(destinationSchema.version)")
        }
        let entityMapping = mapping.entityMappings[index]
        let sourceEntity = entityMapping.source.flatMap(sourceSchema.entity(named:))
        let steps = destinationSchema.allAttributes(of: destinationEntity).filter { !$0.isTransient }.map { attribute in
            let expression = entityMapping.attributeMapping(named: attribute.name)?.expression
            let sourceAttribute = expression.flatMap { MigrationAnalysis.sourceAttribute(read: $0.expression, in: entityMapping, sourceSchema: sourceSchema) }
            let copies = entityMapping.type == .copy
            // The source attribute a value is copied from as stored (an expression `$source.name`, or a copy).
            var conversion: CoreDataExternalValue.Conversion?
            if let name = sourceAttribute ?? (copies && expression == nil ? attribute.name : nil), let sourceEntity,
               case .attribute(let copied)? = sourceSchema.property(named: name, in: sourceEntity) {
                conversion = externalConversion(copied, attribute)
            }
            return AttributeStep(name: attribute.name, type: attribute.type, expression: expression, sourceAttribute: sourceAttribute,
                                 copies: copies, conversion: conversion, isMarked: CoreDataExternalValue.isMarked(attribute, in: writer.store.format),
                                 defaultValue: CoreDataExternalValue.storedForm(of: attribute.defaultValue ?? .null, for: attribute, in: writer.store.format))
        }
        let rowOrder = destinationEntity.isAbstract ? [] : try writer.insertPlan(entityName).attributeNames
        let plan = AttributePlan(steps: steps, types: Dictionary(steps.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first }), isConcrete: !destinationEntity.isAbstract,
                                 matchesInsertOrder: !destinationEntity.isAbstract && rowOrder == steps.map(\.name))
        attributePlans[key] = plan
        lastAttributePlan = (index, entityName, plan)
        return plan
    }

    /// A destination object of values in its plan's order. An attribute the destination keeps
    /// marked holds its bytes (the object's values are what the app reads), or the reference
    /// to a file copied as stored (`DestinationObject.external`).
    func object(_ plan: AttributePlan, entity: String, id: String, _ row: (values: [Value], storable: Bool)) -> DestinationObject {
        // Made at its final size (`reserveCapacity` is not specialised across modules: it looked
        // up generic metadata per object).
        var attributes = [String: Value](minimumCapacity: plan.steps.count)
        var marked: Set<String> = [], bytes: Set<String> = []
        for (step, value) in zip(plan.steps, row.values) {
            attributes[step.name] = value
            guard step.isMarked else { continue }
            marked.insert(step.name)
            if case .binary(let stored) = value, case .success(.bytes(let read)) = CoreDataExternalValue.form(of: stored) {
                attributes[step.name] = .binary(read)
                bytes.insert(step.name)
            }
        }
        var destination = DestinationObject(entity: entity, id: id, attributes: attributes)
        destination.bytes = bytes
        if !marked.isEmpty, let sourceGraph { destination.external = .init(marked: marked, graph: sourceGraph) }
        destination.attributeTypes = plan.types
        destination.isStorable = row.storable
        return destination
    }

    /// The values a mapping gives a destination object's stored attributes, in the plan's order
    /// (the entity's stored attributes'), and whether each is already of its attribute's type, so
    /// that the row is written as it is. An abstract entity's objects are never storable: `write`
    /// refuses them.
    func values(_ plan: AttributePlan, for source: SourceObject, destination: ObjectRef, mapping index: Int) throws -> (values: [Value], storable: Bool) {
        var values = [Value](repeating: .null, count: plan.steps.count)
        var storable = plan.isConcrete
        for (position, step) in plan.steps.enumerated() {
            // A `$source.key` value as read is taken first: the expression is not even copied.
            var result: EvalValue?
            if let attribute = step.sourceAttribute, let stored = source.data.attributes[attribute] {
                result = .scalar(stored)
            } else if let expression = step.expression {
                result = try evaluators.evaluate(expression, at: index, for: source, destination: destination, property: step.name) { try $0.evaluate($1) }
            }
            if let result {
                switch ValueCoercion.coerce(result, to: step.type) {
                case .success(let value) where step.isMarked && step.sourceAttribute.map({ source.data.attributes[$0] == nil }) ?? true:
                    // An expression's bytes (it read the ones the app reads), in the column's form.
                    values[position] = CoreDataExternalValue.markedInline(value)
                case .success(let value): values[position] = try converted(value, step, index, source: source, destination: destination)
                case .failure(let problem):
                    throw MigrationError.value(mapping: mapping.entityMappings[index].name, entity: destination.entity, object: destination.id, property: step.name,
                                               message: "\(problem.message) (from source object \(source.ref))")
                }
            } else if step.copies, let value = source.data.attributes[step.name] {
                // Copied as read; a value of another type is for `write` to coerce or refuse.
                values[position] = try converted(value, step, index, source: source, destination: destination)
                if case .success(let coerced) = ValueCoercion.coerce(.scalar(value), to: step.type), coerced == value {} else { storable = false }
            } else {
                values[position] = step.defaultValue
                storable = storable && step.defaultIsStorable
            }
        }
        return (values, storable)
    }

    /// A copied value in its destination's stored form (`AttributeStep.conversion`), or an error
    /// naming the object and attribute of a value in no form Core Data writes.
    private func converted(_ value: Value, _ step: AttributeStep, _ index: Int, source: SourceObject, destination: ObjectRef) throws -> Value {
        guard let conversion = step.conversion else { return value }
        do { return try conversion.apply(value) } catch let error as MapcError {
            throw MigrationError.value(mapping: mapping.entityMappings[index].name, entity: destination.entity, object: destination.id, property: step.name,
                                       message: "\(error.description) (from source object \(source.ref))")
        }
    }

    /// The values of an object's attributes that the destination keeps marked, in that form:
    /// bytes (set through the subscript, made by `makeDestination`, or a default) after the inline
    /// marker; a value put in `attributes` directly as it is when it is in Core Data's form
    /// (copied from `SourceObject.data`), else as bytes.
    func markingExternalValues(of destination: DestinationObject, in attributes: inout [String: Value]) {
        guard keepsMarkedValues else { return }
        let marked: Set<String>
        if let known = markedAttributes[destination.entity] {
            marked = known
        } else {
            let entity = destinationSchema.entity(named: destination.entity)
            marked = Set(entity.map { destinationSchema.allAttributes(of: $0).filter { CoreDataExternalValue.isMarked($0, in: writer.store.format) }.map(\.name) } ?? [])
            markedAttributes[destination.entity] = marked
        }
        for name in marked {
            guard case .binary(let value)? = attributes[name] else { continue }
            let putDirectly = destination.attributes[name] != nil && !destination.bytes.contains(name)
            if putDirectly, !value.isEmpty, case .success = CoreDataExternalValue.form(of: value) { continue }
            attributes[name] = CoreDataExternalValue.markedInline(.binary(value))
        }
    }

    /// The object's attribute values coerced to their attributes' types, or an error naming the
    /// object, the attribute and the value that does not fit (a policy may set anything).
    func storableAttributes(of destination: DestinationObject, mapping entityMapping: EntityMapping) throws -> [String: Value] {
        func refuse(_ property: String, _ message: String) -> MigrationError {
            MigrationError.value(mapping: entityMapping.name, entity: destination.entity, object: destination.id, property: property, message: message)
        }
        if let (name, reason) = destination.rejected.min(by: { $0.key < $1.key }) { throw refuse(name, reason) }
        let (types, defaults) = try storedAttributes(of: destination.entity, mapping: entityMapping)
        var result: [String: Value] = [:]
        result.reserveCapacity(defaults.count)
        for (name, value) in defaults where destination.attributes[name] == nil { result[name] = value }
        for (name, value) in destination.attributes {
            guard let type = types[name] else { throw refuse(name, DestinationObject.noStoredAttribute(name, of: destination.entity, among: types.keys.sorted())) }
            switch ValueCoercion.coerce(.scalar(value), to: type) {
            case .success(let coerced): result[name] = coerced
            case .failure(let problem): throw refuse(name, "\(value) cannot be stored: \(problem.message)")
            }
        }
        return result
    }

    /// A concrete destination entity's stored attributes: types and defaults, worked out once.
    private func storedAttributes(of entityName: String, mapping entityMapping: EntityMapping) throws -> (types: [String: AttributeType], defaults: [(String, Value)]) {
        if let known = storedAttributes[entityName] { return known }
        guard let entity = destinationSchema.entity(named: entityName), !entity.isAbstract else {
            throw MigrationError.setup("mapping '\(entityMapping.name)' creates \(entityName) objects, but \(destinationSchema.version) has no such concrete entity")
        }
        let stored = destinationSchema.allAttributes(of: entity).filter { !$0.isTransient }
        let known = (Dictionary(stored.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first }), stored.map { ($0.name, $0.defaultValue ?? .null) })
        storedAttributes[entityName] = known
        return known
    }
}
