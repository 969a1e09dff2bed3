// State Lab, after "Beginning iPhone Development", chapter 15: logs every
import Foundation
// lifecycle callback, keeps a segment index in its defaults store (saved in
// applicationDidEnterBackground:, restored at launch), and starts the 25 s
// background task with an expiration handler when it goes to the background.
import OffstageKit

@MainActor
final class StateLabDelegate: ApplicationDelegate {
    /// The selected segment of the view controller's segmented control.
    var index = 0

    func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool {
        AppLog("application:willFinishLaunchingWithOptions:")
        return true
    }

    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool {
        AppLog("application:didFinishLaunchingWithOptions:")
        index = Defaults.standard.integer(forKey: "index")
        AppLog("VC: restored index \(index)")
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {
        AppLog("applicationDidBecomeActive:")
        // The user taps the next segment each time the app comes up.
        index = (index + 1) % 4
        AppLog("VC: selected segment \(index)")
    }

    func applicationWillResignActive(_ application: Application) {
        AppLog("applicationWillResignActive:")
    }

    func applicationDidEnterBackground(_ application: Application) {
        AppLog("applicationDidEnterBackground:")
        Defaults.standard.set(index, forKey: "index")
        AppLog("VC: saved index \(index)")

        let task = BackgroundTaskBox()
        task.id = application.beginBackgroundTask {
            AppLog("Background task ran out of time and was terminated.")
            application.endBackgroundTask(task.id)
        }
        if task.id == backgroundTaskInvalid {
            AppLog("Failed to start background task!")
            return
        }
        AppLog("Starting background task with \(format(application.backgroundTimeRemaining)) seconds remaining")
        // Simulate a lengthy (25 seconds) procedure, in the daemon's clock.
        application.schedule(after: 25) {
            AppLog("Finishing background task with \(format(application.backgroundTimeRemaining)) seconds remaining")
            application.endBackgroundTask(task.id)
        }
    }

    func applicationWillEnterForeground(_ application: Application) {
        AppLog("applicationWillEnterForeground:")
    }

    func applicationWillTerminate(_ application: Application) {
        AppLog("applicationWillTerminate:")
    }

    func applicationDidReceiveMemoryWarning(_ application: Application) {
        AppLog("applicationDidReceiveMemoryWarning:")
    }
}

/// The `__block` task identifier of the original, shared by both closures.
final class BackgroundTaskBox: @unchecked Sendable {
    var id: BackgroundTaskIdentifier = backgroundTaskInvalid
}

func format(_ seconds: Double) -> String {
    seconds >= .greatestFiniteMagnitude ? "unlimited" : String(format: "%.6f", seconds)
}

Application.main(delegate: StateLabDelegate())
