/// The time limits and budgets the system enforces, set by an iOS profile.
///
/// Every value can be overridden; ``profile(named:)`` gives the defaults.
public struct LifecyclePolicy: Sendable, Equatable {
    /// Name of the profile these values came from (`ios6`, `ios7`, `ios13`).
    public var profileName: String
    /// How long `beginBackgroundTask` keeps a backgrounded app running.
    public var backgroundTaskBudget: Duration
    /// Expiration handlers run this long before the budget ends.
    public var expirationLead: Duration = .seconds(5)
    /// How long a service wake keeps a suspended app running.
    public var wakeWindow: Duration = .seconds(10)
    /// `applicationDidEnterBackground:` must return within this (the spec's 5 s).
    public var didEnterBackgroundLimit: Duration = .seconds(5)
    /// Launch: from spawn to `hello`, and each launch callback (Apple's 20 s).
    public var launchLimit: Duration = .seconds(20)
    /// Resume callbacks (`applicationWillEnterForeground:`, `applicationDidBecomeActive:`).
    public var resumeLimit: Duration = .seconds(10)
    /// `applicationWillTerminate:` (Apple's 6 s quit limit).
    public var terminateLimit: Duration = .seconds(6)
    /// Every other callback.
    public var callbackLimit: Duration = .seconds(10)

    public init(profileName: String, backgroundTaskBudget: Duration) {
        self.profileName = profileName
        self.backgroundTaskBudget = backgroundTaskBudget
    }

    /// The profiles by name.
    public static let profiles: [String: LifecyclePolicy] = [
        "ios6": LifecyclePolicy(profileName: "ios6", backgroundTaskBudget: .seconds(600)),
        "ios7": LifecyclePolicy(profileName: "ios7", backgroundTaskBudget: .seconds(180)),
        "ios13": LifecyclePolicy(profileName: "ios13", backgroundTaskBudget: .seconds(30)),
    ]

    /// The default profile, `ios7`.
    public static let `default` = profiles["ios7"]!

    /// The profile called `name`, or `nil`.
    public static func profile(named name: String) -> LifecyclePolicy? { profiles[name] }

    /// The watchdog limit for a callback.
    public func limit(for callback: String) -> Duration {
        switch CallbackName(rawValue: callback) {
        case .didEnterBackground: return didEnterBackgroundLimit
        case .willFinishLaunching, .didFinishLaunching: return launchLimit
        case .willEnterForeground, .didBecomeActive: return resumeLimit
        case .willTerminate: return terminateLimit
        default: return callbackLimit
        }
    }
}
