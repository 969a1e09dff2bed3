import Foundation
import Testing
@testable import OffstageDaemon
import OffstageCore

/// The launch judgement from hand-made logs (the scenario tests play whole
/// runs): a queued `launch` of a running app is judged by its resume.
@Suite struct LaunchJudgementTests {
    let app = "com.example.App"

    /// The app's events, numbered from 1: (kind, name, detail).
    func log(_ entries: [(EventKind, String, JSONValue)]) -> [Event] {
        entries.enumerated().map { Event(seq: $0.offset + 1, time: 0, app: app, kind: $0.element.0, name: $0.element.1, detail: $0.element.2) }
    }

    /// A launched app, then sent to the background and suspended.
    var suspended: [(EventKind, String, JSONValue)] {
        [
            (.system, "launch", [:]), (.system, "spawn", [:]), (.state, "inactive", [:]),
            (.callback, CallbackName.willFinishLaunching.rawValue, [:]), (.callback, CallbackName.didFinishLaunching.rawValue, [:]),
            (.state, "active", [:]), (.callback, CallbackName.didBecomeActive.rawValue, [:]),
            (.callback, CallbackName.willResignActive.rawValue, [:]), (.state, "inactive", [:]), (.state, "background", [:]),
            (.callback, CallbackName.didEnterBackground.rawValue, [:]), (.state, "suspended", [:]),
        ]
    }

    /// Back in front, it gets what it missed while suspended between
    /// `applicationWillEnterForeground:` and `applicationDidBecomeActive:`:
    /// a crash in either fails the launch. A missed notification was taken
    /// for "the launch was done", and the crash after it passed.
    @Test(arguments: ["UIDeviceBatteryLevelDidChangeNotification", CallbackName.didBecomeActive.rawValue])
    func aResumeThatDiesAfterWhatItMissedFails(diesIn callback: String) {
        let events = log(suspended + [
            (.system, "launch", [:]), (.state, "background", [:]), (.callback, CallbackName.willEnterForeground.rawValue, [:]),
            (.state, "inactive", [:]), (.callback, "UIDeviceBatteryLevelDidChangeNotification", [:]),
        ] + (callback == CallbackName.didBecomeActive.rawValue ? [(.callback, callback, [:])] : []) + [
            (.error, "crashed", ["signal": 6, "callback": .string(callback)]), (.state, "notRunning", [:]),
        ])
        let (failure, launch) = LaunchJudgement.judge(app, since: 12, in: events)
        #expect(launch == 13)
        #expect(failure == "\(app) did not launch: it crashed (signal 6, SIGABRT)")
    }

    /// Done once it is active: a later crash in another callback is not the launch's.
    @Test func aResumeDoneIsNotFailedByALaterCrash() {
        let events = log(suspended + [
            (.system, "launch", [:]), (.state, "background", [:]), (.callback, CallbackName.willEnterForeground.rawValue, [:]),
            (.state, "inactive", [:]), (.callback, CallbackName.didBecomeActive.rawValue, [:]), (.state, "active", [:]),
            (.callback, CallbackName.willResignActive.rawValue, [:]),
            (.error, "crashed", ["signal": 6, "callback": .string(CallbackName.willResignActive.rawValue)]),
        ])
        #expect(LaunchJudgement.judge(app, since: 12, in: events).failure == nil)
    }

    /// A launch of the app in front does nothing, whatever comes later.
    @Test func aLaunchOfTheActiveAppDidNothing() {
        let events = log(Array(suspended.prefix(7)) + [(.system, "launch", [:]), (.error, "crashed", ["signal": 9])])
        #expect(LaunchJudgement.judge(app, since: 7, in: events) == (nil, 8))
    }

    /// Still in a callback it missed when the run ended: it never came back.
    @Test func aResumeStillInWhatItMissedWhenTheRunEndsFails() {
        let events = log(suspended + [
            (.system, "launch", [:]), (.state, "background", [:]), (.callback, CallbackName.willEnterForeground.rawValue, [:]),
            (.state, "inactive", [:]), (.callback, "timerFired", [:]),
        ])
        #expect(LaunchJudgement.judge(app, since: 12, in: events, stillIn: "timerFired").failure?.hasPrefix("\(app) did not launch: it was still in timerFired") == true)
    }

    /// A failed launch's log line is its own unless the app was spawned
    /// again later: its own spawn (right after its `launch`) does not count.
    @Test func aLaunchIsRespawnedOnlyByALaterSpawn() {
        let crashed: [(EventKind, String, JSONValue)] = [(.error, "crashed", ["signal": 6]), (.state, "notRunning", [:])]
        let once = log(Array(suspended.prefix(2)) + crashed)
        #expect(!LaunchJudgement.respawned(app, after: 1, in: once))
        let twice = log(Array(suspended.prefix(2)) + crashed + Array(suspended.prefix(2)))
        #expect(LaunchJudgement.respawned(app, after: 1, in: twice))
        #expect(!LaunchJudgement.respawned(app, after: 5, in: twice))
        // A resume (no spawn of its own) is respawned by any later one.
        let resumed = log(suspended + [(.system, "launch", [:])] + crashed + [(.system, "spawn", [:])])
        #expect(LaunchJudgement.respawned(app, after: 13, in: resumed))
        #expect(!LaunchJudgement.respawned(app, after: 13, in: Array(resumed.dropLast())))
    }
}
