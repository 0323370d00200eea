import FCMCore
import Testing

/// Which states a manifest's project may use: only two known values that differ are a conflict.
@Suite struct ProjectBindingTests {
    let dev = ProjectBinding(id: "acme-dev", senderId: "111")
    let prod = ProjectBinding(id: "acme-prod", senderId: "222")

    @Test func knownValuesThatDifferConflict() {
        #expect(dev.conflicts(with: prod))
        #expect(dev.conflicts(with: ProjectBinding(id: "acme-prod")))
        #expect(dev.conflicts(with: ProjectBinding(senderId: "222")))
        #expect(dev.conflicts(with: ProjectBinding(id: "acme-dev", senderId: "222")), "a sender id of another project")
    }

    @Test func unknownValuesDoNotConflict() {
        #expect(!dev.conflicts(with: dev))
        #expect(!ProjectBinding().conflicts(with: prod), "a state written before the binding")
        #expect(!dev.conflicts(with: ProjectBinding()), "a manifest that names no project")
        #expect(!ProjectBinding(id: "acme-dev").conflicts(with: ProjectBinding(senderId: "111")))
    }

    @Test func aWriteCompletesTheBindingAndForgetsNothing() {
        var ledger = Ledger(lineage: "L")
        ledger.bind(to: ProjectBinding(id: "acme-dev"))
        ledger.bind(to: ProjectBinding(senderId: "111"))
        #expect(ledger.project == dev)
        ledger.bind(to: ProjectBinding())
        #expect(ledger.project == dev)
    }
}
