// Misbehaving test app: begins a background task and never ends it, not even
// in its expiration handler, so the system must kill it when the budget ends.
import OffstageKit

@MainActor
final class EndlessTaskDelegate: ApplicationDelegate {
    func applicationDidEnterBackground(_ application: Application) {
        let task = application.beginBackgroundTask {
            AppLog("expiration handler: ignoring it")
        }
        AppLog("began background task \(task); never ending it")
    }
}

Application.main(delegate: EndlessTaskDelegate())
