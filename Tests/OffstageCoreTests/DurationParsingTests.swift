import Testing
@testable import OffstageCore

@Suite struct DurationParsingTests {
    @Test func theCLIsWordsParse() {
        #expect(parseDuration("90") == .seconds(90))
        #expect(parseDuration("1.5s") == .milliseconds(1500))
        #expect(parseDuration("250ms") == .milliseconds(250))
        #expect(parseDuration("1m30s") == .seconds(90))
        #expect(parseDuration("2h") == .seconds(7200))
        #expect(parseDuration("36500d") == .seconds(36500 * 86400))
        #expect(parseDuration("1d2h3m4s250ms") == .seconds(86400 + 7200 + 180 + 4) + .milliseconds(250))
    }

    @Test func unitsComeLargestFirstAndOnce() {
        // These were read as 2 s, 1 d 2 h and 1000 s.
        for text in ["1s1s", "2h1d", "30s1m", "1ms1s", "1e3", "1e3s", "0x10", "1..5s", "+5s", "٣s"] {
            #expect(parseDuration(text) == nil, "\(text)")
        }
    }

    @Test func negativeNonFiniteAndTooLongAreNotDurations() {
        // 107000d was past Int64 nanoseconds and trapped the CLI.
        for text in ["-5s", "-5", "107000d", "36501d", "1e300", "inf", "nan", "", "5x", "s"] {
            #expect(parseDuration(text) == nil, "\(text)")
        }
    }

    @Test func acceptedSecondsStopAtAHundredYears() {
        #expect(Duration(acceptedSeconds: 0) == .zero)
        #expect(Duration(acceptedSeconds: 36500 * 86400) == .longestAccepted)
        #expect(Duration(acceptedSeconds: 36500 * 86400 + 1) == nil)
        #expect(Duration(acceptedSeconds: -0.5) == nil)
        #expect(Duration(acceptedSeconds: .infinity) == nil)
    }

    @Test func byteSizesParseInPowersOf1024() {
        #expect(parseByteSize("1048576") == 1_048_576)
        #expect(parseByteSize("500K") == 512_000)
        #expect(parseByteSize("1.5g") == 1_610_612_736)
        #expect(parseByteSize(" 200M ") == 209_715_200)
    }

    /// 99999999999G and infG trapped the CLI and the scenario reader.
    @Test func aByteSizeAnIntCannotHoldOrThatIsNotDigitsIsNone() {
        for text in ["99999999999G", "9999999999999999999", "infG", "nanK", "1e30K", "-1K", "-5", "+5", "+5K", "0x10M", "1.2.3K", "K", ""] {
            #expect(parseByteSize(text) == nil, "\(text)")
        }
        #expect(parseByteSize("8589934591G") == 8_589_934_591 << 30)
    }
}
