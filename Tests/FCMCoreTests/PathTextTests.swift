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
}
