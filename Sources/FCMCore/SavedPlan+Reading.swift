extension SavedPlan {
    /// The plan again, to run or to show. Throws on a value no fcmctl writes.
    package func plan() throws -> Plan {
        var plan = Plan()
        for group in groups {
            // A group's change always does something: `none` is a drift finding's action, never a plan's.
            guard let action = group.action.value, action != .none else {
                throw SavedPlanProblem.unknownAction(group: group.name, word: group.action.text)
            }
            let steps = try group.steps.map { step -> GroupStep in
                guard let operation = step.operation.value, let parsed = GroupStep(operation, step.registrations.map(\.registration)) else {
                    throw SavedPlanProblem.unknownStep(group: group.name, word: step.operation.text)
                }
                return parsed
            }
            plan.groups.append(
                GroupChange(
                    name: group.name, action: action, steps: steps, added: group.added.map(\.registration),
                    removed: group.removed.map(\.registration),
                    unchanged: group.unchanged))
        }
        for topic in topics {
            guard let ownership = topic.ownership.value else {
                throw SavedPlanProblem.unknownOwnership(topic: topic.name, word: topic.ownership.text)
            }
            plan.topics.append(
                TopicChange(
                    name: topic.name, ownership: ownership, added: topic.added.map(\.registration), removed: topic.removed.map(\.registration),
                    unchanged: topic.unchanged))
        }
        return plan
    }

    /// Device names by registration, for the views.
    package var registrationNames: [Registration: String] {
        var names: [Registration: String] = [:]
        for (value, name) in deviceNames {
            names[Registration(value: value, kind: .token)] = name
            names[Registration(value: value, kind: .fid)] = name
        }
        return names
    }

    package var projectSettings: ProjectSettings {
        ProjectSettings(id: project.id, senderId: project.senderId, topicAPI: TopicAPI(rawValue: project.topicApi) ?? .v1)
    }

    /// The declared groups, as much of the desired state as applying the plan needs.
    package var desiredForApply: DesiredState {
        var desired = DesiredState(project: projectSettings)
        for (name, protect) in declaredGroups { desired.groups[name] = DesiredGroup(name: name, members: [], protect: protect) }
        return desired
    }
}

extension SavedPlan.Options {
    /// Throws on an address no fcmctl writes.
    package func targeting() throws -> PlanTargeting {
        func parse(_ text: String) throws -> Address {
            guard let address = Address(text) else { throw SavedPlanProblem.invalidTarget(text) }
            return address
        }
        return PlanTargeting(targets: try targets.map(parse), excludes: try excludes.map(parse))
    }
}
