import Foundation
import OffstageProtocol
import Synchronization

/// A background task identifier, as `UIBackgroundTaskIdentifier`.
public typealias BackgroundTaskIdentifier = Int

/// `UIBackgroundTaskInvalid`: the system refused more background time.
public let backgroundTaskInvalid: BackgroundTaskIdentifier = 0

/// The states UIKit reports through `applicationState` (a suspended app runs
/// no code, so it never observes `suspended`).
public enum ApplicationState: String, Sendable {
    case active
    case inactive
    case background
}

/// The app object: `UIApplication.shared` for Offstage apps.
///
/// Start an app with ``main(delegate:)``; from then on the daemon drives it
/// through the delegate. Properties and background-task calls may be used
/// from any thread; delegate methods and timer bodies run on the main thread.
///
/// ```swift
/// final class AppDelegate: ApplicationDelegate {
///     func applicationDidEnterBackground(_ application: Application) {
///         let task = application.beginBackgroundTask { print("out of time") }
///         application.schedule(after: 25) { application.endBackgroundTask(task) }
///     }
/// }
/// Application.main(delegate: AppDelegate())
/// ```
public final class Application: Sendable {
    public static let shared = Application()

    struct State: Sendable {
        var connection: DaemonConnection?
        var bundleIdentifier = ""
        var container = ""
        var clock = "real"
        var applicationState = ApplicationState.inactive
        var time = 0.0
        var launchOptions: LaunchOptions = [:]
        var expirationHandlers: [Int: @Sendable () -> Void] = [:]
        var timers: [Int: @MainActor @Sendable () -> Void] = [:]
    }

    let state = Mutex(State())

    private init() {}

    /// The app's bundle identifier.
    public var bundleIdentifier: String { state.withLock { $0.bundleIdentifier } }

    /// The app's container directory (Documents, Library, tmp live inside).
    public var containerURL: URL { URL(fileURLWithPath: state.withLock { $0.container }, isDirectory: true) }

    /// `applicationState` as UIKit reports it.
    public var applicationState: ApplicationState { state.withLock { $0.applicationState } }

    /// The options the app was launched with.
    public var launchOptions: LaunchOptions { state.withLock { $0.launchOptions } }

    /// The daemon's clock at the callback being handled, in seconds since
    /// the daemon's epoch (virtual time in scenarios).
    public var currentTime: Double { state.withLock { $0.time } }

    /// `backgroundTimeRemaining`, in the daemon's clock: `.greatestFiniteMagnitude`
    /// in the foreground, as in UIKit.
    public var backgroundTimeRemaining: Double {
        guard let result = try? connection.request(.backgroundTimeRemaining) else { return 0 }
        return result["remaining"]?.doubleValue ?? .greatestFiniteMagnitude
    }

    /// `beginBackgroundTask(expirationHandler:)`: asks for time to finish work
    /// in the background. The handler runs on the main thread shortly before
    /// the time runs out; end the task there, or the app is killed.
    /// - Returns: the task, or ``backgroundTaskInvalid`` when refused.
    @discardableResult
    public func beginBackgroundTask(
        withName name: String? = nil, expirationHandler: (@Sendable () -> Void)? = nil
    ) -> BackgroundTaskIdentifier {
        let params: JSONValue = name.map { ["name": .string($0)] } ?? .emptyObject
        guard let result = try? connection.request(.beginBackgroundTask, params),
            let task = result["task"]?.intValue
        else { return backgroundTaskInvalid }
        if let expirationHandler {
            state.withLock { $0.expirationHandlers[task] = expirationHandler }
        }
        return task
    }

    /// `endBackgroundTask(_:)`. Ending an invalid or already ended task does nothing.
    public func endBackgroundTask(_ task: BackgroundTaskIdentifier) {
        guard task != backgroundTaskInvalid else { return }
        state.withLock { _ = $0.expirationHandlers.removeValue(forKey: task) }
        _ = try? connection.request(.endBackgroundTask, ["task": JSONValue(task)])
    }

    /// Runs `body` on the main thread after `seconds` of the daemon's clock.
    ///
    /// Use this instead of sleeping: in virtual time the daemon jumps straight
    /// to the deadline. A suspended app gets its due timers when it resumes.
    @discardableResult
    public func schedule(after seconds: Double, _ body: @escaping @MainActor @Sendable () -> Void) -> Int {
        // The body is registered as the reply is read, so even a timer that
        // fires at once (scheduled from another thread) finds it.
        let registered = try? connection.request(.scheduleTimer, ["after": JSONValue(seconds)]) { result in
            if let timer = result["timer"]?.intValue { self.state.withLock { $0.timers[timer] = body } }
        }
        return registered?["timer"]?.intValue ?? 0
    }

    /// Cancels a timer from ``schedule(after:_:)``.
    public func cancelTimer(_ timer: Int) {
        state.withLock { _ = $0.timers.removeValue(forKey: timer) }
        _ = try? connection.request(.cancelTimer, ["timer": JSONValue(timer)])
    }

    var connection: DaemonConnection {
        guard let connection = state.withLock({ $0.connection }) else {
            fatalError("Application.main(delegate:) has not connected to the daemon yet")
        }
        return connection
    }
}
