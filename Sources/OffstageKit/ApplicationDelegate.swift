import OffstageProtocol

/// Launch options, keyed as UIKit keys them (`UIApplicationLaunchOptionsLocationKey`, …).
public typealias LaunchOptions = [String: JSONValue]

/// The app delegate: the UIKit method names, called on the main thread.
///
/// Every method has a default implementation that does nothing, so an app
/// implements only what it needs.
@MainActor
public protocol ApplicationDelegate: AnyObject {
    func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool
    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool
    func applicationDidBecomeActive(_ application: Application)
    func applicationWillResignActive(_ application: Application)
    func applicationDidEnterBackground(_ application: Application)
    func applicationWillEnterForeground(_ application: Application)
    func applicationWillTerminate(_ application: Application)
    func applicationDidReceiveMemoryWarning(_ application: Application)
    /// A callback the SDK has no method for (a service event from a newer daemon).
    func application(_ application: Application, didReceiveCallback name: String, detail: JSONValue)
}

extension ApplicationDelegate {
    public func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions)
        -> Bool
    { true }
    public func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions)
        -> Bool
    { true }
    public func applicationDidBecomeActive(_ application: Application) {}
    public func applicationWillResignActive(_ application: Application) {}
    public func applicationDidEnterBackground(_ application: Application) {}
    public func applicationWillEnterForeground(_ application: Application) {}
    public func applicationWillTerminate(_ application: Application) {}
    public func applicationDidReceiveMemoryWarning(_ application: Application) {}
    public func application(_ application: Application, didReceiveCallback name: String, detail: JSONValue) {}
}
