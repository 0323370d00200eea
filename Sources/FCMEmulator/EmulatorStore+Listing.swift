import Foundation

/// Paged listings for the inspector and for scripts (`GET /emulator/v1/registrations`, `topics`,
/// `topics/NAME/subscribers`, `groups`). Pages are keyset pages over sorted views: a page token names the
/// last item shown, so a page costs a binary search and the items on it, however many registrations there
/// are, and a change between two pages neither repeats nor skips an item that stays.
extension EmulatorStore {
    struct Page<Item: Sendable>: Sendable {
        var items: [Item]
        /// The token of the next page; nil on the last.
        var next: String?
    }

    static let defaultPageSize = 50
    static let maximumPageSize = 1000

    func registrationPage(matching query: RegistrationQuery, after token: String?, size: Int) -> Page<(String, RegistrationRecord)> {
        var ids = sortedIDList()
        if let narrowed = subscribers(ofTopicsMatching: query, fewerThan: ids.count / 4) { ids = narrowed }
        var index = token.flatMap(PageToken.decode).map { Self.firstIndex(in: ids, after: $0) } ?? 0
        var items: [(String, RegistrationRecord)] = []
        while index < ids.count, items.count <= size {
            let id = ids[index]
            if let record = registrations[id], query.matches(id: id, record) { items.append((id, record)) }
            index += 1
        }
        return Self.page(items, size: size) { $0.0 }
    }

    /// A `topic:` search reads the topic index instead of every registration's topics, when the topics it
    /// matches have fewer than `limit` subscribers together (`topic:news` among 100,000 registrations): the
    /// candidates, sorted. nil: walk every registration.
    private func subscribers(ofTopicsMatching query: RegistrationQuery, fewerThan limit: Int) -> [String]? {
        guard let needle = query.topicNeedle else { return nil }
        let keys = subscribers.keys.filter { needle.found(in: $0.topic) }
        guard keys.reduce(0, { $0 + (subscribers[$1]?.count ?? 0) }) < limit else { return nil }
        var candidates = Set<String>()
        for key in keys { candidates.formUnion(subscribers[key] ?? []) }
        return candidates.sorted()
    }

    /// The registration count a listing may show without a search: every one the emulator knows.
    var registrationCount: Int { registrations.count }

    func topicPage(containing text: String, project: String?, after token: String?, size: Int) -> Page<(TopicKey, Int)> {
        let keys = sortedTopicKeyList()
        var index = 0
        if let last = token.flatMap(PageToken.decode) {
            let parts = last.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let key = TopicKey(project: parts.count > 1 ? parts[1] : "", topic: parts[0])
            index = Self.partition(keys) { $0 <= key }
        }
        let needle = SearchText(text)
        var items: [(TopicKey, Int)] = []
        while index < keys.count, items.count <= size {
            let key = keys[index]
            if (project == nil || key.project == project) && needle.found(in: key.topic) { items.append((key, subscribers[key]?.count ?? 0)) }
            index += 1
        }
        return Self.page(items, size: size) { $0.0.topic + "\u{0}" + $0.0.project }
    }

    var topicCount: Int { subscribers.count }

    /// A topic's subscribers, in one project or (project nil) in every project that has the topic.
    func subscriberPage(topic: String, project: String?, after token: String?, size: Int) -> (page: Page<(String, RegistrationRecord)>, total: Int) {
        let keys = project.map { [TopicKey(project: $0, topic: topic)] } ?? sortedTopicKeyList().filter { $0.topic == topic }
        var ids: [String]
        if keys.count == 1 {
            ids = sortedSubscriberList(keys[0])
        } else {
            ids = keys.flatMap { sortedSubscriberList($0) }
            ids.sort()
        }
        var index = token.flatMap(PageToken.decode).map { Self.firstIndex(in: ids, after: $0) } ?? 0
        var items: [(String, RegistrationRecord)] = []
        while index < ids.count, items.count <= size {
            if let record = registrations[ids[index]] { items.append((ids[index], record)) }
            index += 1
        }
        return (Self.page(items, size: size) { $0.0 }, ids.count)
    }

    func groupPage(containing text: String, after token: String?, size: Int) -> Page<(GroupName, GroupRecord)> {
        let sorted = groups.sorted { ($0.key.senderId, $0.key.name) < ($1.key.senderId, $1.key.name) }
        var index = 0
        if let last = token.flatMap(PageToken.decode) {
            index = Self.partition(sorted) { $0.key.senderId + "\u{0}" + $0.key.name <= last }
        }
        let needle = SearchText(text)
        var items: [(GroupName, GroupRecord)] = []
        while index < sorted.count, items.count <= size {
            let (name, record) = sorted[index]
            if needle.isEmpty || needle.found(in: name.name) || needle.found(in: name.senderId) || record.members.contains(where: needle.found) {
                items.append((name, record))
            }
            index += 1
        }
        return Self.page(items, size: size) { $0.0.senderId + "\u{0}" + $0.0.name }
    }

    /// The groups a registration is a member of, for its detail view.
    func groups(containing id: String) -> [GroupName] {
        groups.filter { $0.value.members.contains(id) }.map(\.key).sorted { ($0.senderId, $0.name) < ($1.senderId, $1.name) }
    }

    // MARK: Sorted views

    private func sortedIDList() -> [String] {
        if let sortedIDs { return sortedIDs }
        let fresh = registrations.keys.sorted()
        sortedIDs = fresh
        return fresh
    }

    private func sortedTopicKeyList() -> [TopicKey] {
        if let sortedTopicKeys { return sortedTopicKeys }
        let fresh = subscribers.keys.sorted()
        sortedTopicKeys = fresh
        return fresh
    }

    private func sortedSubscriberList(_ key: TopicKey) -> [String] {
        if let cached = sortedSubscribers[key] { return cached }
        let fresh = (subscribers[key] ?? []).sorted()
        sortedSubscribers[key] = fresh
        return fresh
    }

    // MARK: Helpers

    /// One more item than the page holds was collected when there is a next page.
    private static func page<Item: Sendable>(_ items: [Item], size: Int, key: (Item) -> String) -> Page<Item> {
        guard items.count > size else { return Page(items: items, next: nil) }
        let shown = Array(items.prefix(size))
        return Page(items: shown, next: shown.last.map { PageToken.encode(key($0)) })
    }

    private static func firstIndex(in sorted: [String], after key: String) -> Int { partition(sorted) { $0 <= key } }

    /// The index of the first element for which `belongsBefore` is false, in a sorted array.
    private static func partition<Element>(_ sorted: [Element], _ belongsBefore: (Element) -> Bool) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if belongsBefore(sorted[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Page tokens are the last key shown, base64url-encoded: opaque to callers, and safe in a query string.
enum PageToken {
    static func encode(_ key: String) -> String {
        Data(key.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ token: String) -> String? {
        guard !token.isEmpty else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).flatMap { String(data: $0, encoding: .utf8) }
    }
}
