import FCMCore

package enum DriftAnalyzer {
    /// `ledger` is the state as read, before FCM's answers were folded in: a record of a subscription that
    /// vanished is exactly what "removed out of band" means.
    package static func analyze(desired: DesiredState, ledger: Ledger, observed: ObservedState) -> DriftReport {
        var report = DriftReport()
        func add(_ category: DriftReport.Category, _ address: Address, _ action: ChangeAction, _ registrations: [Registration], _ detail: String) {
            guard !registrations.isEmpty || category == .groupsChanged || category == .undeclaredRecords else { return }
            report.findings.append(.init(category: category, address: address, action: action, registrations: registrations, detail: detail))
        }
        for topic in desired.topics.values.sorted(by: { $0.name < $1.name }) {
            let address = Address.topic(topic.name)
            let recorded = ledger.managedSubscribers(of: topic.name)
            var missingManaged: [Registration] = []
            var missing: [Registration] = []
            var dead: [Registration] = []
            for member in topic.members.sorted() {
                if observed.isUnreadable(member) { continue }
                if observed.isGone(member) {
                    dead.append(member)
                } else if observed.registrations[member] != nil, !observed.isSubscribed(member, to: topic.name) {
                    if recorded.contains(member) { missingManaged.append(member) } else { missing.append(member) }
                }
            }
            add(.deadRegistrations, address, .none, dead, "\(dead.count) declared registration(s) FCM no longer knows")
            let extra: [Registration]
            switch topic.ownership {
            case .authoritative:
                extra = observed.registrations.keys.filter { !topic.members.contains($0) && observed.isSubscribed($0, to: topic.name) }.sorted()
            case .additive, .observe:
                extra = recorded.subtracting(topic.members).filter { observed.isSubscribed($0, to: topic.name) }.sorted()
            }
            if topic.ownership == .observe {
                let differing = missing + missingManaged + extra
                add(
                    .observeDiffers, address, .none, differing,
                    "\(missing.count + missingManaged.count) declared subscription(s) missing, \(extra.count) undeclared")
                continue
            }
            add(.declaredMissing, address, .update, missing, "\(missing.count) declared subscription(s) missing")
            add(.managedRemoved, address, .update, missingManaged, "\(missingManaged.count) subscription(s) fcmctl created are gone")
            if topic.ownership == .authoritative {
                add(.undeclaredSubscriptions, address, .update, extra, "\(extra.count) undeclared subscription(s) held by known registrations")
            }
        }
        for group in desired.localGroups.values.sorted(by: { $0.name < $1.name }) {
            let dead = group.members.filter { observed.isGone($0) }.sorted()
            add(.deadRegistrations, .group(group.name), .none, dead, "\(dead.count) member(s) of the local group FCM no longer knows")
        }
        for (name, members) in ledger.topics.sorted(by: { $0.key < $1.key }) where desired.topics[name] == nil {
            add(
                .undeclaredRecords, .topic(name), .update, members.sorted(),
                "fcmctl recorded \(members.count) subscription(s) of an undeclared topic")
        }
        report.notReadFromFCM = observed.groupsWithRecordedMembers.map { name in
            DriftReport.MembersFromState(group: name, recorded: ledger.groups[name]?.members.count ?? 0)
        }
        for name in Set(desired.groups.keys).union(ledger.groups.keys).sorted() {
            let address = Address.group(name)
            guard observed.wasChecked(group: name) else { continue }
            let live = observed.groups[name]
            guard let declared = desired.groups[name] else {
                if ledger.groups[name]?.protect != true {
                    add(
                        .undeclaredRecords, address, live == nil ? .none : .delete, [],
                        live == nil ? "recorded, no longer declared, and already gone from FCM" : "recorded and no longer declared")
                }
                continue
            }
            guard let live else {
                let why = ledger.groups[name] != nil ? "deleted outside fcmctl" : "declared, but FCM has no such group (not applied yet?)"
                add(.groupsChanged, address, .create, declared.members.sorted(), why)
                continue
            }
            let added = declared.members.subtracting(live.members)
            let removed = live.members.subtracting(declared.members)
            if !added.isEmpty || !removed.isEmpty {
                add(
                    .groupsChanged, address, .update, (added.union(removed)).sorted(),
                    "\(added.count) declared member(s) missing, \(removed.count) undeclared")
            }
        }
        return report
    }
}
