import NIOCore
import OffstageDaemon
import OffstageProtocol

/// Runs control commands one after another on the engine's own loop, each
/// issued as soon as the previous one has replied: no thread of this
/// process other than the loop's takes part, so a callback's round trip
/// involves the loop and the app only, as the ping-pong baseline involves
/// its two processes only. (Through ``RunningDaemon/control(_:)`` every
/// command also hops from a Swift task onto the loop and back.)
enum LoopDriver {
    /// Runs `requests` in order, `times` over; fails on the first failure.
    /// - Parameter before: runs on the loop before each command and may
    ///   block it (the wake benchmark waits there for BenchApp to stop, as
    ///   its baseline waits in `waitpid`); an error fails the run.
    static func run(
        _ requests: [JSONValue], times: Int, on engine: EngineHandle, before: (@Sendable () throws -> Void)? = nil
    ) async throws {
        let total = requests.count * times
        let loop = engine.eventLoop
        try await engine.flatSubmit { engine in
            let done = loop.makePromise(of: Void.self)
            let bound = NIOLoopBound(engine, eventLoop: loop)
            @Sendable func issue(_ index: Int) {
                guard index < total else { return done.succeed() }
                do { try before?() } catch { return done.fail(error) }
                let request = requests[index % requests.count]
                bound.value.control(request).whenComplete { result in
                    switch result {
                    case .success(.ok(let reply)) where reply["errors"] == nil:
                        // Not from inside the reply's completion: a task of its own on the loop.
                        loop.execute { issue(index + 1) }
                    case .success(let reply):
                        done.fail(BenchError("\(request.jsonText): \(reply.json.jsonText)"))
                    case .failure(let error):
                        done.fail(error)
                    }
                }
            }
            issue(0)
            return done.futureResult
        }.get()
    }
}
