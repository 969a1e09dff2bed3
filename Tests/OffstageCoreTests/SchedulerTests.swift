import Testing
@testable import OffstageCore

@Suite struct SchedulerTests {
    @Test func timersFireInDeadlineThenInsertionOrder() {
        var scheduler = Scheduler<String>()
        scheduler.schedule("b", at: ClockTime(seconds: 2))
        scheduler.schedule("a1", at: ClockTime(seconds: 1))
        scheduler.schedule("a2", at: ClockTime(seconds: 1))
        let cancelled = scheduler.schedule("x", at: ClockTime(seconds: 0.5))
        scheduler.cancel(cancelled)
        #expect(scheduler.nextDeadline() == ClockTime(seconds: 1))
        var fired: [String] = []
        while let (_, _, payload) = scheduler.popDue(by: ClockTime(seconds: 10)) { fired.append(payload) }
        #expect(fired == ["a1", "a2", "b"])
        #expect(scheduler.nextDeadline() == nil)
    }

    @Test func nothingIsDueBeforeItsDeadline() {
        var scheduler = Scheduler<Int>()
        scheduler.schedule(1, at: ClockTime(seconds: 5))
        #expect(scheduler.popDue(by: ClockTime(seconds: 4.999)) == nil)
        #expect(scheduler.popDue(by: ClockTime(seconds: 5))?.payload == 1)
    }

    @Test func secondsAreFormattedCompactly() {
        #expect(formatSeconds(12) == "12")
        #expect(formatSeconds(12.5) == "12.5")
        #expect(formatSeconds(0.001) == "0.001")
        // These trapped (an Int64 conversion): a user's --start 1e300 is shown as written.
        #expect(formatSeconds(1e300) == "1e+300")
        #expect(formatSeconds(-.infinity) == "-inf")
    }
}
