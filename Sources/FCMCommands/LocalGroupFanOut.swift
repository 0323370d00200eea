import ArgumentParser
import FCMClient
import FCMCore
import FCMEngine
import FCMViews

/// `send --group NAME` to a local group: the engine's fan-out, each member's outcome reported (sent,
/// unregistered, failed) and summed up. Unregistered members are drift: the manifest should drop them.
struct LocalGroupFanOut {
    let service: FCMHTTPService
    let parallelism: Int
    let redactor: Redactor

    func send(_ message: OutgoingMessage, to group: DesiredGroup, names: [Registration: String], validateOnly: Bool) async throws {
        let console = Console.current
        let outcomes = try await MessageFanOut(service: service, parallelism: parallelism, clock: World.current.clock)
            .send(message, to: group.members.sorted(), validateOnly: validateOnly)
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: names)
        let verb = validateOnly ? "validated" : "sent"
        var (sent, gone, failed) = (0, 0, 0)
        for outcome in outcomes {
            switch outcome.status {
            case .sent:
                sent += 1
                console.out("  \(verb)        \(labeler.label(outcome.registration))")
            case .unregistered(let code):
                gone += 1
                console.out("  unregistered  \(labeler.label(outcome.registration)) (\(code)): remove it from the manifest")
            case .failed(let detail):
                failed += 1
                console.out("  failed        \(labeler.label(outcome.registration)): \(SourceExcerptRedaction.redact(detail, redactor))")
            }
        }
        console.out(
            "\(validateOnly ? "Dry run (validate only) to" : "Fan-out to") local \(Address.group(group.name)): \(plural(outcomes.count, "member")), "
                + "\(sent) \(verb), \(gone) unregistered, \(failed) failed.")
        if gone > 0 {
            console.say(
                .warning(
                    "\(plural(gone, "member")) of \(Address.group(group.name)) no longer registered: drift; remove them from the manifest",
                    about: .group(group.name)))
        }
        if failed > 0 { throw ExitCode(ExitCodes.partialFailure) }
    }
}
