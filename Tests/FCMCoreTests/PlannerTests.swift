import FCMCore
import Testing

@Suite struct PlannerTests {
    let a = Registration(value: "tok-a:APA91b", kind: .token)
    let b = Registration(value: "tok-b:APA91b", kind: .token)
    let c = Registration(value: "tok-c:APA91b", kind: .token)
    let project = ProjectSettings(id: "p", senderId: "1")

    func desired(topic ownership: Ownership = .additive, members: Set<Registration>) -> DesiredState {
        DesiredState(project: project, topics: ["news": DesiredTopic(name: "news", members: members, ownership: ownership)])
    }

    @Test func subscribesOnlyWhatIsMissing() {
        let observed = ObservedState(registrations: [a: .active(topics: ["news"]), b: .active(topics: [])])
        let plan = Planner.plan(desired: desired(members: [a, b]), ledger: Ledger(), observed: observed)
        #expect(plan.topics.count == 1)
        #expect(plan.topics[0].added == [b])
        #expect(plan.topics[0].removed == [])
        #expect(plan.topics[0].unchanged == 1)
    }

    @Test func additiveRemovesOnlyLedgerRecordedSubscriptions() {
        var ledger = Ledger()
        ledger.recordSubscription(b, topic: "news")
        // c subscribed itself (not in the ledger); b was created by fcmctl and is no longer declared.
        let observed = ObservedState(registrations: [a: .active(topics: ["news"]), b: .active(topics: ["news"]), c: .active(topics: ["news"])])
        let plan = Planner.plan(desired: desired(members: [a]), ledger: ledger, observed: observed)
        #expect(plan.topics.map(\.removed) == [[b]])
    }

    @Test func authoritativeRemovesAnyKnownUndeclaredSubscriber() {
        var ledger = Ledger()
        ledger.recordSubscription(b, topic: "news")
        let observed = ObservedState(registrations: [a: .active(topics: ["news"]), b: .active(topics: ["news"]), c: .active(topics: ["news"])])
        let plan = Planner.plan(desired: desired(topic: .authoritative, members: [a]), ledger: ledger, observed: observed)
        #expect(plan.topics.map(\.removed) == [[b, c]])
    }

    @Test func observeNeverChangesButReports() {
        let observed = ObservedState(registrations: [a: .active(topics: [])])
        let plan = Planner.plan(desired: desired(topic: .observe, members: [a]), ledger: Ledger(), observed: observed)
        #expect(!plan.hasChanges)
        #expect(plan.findings == [.observeOnlyDiffers(topic: "news", missing: 1, extra: 0, at: nil)])
    }

    @Test func goneRegistrationsAreSkippedWithAWarning() {
        let observed = ObservedState(registrations: [a: .gone(reason: "UNREGISTERED"), b: .active(topics: [])])
        let plan = Planner.plan(desired: desired(members: [a, b]), ledger: Ledger(), observed: observed)
        #expect(plan.topics.map(\.added) == [[b]])
        #expect(plan.findings == [.registrationGone(topic: "news", registration: a, device: nil, reason: "UNREGISTERED", at: nil)])
    }

    @Test func goneRegistrationsAreReportedByTopicThenRegistration() {
        let observed = ObservedState(registrations: [
            c: .gone(reason: "NOT_FOUND"), a: .gone(reason: "UNREGISTERED"), b: .active(topics: []),
        ])
        let desired = DesiredState(
            project: project,
            topics: [
                "weather": DesiredTopic(name: "weather", members: [c, b], ownership: .additive),
                "news": DesiredTopic(name: "news", members: [c, b, a], ownership: .additive),
            ])
        let plan = Planner.plan(desired: desired, ledger: Ledger(), observed: observed)
        #expect(
            plan.findings == [
                .registrationGone(topic: "news", registration: a, device: nil, reason: "UNREGISTERED", at: nil),
                .registrationGone(topic: "news", registration: c, device: nil, reason: "NOT_FOUND", at: nil),
                .registrationGone(topic: "weather", registration: c, device: nil, reason: "NOT_FOUND", at: nil),
            ])
        #expect(plan.topics.map(\.added) == [[b], [b]])
    }

    @Test func groupsAreCreatedUpdatedAndDeleted() {
        var ledger = Ledger()
        ledger.recordGroup("old", members: [a])
        ledger.recordGroup("same", members: [c])
        ledger.recordGroup("grow", members: [a])
        let desired = DesiredState(
            project: project,
            groups: [
                "new": DesiredGroup(name: "new", members: [a, b]), "same": DesiredGroup(name: "same", members: [c]),
                "grow": DesiredGroup(name: "grow", members: [a, c]), "stranger": DesiredGroup(name: "stranger", members: [a, b]),
            ])
        let observed = ObservedState(groups: [
            "old": ObservedGroup(name: "old", notificationKey: "k1", members: [a]),
            "same": ObservedGroup(name: "same", notificationKey: "k2", members: [c]),
            "grow": ObservedGroup(name: "grow", notificationKey: "k3", members: [a]),
            "stranger": ObservedGroup(name: "stranger", notificationKey: "k4", members: [a]),
        ])
        let plan = Planner.plan(desired: desired, ledger: ledger, observed: observed)
        // A group that exists in FCM but that fcmctl never recorded is named, not silently adopted.
        #expect(plan.findings.contains(.groupNotInState(group: "stranger", at: nil)))
        #expect(plan.groups.map(\.name) == ["grow", "new", "old"])
        #expect(plan.groups.map(\.action) == [.update, .create, .delete])
        let summary = plan.summary
        #expect(
            [summary.groupsToCreate, summary.groupsToDelete, summary.membersToAdd, summary.membersToRemove, summary.subscriptionsToAdd]
                == [1, 1, 3, 1, 0])
    }

    @Test func groupUnknownToLedgerAndManifestIsNotTouched() {
        let observed = ObservedState(groups: ["theirs": ObservedGroup(name: "theirs", notificationKey: "k", members: [a])])
        let plan = Planner.plan(desired: DesiredState(project: project), ledger: Ledger(), observed: observed)
        #expect(!plan.hasChanges)
    }
}

@Suite struct ProtectionTests {
    let a = Registration(value: "tok-a:APA91b", kind: .token)

    @Test func protectedGroupDroppedFromTheManifestIsKeptWithAWarning() {
        var ledger = Ledger()
        ledger.recordGroup("family", members: [a])
        ledger.recordProtection(
            from: DesiredState(
                project: ProjectSettings(id: "p", senderId: "1"), groups: ["family": DesiredGroup(name: "family", members: [a], protect: true)]))
        #expect(ledger.groups["family"]?.protect == true)
        let observed = ObservedState(groups: ["family": ObservedGroup(name: "family", notificationKey: "k", members: [a])])
        let plan = Planner.plan(desired: DesiredState(project: ProjectSettings(id: "p", senderId: "1")), ledger: ledger, observed: observed)
        #expect(!plan.hasChanges)
        #expect(plan.findings == [.protectedGroupKept(group: "family")])

        // Unprotected, the same situation deletes the group.
        ledger.groups["family"]?.protect = false
        let unprotected = Planner.plan(desired: DesiredState(project: ProjectSettings(id: "p", senderId: "1")), ledger: ledger, observed: observed)
        #expect(unprotected.groups.map(\.action) == [.delete])
    }
}
