@testable import OffstageCore

/// Plays the daemon's part for the core: spawned apps connect at once and
/// every callback is acknowledged at once, unless an app is told to hang.
struct DeviceHarness {
    var board: Springboard
    var time = ClockTime.zero
    /// Every callback delivered, as "app name".
    var callbacks: [(app: String, name: String, detail: JSONValue)] = []
    var log: [LogEntry] = []
    var frozen: Set<String> = []
    var killed: [String] = []
    /// Apps that never acknowledge callbacks with these names.
    var hangs: [String: Set<String>] = [:]
    /// Apps whose process crashes instead of connecting.
    var crashAtLaunch: Set<String> = []
    /// Called for each delivered callback; may return more inputs (requests).
    var onCallback: ((inout DeviceHarness, String, CallbackMessage) -> Void)?

    init(policy: LifecyclePolicy = .default, apps: [AppDescriptor]) {
        board = Springboard(policy: policy)
        for app in apps { board.install(app) }
    }

    mutating func submit(_ input: Springboard.Input) throws {
        let actions = try board.submit(input, at: time)
        perform(actions)
    }

    mutating func advance(by seconds: Double) {
        let target = time + .milliseconds(Int64(seconds * 1000))
        while let next = board.nextDeadline(), next <= target {
            time = next
            perform(board.advance(to: next))
        }
        time = target
        perform(board.advance(to: target))
    }

    mutating func perform(_ actions: [SystemAction]) {
        for action in actions {
            switch action {
            case .spawn(let app, let launch):
                if crashAtLaunch.contains(app) {
                    perform(board.processExited(app, launch: launch, status: .exited(1), at: time))
                } else {
                    perform(board.appConnected(app, launch: launch, at: time))
                }
            case .deliver(let app, let message):
                callbacks.append((app, message.name, message.detail))
                onCallback?(&self, app, message)
                if hangs[app]?.contains(message.name) == true { continue }
                let (accepted, more) = board.acknowledge(app, callback: message.id, at: time)
                precondition(accepted)
                perform(more)
            case .freeze(let app): frozen.insert(app)
            case .thaw(let app): frozen.remove(app)
            case .kill(let app, _):
                killed.append(app)
                frozen.remove(app)
            case .log(let entry): log.append(entry)
            }
        }
    }

    func names(_ app: String) -> [String] { callbacks.filter { $0.app == app }.map(\.name) }

    mutating func clear() {
        callbacks = []
        log = []
        killed = []
    }

    func state(_ app: String) -> AppState? { board.state(of: app) }
}

let lab = "com.example.StateLab"
let other = "com.example.Other"

enum CB {
    static let willFinish = CallbackName.willFinishLaunching.rawValue
    static let didFinish = CallbackName.didFinishLaunching.rawValue
    static let didBecomeActive = CallbackName.didBecomeActive.rawValue
    static let willResign = CallbackName.willResignActive.rawValue
    static let didEnterBackground = CallbackName.didEnterBackground.rawValue
    static let willEnterForeground = CallbackName.willEnterForeground.rawValue
    static let willTerminate = CallbackName.willTerminate.rawValue
    static let memoryWarning = CallbackName.didReceiveMemoryWarning.rawValue
    static let expiration = CallbackName.backgroundTaskExpiration.rawValue
    static let timer = CallbackName.timer.rawValue
}
