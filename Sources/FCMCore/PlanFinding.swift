/// What a plan found but will not act on, as values: the views say it in words (`PlanFinding+Wording`).
package enum PlanFinding: Hashable, Sendable {
    /// A group no longer declared, but protected when last applied: kept.
    case protectedGroupKept(group: String)
    /// A declared group FCM has and the state does not, adopted with `--adopt-existing` without its members.
    case groupAdoptedUnread(group: String, at: SourceLocation?)
    /// A declared group FCM has and the state does not: left alone until imported or adopted.
    case groupNotInState(group: String, at: SourceLocation?)
    /// An observe-only topic that differs from the manifest.
    case observeOnlyDiffers(topic: String, missing: Int, extra: Int, at: SourceLocation?)
    /// A declared registration FCM no longer knows: skipped.
    case registrationGone(topic: String, registration: Registration, device: String?, reason: String, at: SourceLocation?)
    /// A device whose registration the plan replaces: its subscriptions and memberships move to the new one.
    case rotated(device: String, old: Registration, new: Registration)
}
