import Foundation
import Testing

@testable import FCMEmulator

@Suite struct IIDTokenErrorTests {
    @Test func theFlagNamesCodesAndEndpoints() throws {
        let rates = try IIDTokenErrorRate.parse("RESOURCE_EXHAUSTED=0.05,iid.batchRemove:INTERNAL=0.01")
        #expect(
            rates == [
                IIDTokenErrorRate(endpoint: nil, error: "RESOURCE_EXHAUSTED", rate: 0.05),
                IIDTokenErrorRate(endpoint: "iid.batchRemove", error: "INTERNAL", rate: 0.01),
            ])
        for (bad, why) in [
            ("NOT_FOUND=0.1", "not a per-token error to inject"), ("INTERNAL=2", "out of range"),
            ("topics.create:INTERNAL=0.1", "not an IID batch endpoint"), ("INTERNAL", "is not [ENDPOINT:]CODE=RATE"),
        ] {
            do {
                let parsed = try IIDTokenErrorRate.parse(bad)
                Issue.record("\(bad) was taken: \(parsed)")
            } catch {
                #expect("\(error)".contains(why), "\(bad): \(error)")
            }
        }
    }

    @Test func theAdminAPINamesTheFieldAtFault() throws {
        let settings = try JSONDecoder().decode(
            FaultSettings.self,
            from: Data(#"{"iid_token_errors": [{"error": "RESOURCE_EXHAUSTED", "rate": 0.05}, {"error": "UNAVAILABLE", "rate": 1}]}"#.utf8))
        #expect(settings.problem?.hasPrefix("iid_token_errors[1].error: ") == true, "\(settings.problem ?? "")")
        let fine = try JSONDecoder().decode(FaultSettings.self, from: Data(#"{"iid_token_errors": [{"error": "INTERNAL", "rate": 0.5}]}"#.utf8))
        #expect(fine.problem == nil)
        // Written back as given: GET faults shows what PUT set.
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(fine)) as? [String: Any]
        #expect((encoded?["iid_token_errors"] as? [[String: Any]])?.first?["error"] as? String == "INTERNAL")
    }

    @Test func drawsRepeatWithTheSeedAndKeepToTheirEndpoint() async {
        var faults = FaultSettings()
        faults.iidTokenErrors = [IIDTokenErrorRate(endpoint: "iid.batchAdd", error: "RESOURCE_EXHAUSTED", rate: 0.05)]
        let one = FaultInjector(faults: faults, quotas: QuotaSettings(), seed: 7)
        let two = FaultInjector(faults: faults, quotas: QuotaSettings(), seed: 7)
        var first: [Int: String] = [:]
        var second: [Int: String] = [:]
        for round in 0..<10 {
            for (index, code) in await one.tokenErrors(.iidBatchAdd, count: 1000) { first[round * 1000 + index] = code }
            for (index, code) in await two.tokenErrors(.iidBatchAdd, count: 1000) { second[round * 1000 + index] = code }
        }
        #expect(first == second)
        #expect(Set(first.values) == ["RESOURCE_EXHAUSTED"])
        #expect((400...600).contains(first.count), "about 5 % of 10,000: \(first.count)")
        #expect(await one.tokenErrors(.iidBatchRemove, count: 1000).isEmpty)
    }
}
