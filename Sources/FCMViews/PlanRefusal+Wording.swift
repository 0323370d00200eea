import FCMCore

extension PlanRefusal {
    /// One sentence: the `error:` line the run ends with, and the banner's entry.
    package func headline(_ redactor: Redactor) -> String {
        switch self {
        case .tooManyRemovals(let removals, let limit, let largest):
            let shown = largest.prefix(5).map { "\($0.address) (−\($0.count))" }.joined(separator: ", ")
            return "the plan removes \(removals) subscriptions and group members, more than --max-removals \(limit): \(shown)"
                + (largest.count > 5 ? " and \(largest.count - 5) more objects" : "")
                + ". Nothing was sent. If this is intended, raise --max-removals"
        case .unknownRegistrations(let unknown):
            let first = unknown.prefix(3).map { Self.who($0, redactor) }.joined(separator: ", ")
            return "\(plural(unknown.count, "registration")) that this plan introduces \(unknown.count == 1 ? "is" : "are") unknown to FCM: "
                + first + (unknown.count > 3 ? " and \(unknown.count - 3) more" : "")
                + ". A registration FCM does not know receives nothing, and applying would take away what it replaces. "
                + "A token cut short or with a character changed in an export looks like this: check the export. Nothing was sent"
        }
    }

    /// One diagnostic per registration at its place in the manifest or device file, for annotations and
    /// documents; the headline alone for a removal limit.
    package func diagnostics(_ redactor: Redactor) -> [Diagnostic] {
        switch self {
        case .tooManyRemovals: return [.error(headline(redactor))]
        case .unknownRegistrations(let unknown):
            return unknown.map { entry in
                var message = "\(Self.who(entry, redactor)) is unknown to FCM (\(entry.reason)) and new to fcmctl"
                if let old = entry.replaces {
                    message += "; it replaces \(redactor(old)), which keeps its subscriptions until this is fixed"
                }
                message += ": check the token or FID in the export (cut short? a character changed?)"
                return .error(message, at: entry.location)
            }
        }
    }

    static func who(_ entry: UnknownRegistration, _ redactor: Redactor) -> String {
        entry.device.map { "device \($0)'s registration \(redactor(entry.registration))" } ?? "registration \(redactor(entry.registration))"
    }
}

extension Plan {
    /// The refusals and their diagnostics: what every view puts first.
    package func refusalDiagnostics(_ redactor: Redactor) -> [Diagnostic] { refusals.flatMap { $0.diagnostics(redactor) } }

    /// "FCM matches the manifest" only when it does: otherwise what is not known or not done, in words.
    package var noChangeLine: String {
        if inSync { return "No changes. FCM matches the manifest." }
        var gaps: [String] = []
        if unreadable > 0 { gaps.append("\(plural(unreadable, "registration")) could not be read") }
        var gone = Set(findings.compactMap { if case .registrationGone(_, let registration, _, _, _) = $0 { registration } else { nil } })
        for case .unknownRegistrations(let unknown) in refusals { gone.formUnion(unknown.map(\.registration)) }
        if !gone.isEmpty { gaps.append("\(plural(gone.count, "declared registration")) \(gone.count == 1 ? "is" : "are") not known to FCM") }
        let observeOnly = findings.filter { if case .observeOnlyDiffers = $0 { true } else { false } }.count
        if observeOnly > 0 { gaps.append("\(plural(observeOnly, "observe-only topic")) differ\(observeOnly == 1 ? "s" : "")") }
        let unmanaged = findings.filter { if case .groupNotInState = $0 { true } else { false } }.count
        if unmanaged > 0 { gaps.append("\(plural(unmanaged, "declared group")) in FCM \(unmanaged == 1 ? "is" : "are") not in the state") }
        return "No changes planned, but FCM does not match the manifest: \(gaps.joined(separator: "; "))."
    }
}
