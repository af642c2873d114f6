import Foundation
@testable import GatewayTransport
import Testing

/// The transfer lifecycle's value types, event by event, without libcurl: the head's hand-off to
/// the caller, and when the head goes out as body bytes arrive.
@Suite("Transfer state machines")
struct CurlTransferStateMachineTests {
    typealias Head = CurlTransfer.HeadStateMachine
    typealias Body = CurlTransfer.BodyStateMachine

    static let ok = HTTPResponseHead(status: 200, headers: ["content-length": "5"])
    static let notFound = HTTPResponseHead(status: 404, headers: [:])

    @Test("a caller who waits first is resumed by the head; only the first delivery counts")
    func waiterFirst() async throws {
        let head = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
            var machine = Head()
            guard case .park = machine.waiterArrived(continuation) else {
                continuation.resume(throwing: CancellationError())
                return
            }
            #expect(!machine.isDelivered)
            guard case .resume(let waiter, let result) = machine.headArrived(.success(Self.ok)) else {
                Issue.record("the parked caller must be resumed")
                return
            }
            #expect(machine.isDelivered)
            // The transfer's end delivers its outcome again: nobody is resumed twice.
            if case .resume = machine.headArrived(.success(Self.notFound)) { Issue.record("a second delivery must do nothing") }
            waiter.resume(with: result)
        }
        #expect(head.status == 200)
    }

    @Test("a head that arrives first waits for its caller, who gets it at once; a failure too")
    func headFirst() async throws {
        var machine = Head()
        guard case .none = machine.headArrived(.failure(URLError(.timedOut))) else {
            Issue.record("no caller to resume yet")
            return
        }
        if case .resume = machine.headArrived(.success(Self.ok)) { Issue.record("the first outcome stays") }
        let captured = machine
        await #expect(throws: URLError.self) {
            _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponseHead, any Error>) in
                var machine = captured
                switch machine.waiterArrived(continuation) {
                case .resume(let result): continuation.resume(with: result)
                case .park: continuation.resume(returning: Self.notFound)
                }
            }
        }
    }

    @Test("the head goes out with the first bytes of a large or unannounced body")
    func streaming() {
        var body = Body(smallBody: 100)
        #expect(body.bytesArrived(10) { false } == .deliverHead)
        #expect(body.bytesArrived(10) { Issue.record("asked once"); return false } == .none)
        if case .streaming = body.state {} else { Issue.record("\(body.state)") }
    }

    @Test("a small announced body holds the head back until the end, unless more than announced arrives")
    func smallBody() {
        var body = Body(smallBody: 100)
        #expect(body.bytesArrived(60) { true } == .none)
        #expect(body.bytesArrived(40) { true } == .none)
        if case .holdingHead(let bytes) = body.state { #expect(bytes == 100) } else { Issue.record("\(body.state)") }
        #expect(body.bytesArrived(1) { true } == .deliverHead)
        #expect(body.bytesArrived(1000) { true } == .none)

        var burst = Body(smallBody: 100)
        #expect(burst.bytesArrived(101) { true } == .deliverHead, "more than small in the first chunk")
        var hostile = Body(smallBody: 100)
        _ = hostile.bytesArrived(50) { true }
        #expect(hostile.bytesArrived(Int.max) { true } == .deliverHead, "a count that would overflow is more than small")
    }
}
