import Testing

@testable import OffstageDaemon

@Suite("gpsd device reports")
struct GPSDControlTests {
    let device = "/dev/pts/7"

    @Test func aDeviceIsActivatedWhateverTheOrderOfItsMembers() {
        let listed = #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/3","activated":"2026-11-22T01:00:00.000Z"},{"class":"DEVICE","activated":"2026-11-22T01:00:01.000Z","driver":"NMEA0183","path":"/dev/pts/7"}]}"#
        #expect(GPSDControl.reportsActivated(device, line: listed))
        let single = #"{"class":"DEVICE","activated":"2026-11-22T01:00:01.000Z","path":"/dev/pts/7"}"#
        #expect(GPSDControl.reportsActivated(device, line: single))
    }

    @Test func anotherDeviceOrOneNotActivatedIsNot() {
        let other = #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/pts/3","activated":"2026-11-22T01:00:00.000Z"}]}"#
        #expect(!GPSDControl.reportsActivated(device, line: other))
        let inactive = #"{"class":"DEVICE","path":"/dev/pts/7","driver":"NMEA0183"}"#
        #expect(!GPSDControl.reportsActivated(device, line: inactive))
        let prefix = #"{"class":"DEVICE","path":"/dev/pts/70","activated":"2026-11-22T01:00:01.000Z"}"#
        #expect(!GPSDControl.reportsActivated(device, line: prefix))
        #expect(!GPSDControl.reportsActivated(device, line: #"{"class":"VERSION","release":"3.22"}"#))
        #expect(!GPSDControl.reportsActivated(device, line: "not json"))
    }
}
