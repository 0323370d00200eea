import FCMCore

/// Computes a saved plan's operations again, as `plan` did, from the manifest, the state as read and the
/// plan's observations, and refuses unless they are the saved ones exactly. The observations must cover
/// exactly what the planner would have read, so none can be invented for a registration the manifest and the
/// state do not know.
struct SavedPlanRederivation {
    let application: SavedPlanApplication

    /// Returns the observations, which the live re-read is compared with.
    func rederive(desired: DesiredState, ledger: Ledger) throws -> ObservedState {
        let saved = application.saved
        let plan = application.plan
        guard let mode = RefreshMode(rawValue: saved.options.refresh) else {
            throw SavedPlanApplication.stale("it names an unknown refresh mode '\(saved.options.refresh)'")
        }
        let observed: ObservedState
        do {
            observed = try saved.observations.observedState()
        } catch {
            throw SavedPlanApplication.stale("\(error)")
        }
        let scope = RefreshScope(desired: desired, ledger: ledger, mode: mode)
        let read = Set(observed.registrations.keys).union(observed.unreadable.keys)
        if read != scope.registrations {
            let invented = read.subtracting(scope.registrations).count
            let missing = scope.registrations.subtracting(read).count
            throw SavedPlanApplication.stale(
                "its observations do not cover what the manifest and the state name (\(invented) registration(s) neither names, "
                    + "\(missing) missing)")
        }
        let checked = mode == .all ? nil : scope.groups
        if observed.checkedGroups != checked || !Set(observed.groups.keys).isSubset(of: scope.groups) {
            throw SavedPlanApplication.stale("its observed groups are not the groups the manifest and the state name")
        }
        if saved.declaredGroups != desired.groups.mapValues(\.protect) {
            throw SavedPlanApplication.stale("its declared groups (or their protection) are not the manifest's")
        }
        let aligned = ledger.aligned(with: observed, desired: desired, adoptExisting: saved.options.adoptExisting)
        let derived = application.targeting.apply(
            to: Planner.plan(desired: scope.plannedDesired, ledger: aligned, observed: observed, adoptExisting: saved.options.adoptExisting),
            deviceNames: desired.deviceNames)
        if derived.groups != plan.groups || derived.topics != plan.topics {
            let differing = Self.differences(plan, derived)
            throw SavedPlanApplication.stale(
                "its operations are not the ones its manifest, state and observations give: \(SavedPlanApplication.listed(differing)) "
                    + "differ\(differing.count == 1 ? "s" : "")")
        }
        if saved.fingerprints != PlanFingerprint.facts(of: plan, observed: observed) {
            throw SavedPlanApplication.stale("its fingerprints are not those of its observations")
        }
        return observed
    }

    /// Addresses whose changes differ between two plans; an address listed twice in one counts as differing.
    static func differences(_ one: Plan, _ other: Plan) -> [String] {
        func changes(_ plan: Plan) -> [Address: [AnyHashable]] {
            var byAddress: [Address: [AnyHashable]] = [:]
            for group in plan.groups { byAddress[group.address, default: []].append(group) }
            for topic in plan.topics { byAddress[topic.address, default: []].append(topic) }
            return byAddress
        }
        let (mine, theirs) = (changes(one), changes(other))
        let differing = Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted().map(\.description)
        // Same changes in another order: the order is what differs.
        return differing.isEmpty ? ["the order of the changes"] : differing
    }
}
