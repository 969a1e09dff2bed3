import Testing

@testable import OffstageDaemon

@Suite struct ShortListTests {
    /// A status line listed every one of an app's task ids: 200 KB for 30,000.
    @Test func aLongListShowsItsFirstItemsAndCountsTheRest() {
        let ids = (1...30_000).map { "#\($0)" }
        #expect(shortList(ids) == "#1, #2, #3, #4, #5 and 29995 more")
    }

    /// One more than shown is shown whole: "and 1 more" is no shorter.
    @Test func aShortListIsShownWhole() {
        #expect(shortList([]) == "")
        #expect(shortList(["#1"]) == "#1")
        #expect(shortList((1...6).map { "#\($0)" }) == "#1, #2, #3, #4, #5, #6")
        #expect(shortList((1...7).map { "#\($0)" }) == "#1, #2, #3, #4, #5 and 2 more")
    }
}
