// Misbehaving test app: blocks in applicationDidEnterBackground: forever, so
// the 5 s watchdog must kill it (0x8badf00d).
import Foundation
import OffstageKit

@MainActor
final class BlockingDelegate: ApplicationDelegate {
    func applicationDidEnterBackground(_ application: Application) {
        AppLog("applicationDidEnterBackground: blocking the main thread")
        while true { Thread.sleep(forTimeInterval: 3600) }
    }
}

Application.main(delegate: BlockingDelegate())
