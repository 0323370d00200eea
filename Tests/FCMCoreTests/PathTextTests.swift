import FCMCore
import Testing

@Suite struct PathTextTests {
    @Test(arguments: [
        ("a", ""), ("b/state.json", "b"), ("a/b/c", "a/b"), ("a/", ""), ("x//y", "x"), ("/a", "/"), ("/", "/"), (".", ""),
        ("./a", "."), ("a/b/", "a"), ("", ""), ("é/ß", "é"),
    ])
    func directoryOfAPath(path: String, directory: String) {
        #expect(PathText.directory(of: path) == directory)
    }

    @Test(arguments: [
        ("fcm/dev", "/w/fcm/dev"), ("./fcm//dev/", "/w/fcm/dev"), ("fcm/./dev/.fcmctl/state.json", "/w/fcm/dev/.fcmctl/state.json"),
        ("/abs/x", "/abs/x"), ("a/../b", "/w/a/../b"), (".", "/w"),
    ])
    func normalizedPathsNameOnePlaceOneWay(path: String, normalized: String) {
        #expect(PathText.normalized(path, against: "/w") == normalized)
    }
}
