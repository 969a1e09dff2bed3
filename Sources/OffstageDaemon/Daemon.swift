import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A running daemon: its engine, its servers and its event loop.
///
/// `offstage daemon` runs one as a ``Service`` until SIGTERM, SIGINT or SIGHUP; the
/// scenario runner and the tests start a private one in-process.
public final class RunningDaemon: Sendable {
    public let configuration: DaemonConfiguration
    public let engine: EngineHandle
    let group: MultiThreadedEventLoopGroup
    let channels: [Channel]
    private let dataLock: DataDirectoryLock
    private let stopped = Mutex(false)

    /// Starts a daemon: opens the store, binds the control and app sockets.
    /// - Throws: ``DaemonError`` (socket in use, unusable data directory, …).
    public static func start(_ configuration: DaemonConfiguration) async throws -> RunningDaemon {
        signal(SIGPIPE, SIG_IGN)
        reportOnlyChildExits()
        let dataLock = try DataDirectoryLock(directory: configuration.dataDirectory)
        do {
            try SocketPreparation.prepare(configuration.controlSocket)
            try SocketPreparation.prepare(configuration.appSocket)
        } catch {
            dataLock.abandon()
            throw error
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        do {
            let handle = try await loop.submit {
                let engine = try Engine(eventLoop: loop, configuration: configuration)
                let handle = EngineHandle(engine: engine)
                engine.handle = handle
                return handle
            }.get()
            let bound = handle.engine
            let control = try await ServerBootstrap(group: group)
                // A client that shuts down its writing side after its request
                // (`nc -N`) still gets the reply; one that has closed (a
                // hang-up, EPOLLHUP) has left, and its waiting command is dropped.
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            LineSplitter(maximumLength: 1 << 20),
                            ControlHandler(engine: bound),
                        ])
                    }
                }
                .bind(unixDomainSocketPath: configuration.controlSocket).flatMapErrorThrowing {
                    throw SocketPreparation.explained($0, binding: configuration.controlSocket)
                }.get()
            let apps = try await ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            LineSplitter(maximumLength: maximumMessageBytes),
                            AppConnectionHandler(engine: bound),
                        ])
                    }
                }
                .bind(unixDomainSocketPath: configuration.appSocket).flatMapErrorThrowing {
                    throw SocketPreparation.explained($0, binding: configuration.appSocket)
                }.get()
            chmod(configuration.controlSocket, 0o600)
            chmod(configuration.appSocket, 0o600)
            return RunningDaemon(
                configuration: configuration, engine: handle, group: group, channels: [control, apps], dataLock: dataLock)
        } catch {
            try? await group.shutdownGracefully()
            dataLock.abandon()
            throw error
        }
    }

    init(
        configuration: DaemonConfiguration, engine: EngineHandle, group: MultiThreadedEventLoopGroup, channels: [Channel],
        dataLock: DataDirectoryLock
    ) {
        self.configuration = configuration
        self.engine = engine
        self.group = group
        self.channels = channels
        self.dataLock = dataLock
    }

    /// Kills the apps, closes the sockets and stops the event loop.
    public func stop() async {
        guard stopped.withLock({ wasStopped in
            defer { wasStopped = true }
            return !wasStopped
        }) else { return }
        try? await engine.flatSubmit { $0.shutdown() }.get()
        try? await engine.submit { $0.host.cgroups?.remove() }.get()
        for channel in channels { try? await channel.close().get() }
        unlink(configuration.controlSocket)
        unlink(configuration.appSocket)
        try? await group.shutdownGracefully()
        dataLock.release()
    }

    /// Runs a control command in-process (the same path as the socket).
    public func control(_ request: JSONValue) async throws -> ControlReply {
        try await engine.flatSubmit { $0.control(request) }.get()
    }

    /// Returns once `app` has no process: at once if it has none, or when
    /// the daemon has reaped it (a `switcher kill` replies before that).
    /// - Throws: ``DaemonError`` `invalidState` if it still has one after `limit`.
    public func processGone(_ app: String, within limit: TimeAmount = .seconds(5)) async throws {
        try await engine.flatSubmit { engine in
            let loop = engine.eventLoop
            let promise = loop.makePromise(of: Void.self)
            engine.whenProcessGone(app).cascade(to: promise)
            promise.expire(after: limit, on: loop) {
                promise.fail(DaemonError(.invalidState, "\(app) still has a process after \(limit.nanoseconds / 1_000_000) ms"))
            }
            return promise.futureResult
        }.get()
    }
}

/// Asks the kernel not to signal SIGCHLD when a child stops or continues
/// (`SA_NOCLDSTOP`), keeping whatever handler is installed. Apps are frozen
/// and thawed all the time; each notification would wake a thread of the
/// daemon, on the resumed app's own time. Exits are still signalled, and
/// `waitpid` is not affected.
func reportOnlyChildExits() {
    var action = sigaction()
    guard sigaction(SIGCHLD, nil, &action) == 0, action.sa_flags & SA_NOCLDSTOP == 0 else { return }
    action.sa_flags |= SA_NOCLDSTOP
    sigaction(SIGCHLD, &action, nil)
}

/// `offstage daemon` as a service: runs until a graceful shutdown (SIGTERM, SIGINT, SIGHUP).
public struct DaemonService: Service {
    let configuration: DaemonConfiguration
    let logger: Logger

    public init(configuration: DaemonConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        let daemon = try await RunningDaemon.start(configuration)
        // Whether what an app starts outside its process group dies with it.
        let cgroups = try? await daemon.engine.submit { $0.host.cgroups?.directory }.get()
        logger.info(
            "offstage daemon running",
            metadata: [
                "control": "\(configuration.controlSocket)", "data": "\(configuration.dataDirectory)",
                "clock": "\(configuration.clock.rawValue)", "profile": "\(configuration.policy.profileName)",
                "appCgroups": "\((cgroups ?? nil) ?? "none (process groups only)")",
            ])
        if !AppProcessHost.appsDieWithTheDaemon {
            logger.warning(
                "\(AppProcessHost.setprivMissing("a daemon"))")
        }
        try? await gracefulShutdown()
        logger.info("offstage daemon stopping")
        await daemon.stop()
    }
}

extension EventLoopPromise {
    /// Runs `expire` on `loop` if the promise has not completed within
    /// `limit` (it should fail the promise); the timer is cancelled as soon
    /// as the promise completes. Called on `loop`, so `expire` may use what
    /// the loop confines.
    public func expire(after limit: TimeAmount, on loop: EventLoop, _ expire: @escaping () -> Void) {
        let timer = loop.assumeIsolated().scheduleTask(in: limit, expire)
        futureResult.whenComplete { _ in timer.cancel() }
    }
}
