/// Callback names as they appear on the wire and in the event log: the UIKit
/// selector for delegate methods, the UIKit name for notifications.
public enum CallbackName: String, Sendable, CaseIterable {
    case willFinishLaunching = "application:willFinishLaunchingWithOptions:"
    case didFinishLaunching = "application:didFinishLaunchingWithOptions:"
    case didBecomeActive = "applicationDidBecomeActive:"
    case willResignActive = "applicationWillResignActive:"
    case didEnterBackground = "applicationDidEnterBackground:"
    case willEnterForeground = "applicationWillEnterForeground:"
    case willTerminate = "applicationWillTerminate:"
    case didReceiveMemoryWarning = "applicationDidReceiveMemoryWarning:"
    /// The expiration handler of a background task (`detail.task` names it).
    case backgroundTaskExpiration = "backgroundTaskExpirationHandler"
    /// A timer the app scheduled in the daemon's clock (`detail.timer` names it).
    case timer = "timerFired"
}

/// System change notifications, queued and coalesced for suspended apps.
public enum SystemNotificationName: String, Sendable, CaseIterable, Comparable {
    case batteryLevel = "UIDeviceBatteryLevelDidChangeNotification"
    case orientation = "UIDeviceOrientationDidChangeNotification"
    case locale = "NSCurrentLocaleDidChangeNotification"
    case significantTimeChange = "UIApplicationSignificantTimeChangeNotification"
    case userDefaults = "NSUserDefaultsDidChangeNotification"

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Application states, named as in UIKit's `UIApplicationState` plus the two
/// states UIKit does not report to the app.
public enum AppState: String, Sendable, CaseIterable, Codable {
    case notRunning
    case inactive
    case active
    case background
    case suspended
}

/// Request methods an app may call on the daemon.
public enum RequestMethod: String, Sendable, CaseIterable {
    case beginBackgroundTask
    case endBackgroundTask
    case backgroundTimeRemaining
    case scheduleTimer
    case cancelTimer
}

/// Launch-option keys, as UIKit names them.
public enum LaunchOptionKey {
    public static let location = "UIApplicationLaunchOptionsLocationKey"
    public static let remoteNotification = "UIApplicationLaunchOptionsRemoteNotificationKey"
    public static let newsstandDownloads = "UIApplicationLaunchOptionsNewsstandDownloadsKey"
}

/// Environment variables the daemon sets for every app process it spawns.
public enum AppEnvironment {
    /// Path of the daemon's app socket.
    public static let socket = "OFFSTAGE_SOCKET"
    /// The per-launch token the app presents in its `hello`.
    public static let token = "OFFSTAGE_TOKEN"
    /// The app's bundle identifier.
    public static let bundleID = "OFFSTAGE_BUNDLE_ID"
    /// The app's container directory.
    public static let container = "OFFSTAGE_CONTAINER"
}
