/// `--refresh=all` reads every group and registration fcmctl knows; `--refresh=changed` only those whose
/// declaration differs from what the last successful apply declared (plus new, removed and pending ones).
package enum RefreshMode: String, CaseIterable, Sendable {
    case all
    case changed
}
