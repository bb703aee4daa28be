import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// An error a policy throws of its own.
enum ContactPolicyFailure: Error, Equatable {
    case refused(String)
}

/// The same, with a description of its own.
struct DescribedPolicyFailure: LocalizedError {
    var errorDescription: String? { "the note has no author" }
}

/// Throws its error on the second source object.
final class ThrowingOnSecondPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var error: any Error = ContactPolicyFailure.refused("n1")
    private var seen = 0
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        seen += 1
        if seen == 2 { throw Self.error }
        try super.createDestinationInstances(for: source, mapping: mapping, manager: manager)
    }
}

/// Reads a key Note does not have (a typo for `title`) through the subscript.
final class MisspeltKeyPolicy: EntityMigrationPolicy {
    nonisolated(unsafe) static var key = "titel"
    override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        var destination = try manager.makeDestination(for: source, mapping: mapping)
        destination["title"] = source[Self.key]
        _ = try manager.insert(destination, associatedWith: source, mapping: mapping)
    }
}

/// What a policy throws reaches the caller as it was thrown, with the object it was working on.
@Suite("Errors of policies", .serialized)
struct PolicyErrorTests {
    private func run(throwing error: any Error) throws -> MigrationError? {
        ThrowingOnSecondPolicy.error = error
        let registry = PolicyRegistry()
        registry.register(ThrowingOnSecondPolicy.self, as: "Throwing")
        let model = try loadMapping(noteToNoteMapping(["policy: Throwing"]))
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert(v2Notes(3))
        let step = StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model, policies: registry)
        return #expect(throws: MigrationError.self) { try step.run() }
    }

    @Test func thePolicysOwnErrorCanBeCaughtByItsType() throws {
        let error = try run(throwing: ContactPolicyFailure.refused("n1"))
        guard case .policyFailed(let mapping, let object, let thrown)? = error else {
            Issue.record("expected policyFailed, got \(String(describing: error))")
            return
        }
        #expect(mapping == "NoteToNote" && object?.id == "n1")
        #expect(thrown as? ContactPolicyFailure == .refused("n1"))
        #expect(error?.description == "mapping 'NoteToNote', source object Note 'n1': custom policy failed: refused(\"n1\")")
    }

    /// `source["titel"]` gave nil in silence (every note lost its title, exit 0), where Core
    /// Data's `value(forKey:)` raises on a key the entity does not have: the run fails, naming
    /// the key, the closest one the entity has, and the object.
    @Test func aKeyTheEntityDoesNotHaveFailsTheRun() throws {
        let registry = PolicyRegistry()
        registry.register(MisspeltKeyPolicy.self, as: "Misspelt")
        let model = try loadMapping(noteToNoteMapping(["policy: Misspelt"]))
        let source = try Store.inMemory(schema: try uncloudNotes("v2"))
        try source.insert(v2Notes(3))
        MisspeltKeyPolicy.key = "titel"
        let step = StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model, policies: registry)
        let error = #expect(throws: MigrationError.self) { try step.run() }
        #expect(error?.description.contains("'titel'") == true && error?.description.contains("did you mean 'title'?") == true, "\(String(describing: error))")
        // A key it has, holding nil, is nil.
        MisspeltKeyPolicy.key = "body"
        let fine = StepMigration(source: source, destination: try Store.inMemory(schema: try uncloudNotes("v3")), mapping: model, policies: registry)
        _ = try fine.run()
    }

    @Test func aDescribedErrorIsShownByItsDescription() throws {
        let error = try run(throwing: DescribedPolicyFailure())
        #expect(error?.description == "mapping 'NoteToNote', source object Note 'n1': custom policy failed: the note has no author")
        let bridged = try run(throwing: NSError(domain: "App", code: 7, userInfo: [NSLocalizedDescriptionKey: "the server said no"]))
        #expect(bridged?.description.hasSuffix("custom policy failed: the server said no") == true, "\(String(describing: bridged))")
    }
}
