import Foundation
import Testing
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration

/// Phase 2 of a copy or policy mapping reads whole source objects: a batch of 2,000 objects of a
/// megabyte each was 2 GB. It reads them in parts kept near `Store.batchByteBudget`.
@Suite("Parts of a batch read whole in phase 2")
struct SourcePartsTests {
    private func objects(_ count: Int, bytes: Int) -> [ObjectData] {
        (0..<count).map { ObjectData(id: "n\($0)", entity: "Note", attributes: ["body": .binary(Data(count: bytes))]) }
    }

    @Test func partsShrinkForLargeObjectsAndGrowForSmallOnes() {
        var parts = SourceParts(limit: 2_000, readsWholeObjects: true)
        #expect(parts.size == 64)
        parts.read(objects(64, bytes: 1 << 20))
        #expect(parts.size == Store.batchByteBudget >> 20)
        parts.read(objects(16, bytes: 100))
        #expect(parts.size == 32)
        for _ in 0..<10 { parts.read(objects(parts.size, bytes: 100)) }
        #expect(parts.size == 2_000)
        // A mapping that reads some properties takes the whole batch at once, as before.
        #expect(SourceParts(limit: 2_000, readsWholeObjects: false).size == 2_000)
    }
}
