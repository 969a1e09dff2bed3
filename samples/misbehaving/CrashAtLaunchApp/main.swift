// Misbehaving test app: crashes in application:didFinishLaunchingWithOptions:.
import OffstageKit

@MainActor
final class CrashingDelegate: ApplicationDelegate {
    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool {
        AppLog("application:didFinishLaunchingWithOptions: about to crash")
        fatalError("CrashAtLaunchApp crashes at launch on purpose")
    }
}

Application.main(delegate: CrashingDelegate())
