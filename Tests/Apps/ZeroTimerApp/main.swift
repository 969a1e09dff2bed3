// Test app: when it first becomes active, schedules a timer for 0 s of the
// daemon's clock through OffstageKit, and logs when the timer's body runs.
import OffstageKit

@MainActor
final class ZeroTimerDelegate: ApplicationDelegate {
    private var scheduled = false

    func applicationDidBecomeActive(_ application: Application) {
        guard !scheduled else { return }
        scheduled = true
        let timer = application.schedule(after: 0) { AppLog("timer fired") }
        AppLog("scheduled timer \(timer)")
    }
}

Application.main(delegate: ZeroTimerDelegate())
