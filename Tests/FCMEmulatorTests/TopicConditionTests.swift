import Testing

@testable import FCMEmulator

@Suite struct TopicConditionTests {
    @Test func conditionsWithinFCMsLimitsParseAndMatch() throws {
        let condition = try TopicCondition.parse("!!('a' in topics) && ('b' in topics || !('c' in topics))")
        #expect(condition.matches(["a", "b"]) && !condition.matches(["a", "c"]))
        #expect(try TopicCondition.parse(Array(repeating: "'a' in topics", count: 50).joined(separator: " && ")).topics == ["a"])
    }

    /// A condition of 200,000 `!` or parentheses overflowed the stack (SIGSEGV); a long chain built a tree too
    /// deep to walk. Each is refused while parsing, at the limit.
    @Test(arguments: [
        (String(repeating: "!", count: 200_000) + "'a' in topics", "nested deeper than 50 levels"),
        (String(repeating: "(", count: 200_000) + "'a' in topics" + String(repeating: ")", count: 200_000), "nested deeper than 50 levels"),
        (Array(repeating: "'a' in topics", count: 100_000).joined(separator: " || "), "at most 50 times"),
        ((1...6).map { "'t\($0)' in topics" }.joined(separator: " && "), "at most 5 topics"),
    ])
    func deepOrLongConditionsAreRefusedNotOverflowed(text: String, reason: String) {
        #expect {
            _ = try TopicCondition.parse(text)
        } throws: { error in
            (error as? TopicCondition.ParseError)?.message.contains(reason) == true
        }
    }
}
