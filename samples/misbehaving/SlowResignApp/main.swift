// Misbehaving test app: takes half a second to answer
// applicationWillResignActive: (slow, but within a virtual-time hang grace of
// a second), then blocks in applicationDidEnterBackground: forever, so the
// 5 s watchdog must kill it (0x8badf00d).
import Foundation
import OffstageKit

@MainActor
final class SlowResignDelegate: ApplicationDelegate {
    func applicationWillResignActive(_ application: Application) {
        AppLog("applicationWillResignActive: working for half a second")
        Thread.sleep(forTimeInterval: 0.5)
    }

    func applicationDidEnterBackground(_ application: Application) {
        AppLog("applicationDidEnterBackground: blocking the main thread")
        while true { Thread.sleep(forTimeInterval: 3600) }
    }
}

Application.main(delegate: SlowResignDelegate())
