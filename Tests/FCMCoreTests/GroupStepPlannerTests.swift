import FCMCore
import Testing

@Suite struct GroupStepPlannerTests {
    static func registrations(_ prefix: String, _ range: ClosedRange<Int>) -> Set<Registration> {
        Set(range.map { Registration(value: "\(prefix)-\($0)", kind: .token) })
    }

    /// Replays the steps and checks the invariant at every moment: 1...20 members, ending at `desired`.
    static func replay(_ steps: [GroupStep], from current: Set<Registration>, to desired: Set<Registration>) -> [Int] {
        var members = current
        var sizes: [Int] = []
        for step in steps {
            switch step {
            case .create(let added):
                #expect(members.isEmpty, "create only for a group that does not exist")
                members.formUnion(added)
            case .add(let added):
                #expect(!added.isEmpty)
                members.formUnion(added)
            case .remove(let removed):
                #expect(!removed.isEmpty)
                members.subtract(removed)
            }
            sizes.append(members.count)
        }
        #expect(members == desired)
        return sizes
    }

    @Test func replacingAllTwentyMembersNeverExceedsTwentyNorReachesZero() {
        let old = Self.registrations("old", 1...20)
        let new = Self.registrations("new", 1...20)
        let steps = GroupStepPlanner.steps(from: old, to: new)
        let sizes = Self.replay(steps, from: old, to: new)
        #expect(sizes.allSatisfy { (1...20).contains($0) }, "sizes: \(sizes)")
        #expect(steps.count == 4)
        #expect(sizes == [1, 20, 19, 20])
    }

    @Test func growingAndShrinkingUseOneRequestEach() {
        let five = Self.registrations("a", 1...5)
        let eight = Self.registrations("a", 1...8)
        #expect(GroupStepPlanner.steps(from: five, to: eight) == [.add(Array(eight.subtracting(five)).sorted())])
        #expect(GroupStepPlanner.steps(from: eight, to: five) == [.remove(Array(eight.subtracting(five)).sorted())])
        #expect(GroupStepPlanner.steps(from: five, to: five).isEmpty)
    }

    @Test func createAndDelete() {
        let three = Self.registrations("a", 1...3)
        #expect(GroupStepPlanner.steps(from: [], to: three) == [.create(three.sorted())])
        #expect(GroupStepPlanner.steps(from: three, to: []) == [.remove(three.sorted())])
        #expect(GroupStepPlanner.steps(from: [], to: []).isEmpty)
    }

    /// Every combination of sizes and overlaps, deterministically generated.
    @Test(arguments: Array(stride(from: 1, through: 20, by: 3)), Array(stride(from: 1, through: 20, by: 3)))
    func invariantHoldsForAnyTransition(currentSize: Int, desiredSize: Int) {
        for overlap in 0...min(currentSize, desiredSize) {
            let current = Self.registrations("m", 1...currentSize)
            let keep = Set(current.sorted().prefix(overlap))
            let fresh = desiredSize - overlap > 0 ? Self.registrations("n", 1...(desiredSize - overlap)) : []
            let desired = keep.union(fresh)
            let sizes = Self.replay(GroupStepPlanner.steps(from: current, to: desired), from: current, to: desired)
            #expect(sizes.allSatisfy { (1...20).contains($0) }, "\(currentSize)→\(desiredSize) overlap \(overlap): \(sizes)")
        }
    }
}
