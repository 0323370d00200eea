import FCMCore
import FCMManifest
import Testing

@Suite struct RegistrationFormatTests {
    @Test func formatProblems() {
        #expect(Registration.formatProblem("") != nil)
        #expect(Registration.formatProblem("a b") != nil)
        #expect(Registration.formatProblem(String(repeating: "x", count: 4097)) != nil)
        #expect(Registration.formatProblem("ok:APA91b") == nil)
    }
}
