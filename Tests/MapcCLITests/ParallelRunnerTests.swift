import Foundation
import Testing
@testable import MapcCLI
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// `mapc run --jobs N` over many stores (`ParallelRunner`): every item once, results in order,
/// also when no thread can be started (the system's thread limit), where the items are worked on
/// by the caller rather than waited for forever.
@Suite("Running over many stores")
struct ParallelRunnerTests {
    @Test(arguments: [false, true])
    func everyItemIsWorkedOnOnceInOrder(threadsRefused: Bool) throws {
        let items = Array(0..<50)
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var outputs: [Int] = [] }
        let box = Box()
        // On a thread of its own, waited for with a time limit: a hang fails the test.
        Thread.detachNewThread {
            DetachedThread.refusesStartsOnThisThread = threadsRefused
            box.outputs = ParallelRunner(items).run(jobs: 3) { $0 * 2 }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 30) == .success, "the run did not finish")
        #expect(box.outputs == items.map { $0 * 2 })
    }
}
