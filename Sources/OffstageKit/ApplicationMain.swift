import Foundation
import OffstageProtocol

extension Application {
    /// `UIApplicationMain`: connects to the daemon that spawned this process,
    /// then delivers its callbacks to `delegate` on the main thread until the
    /// daemon ends the app. Call it from `main.swift`; it never returns.
    @MainActor
    public static func main(delegate: ApplicationDelegate) -> Never {
        let environment = ProcessInfo.processInfo.environment
        guard let socketPath = environment[AppEnvironment.socket], let token = environment[AppEnvironment.token] else {
            write(
                "This is an Offstage app: install it with `offstage install DIR` and start it with `offstage launch BUNDLE_ID`.\n",
                to: .standardError)
            exit(64)
        }
        if let container = environment[AppEnvironment.container] {
            _ = FileManager.default.changeCurrentDirectoryPath(container)
        }
        let app = Application.shared
        let connection: DaemonConnection
        do {
            let socket = try LineSocket(connectingTo: socketPath)
            socket.waitsInPoll = true
            connection = DaemonConnection(socket: socket)
            connection.send(.hello(token: token, pid: getpid(), version: offstageProtocolVersion))
            guard case .welcome(let bundleID, let container, let clock, let time) = try connection.readWelcome() else {
                throw DaemonRequestError(code: "protocol", message: "expected welcome")
            }
            app.state.withLock {
                $0.connection = connection
                $0.bundleIdentifier = bundleID
                $0.container = container
                $0.clock = clock
                $0.time = time
            }
        } catch {
            write("offstage: cannot connect to the daemon at \(socketPath): \(error)\n", to: .standardError)
            exit(70)
        }
        while let callback = connection.nextCallback() {
            app.dispatch(callback, to: delegate)
            connection.send(.ack(id: callback.id))
        }
        exit(0)
    }

    @MainActor
    func dispatch(_ callback: CallbackMessage, to delegate: ApplicationDelegate) {
        state.withLock {
            $0.time = callback.time
            switch callback.state {
            case .active: $0.applicationState = .active
            case .inactive: $0.applicationState = .inactive
            case .background, .suspended, .notRunning: $0.applicationState = .background
            }
        }
        let name = CallbackName(rawValue: callback.name)
        switch name {
        case .willFinishLaunching:
            let options = callback.detail.objectValue ?? [:]
            state.withLock { $0.launchOptions = options }
            _ = delegate.application(self, willFinishLaunchingWithOptions: options)
        case .didFinishLaunching:
            _ = delegate.application(self, didFinishLaunchingWithOptions: callback.detail.objectValue ?? [:])
        case .didBecomeActive: delegate.applicationDidBecomeActive(self)
        case .willResignActive: delegate.applicationWillResignActive(self)
        case .didEnterBackground: delegate.applicationDidEnterBackground(self)
        case .willEnterForeground: delegate.applicationWillEnterForeground(self)
        case .willTerminate: delegate.applicationWillTerminate(self)
        case .didReceiveMemoryWarning: delegate.applicationDidReceiveMemoryWarning(self)
        case .backgroundTaskExpiration:
            let task = callback.detail["task"]?.intValue ?? 0
            let handler = state.withLock { $0.expirationHandlers.removeValue(forKey: task) }
            handler?()
        case .timer:
            let timer = callback.detail["timer"]?.intValue ?? 0
            let body = state.withLock { $0.timers.removeValue(forKey: timer) }
            body?()
        case nil:
            if let notification = SystemNotificationName(rawValue: callback.name) {
                NotificationCenter.default.post(
                    name: Notification.Name(notification.rawValue), object: self,
                    userInfo: ["detail": callback.detail])
            } else {
                delegate.application(self, didReceiveCallback: callback.name, detail: callback.detail)
            }
        }
        if let posted = name?.notificationName {
            NotificationCenter.default.post(name: posted, object: self)
        }
        // After these two, UIKit reports the app inactive until the next callback.
        if name == .willResignActive || name == .willEnterForeground {
            state.withLock { $0.applicationState = .inactive }
        }
    }
}

/// `NSLog` for Offstage apps: writes the daemon's clock, the app name and the
/// message to the app's log (its standard output), unbuffered, so the line is
/// there even if the app is killed right after.
public func AppLog(_ message: String) {
    let app = Application.shared
    let name = app.bundleIdentifier.split(separator: ".").last.map(String.init) ?? "app"
    let line = String(format: "%10.3f %@[%d] ", app.currentTime, name, getpid()) + message + "\n"
    write(line, to: .standardOutput)
}

/// Writes to the app's log; a failed write (a full disk) is dropped, not
/// fatal: `FileHandle.write(_:)` traps on an error, which killed the app.
func write(_ text: String, to handle: FileHandle) {
    try? handle.write(contentsOf: Data(text.utf8))
}
