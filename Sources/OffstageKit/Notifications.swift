import Foundation
import OffstageProtocol

extension Notification.Name {
    public static let applicationDidFinishLaunching = Notification.Name("UIApplicationDidFinishLaunchingNotification")
    public static let applicationDidBecomeActive = Notification.Name("UIApplicationDidBecomeActiveNotification")
    public static let applicationWillResignActive = Notification.Name("UIApplicationWillResignActiveNotification")
    public static let applicationDidEnterBackground = Notification.Name("UIApplicationDidEnterBackgroundNotification")
    public static let applicationWillEnterForeground = Notification.Name("UIApplicationWillEnterForegroundNotification")
    public static let applicationWillTerminate = Notification.Name("UIApplicationWillTerminateNotification")
    public static let applicationDidReceiveMemoryWarning = Notification.Name(
        "UIApplicationDidReceiveMemoryWarningNotification")
    public static let applicationSignificantTimeChange = Notification.Name(
        SystemNotificationName.significantTimeChange.rawValue)
    public static let deviceBatteryLevelDidChange = Notification.Name(SystemNotificationName.batteryLevel.rawValue)
    public static let deviceOrientationDidChange = Notification.Name(SystemNotificationName.orientation.rawValue)
    public static let currentLocaleDidChange = Notification.Name(SystemNotificationName.locale.rawValue)
    public static let userDefaultsDidChange = Notification.Name(SystemNotificationName.userDefaults.rawValue)
}

extension CallbackName {
    /// The notification UIKit posts after the delegate method.
    var notificationName: Notification.Name? {
        switch self {
        case .didFinishLaunching: return .applicationDidFinishLaunching
        case .didBecomeActive: return .applicationDidBecomeActive
        case .willResignActive: return .applicationWillResignActive
        case .didEnterBackground: return .applicationDidEnterBackground
        case .willEnterForeground: return .applicationWillEnterForeground
        case .willTerminate: return .applicationWillTerminate
        case .didReceiveMemoryWarning: return .applicationDidReceiveMemoryWarning
        case .willFinishLaunching, .backgroundTaskExpiration, .timer: return nil
        }
    }
}
