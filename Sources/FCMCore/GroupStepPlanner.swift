/// Orders the requests that turn one device group's membership into another.
///
/// FCM deletes a group whose last member is removed and refuses more than 20 members, so a naive
/// "remove all, then add all" would destroy the group (and every key users hold for it) when replacing all
/// members. Adding first while there is room, then removing only as much as keeps one member, keeps the
/// group alive and within bounds at every step.
package enum GroupStepPlanner {
    package static let memberLimit = 20

    package static func steps(
        from current: Set<Registration>, to desired: Set<Registration>, limit: Int = memberLimit
    ) -> [GroupStep] {
        precondition(limit >= 2, "a limit below 2 leaves no room to swap members")
        if desired.isEmpty {
            return current.isEmpty ? [] : [.remove(current.sorted())]
        }
        if current.isEmpty {
            return [.create(desired.sorted())]
        }
        var pendingAdds = desired.subtracting(current).sorted()[...]
        var pendingRemoves = current.subtracting(desired).sorted()[...]
        var size = current.count
        var steps: [GroupStep] = []
        while !pendingAdds.isEmpty || !pendingRemoves.isEmpty {
            let room = limit - size
            if room > 0, !pendingAdds.isEmpty {
                let batch = pendingAdds.prefix(room)
                pendingAdds.removeFirst(batch.count)
                size += batch.count
                steps.append(.add(Array(batch)))
                continue
            }
            // Only removes left, or the group is full: remove as many as possible while keeping one member.
            let removable = pendingAdds.isEmpty ? pendingRemoves.count : min(pendingRemoves.count, size - 1)
            let batch = pendingRemoves.prefix(max(removable, 1))
            pendingRemoves.removeFirst(batch.count)
            size -= batch.count
            steps.append(.remove(Array(batch)))
        }
        return steps
    }
}
