/// An FCM condition such as `'TopicA' in topics && ('TopicB' in topics || !('TopicC' in topics))`:
/// `&&`, `||`, `!` and parentheses over at most five topics (wire reference §4).
indirect enum TopicCondition: Sendable {
    case topic(String)
    case not(TopicCondition)
    case and(TopicCondition, TopicCondition)
    case or(TopicCondition, TopicCondition)

    static let topicLimit = 5

    func matches(_ topics: Set<String>) -> Bool {
        switch self {
        case .topic(let name): topics.contains(name)
        case .not(let inner): !inner.matches(topics)
        case .and(let a, let b): a.matches(topics) && b.matches(topics)
        case .or(let a, let b): a.matches(topics) || b.matches(topics)
        }
    }

    var topics: Set<String> {
        switch self {
        case .topic(let name): [name]
        case .not(let inner): inner.topics
        case .and(let a, let b), .or(let a, let b): a.topics.union(b.topics)
        }
    }

    struct ParseError: Error {
        var message: String
    }

    static func parse(_ text: String) throws -> TopicCondition {
        var parser = Parser(characters: Array(text))
        let condition = try parser.parseOr()
        parser.skipSpaces()
        guard parser.index == parser.characters.count else { throw ParseError(message: "unexpected text at position \(parser.index + 1)") }
        guard condition.topics.count <= topicLimit else {
            throw ParseError(message: "a condition may use at most \(topicLimit) topics, this one uses \(condition.topics.count)")
        }
        return condition
    }

    /// How deep `!` and parentheses may nest, and how often topics may be named. [GUESS] FCM's limits are
    /// unrecorded; five topics never need more, and the parser and the tree recurse once per level: a condition
    /// of 200,000 `!` overflowed the stack (SIGSEGV).
    static let nestingLimit = 50

    private struct Parser {
        let characters: [Character]
        var index = 0
        var depth = 0
        /// Topics read so far, counted while parsing: a longer chain builds a tree too deep to walk.
        var names = Set<String>()
        var mentions = 0

        mutating func skipSpaces() {
            while index < characters.count, characters[index] == " " { index += 1 }
        }

        mutating func consume(_ token: String) -> Bool {
            skipSpaces()
            let end = index + token.count
            guard end <= characters.count, String(characters[index..<end]) == token else { return false }
            index = end
            return true
        }

        mutating func parseOr() throws -> TopicCondition {
            var left = try parseAnd()
            while consume("||") { left = .or(left, try parseAnd()) }
            return left
        }

        mutating func parseAnd() throws -> TopicCondition {
            var left = try parseUnary()
            while consume("&&") { left = .and(left, try parseUnary()) }
            return left
        }

        mutating func parseUnary() throws -> TopicCondition {
            if consume("!") { return .not(try nested { try $0.parseUnary() }) }
            if consume("(") {
                let inner = try nested { try $0.parseOr() }
                guard consume(")") else { throw ParseError(message: "missing ')' at position \(index + 1)") }
                return inner
            }
            skipSpaces()
            guard index < characters.count, characters[index] == "'" || characters[index] == "\"" else {
                throw ParseError(message: "expected 'topic' in topics at position \(index + 1)")
            }
            let quote = characters[index]
            index += 1
            let start = index
            while index < characters.count, characters[index] != quote { index += 1 }
            guard index < characters.count else { throw ParseError(message: "unterminated topic name") }
            let name = String(characters[start..<index])
            index += 1
            guard TopicSubscriptionRoutes.isValidTopic(name) else { throw ParseError(message: "invalid topic name '\(name)'") }
            guard consume("in"), consume("topics") else { throw ParseError(message: "expected 'in topics' after '\(name)'") }
            names.insert(name)
            mentions += 1
            guard names.count <= TopicCondition.topicLimit else {
                throw ParseError(message: "a condition may use at most \(TopicCondition.topicLimit) topics, this one uses more")
            }
            guard mentions <= TopicCondition.nestingLimit else {
                throw ParseError(message: "a condition may name its topics at most \(TopicCondition.nestingLimit) times")
            }
            return .topic(name)
        }

        mutating func nested(_ parse: (inout Parser) throws -> TopicCondition) throws -> TopicCondition {
            depth += 1
            defer { depth -= 1 }
            guard depth <= TopicCondition.nestingLimit else {
                throw ParseError(message: "nested deeper than \(TopicCondition.nestingLimit) levels of ! and parentheses")
            }
            return try parse(&self)
        }
    }
}
