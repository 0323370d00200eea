import ArgumentParser
import FCMClient
import FCMCore
import FCMEngine
import FCMReconcile
import FCMViews
import Foundation

/// `send --group NAME` to a local group: one `messages:send` per member, concurrently, paced below FCM's
/// 600,000 messages per minute per project, each member's outcome reported (sent, unregistered, failed)
/// and summed up. Unregistered members are drift: the manifest should drop them.
struct LocalGroupFanOut {
    /// 600,000 per minute is 10,000 per second; a tenth is left to the project's other senders.
    static let messagesPerSecond = 9_000.0

    let service: FCMHTTPService
    let parallelism: Int
    let redactor: Redactor

    struct Outcome: Sendable {
        var registration: Registration
        /// sent, unregistered or failed
        var status: String
        var detail: String
    }

    func send(_ message: OutgoingMessage, to group: DesiredGroup, names: [Registration: String], validateOnly: Bool) async throws {
        let console = Console.current
        let limiter = RateLimiter(perSecond: Self.messagesPerSecond, clock: SystemClock())
        let service = self.service
        let outcomes = try await BoundedConcurrency.map(group.members.sorted(), limit: ConcurrencyLimit(maximum: parallelism)) { registration in
            var one = message
            one.target = registration.kind == .fid ? .fid(registration.value) : .token(registration.value)
            try await limiter.acquire(1)
            do {
                let name = try await service.send(one, validateOnly: validateOnly)
                return Outcome(registration: registration, status: "sent", detail: name)
            } catch let error as FCMServiceError where ["UNREGISTERED", "NOT_FOUND"].contains(error.code) {
                return Outcome(registration: registration, status: "unregistered", detail: error.code)
            } catch let error as FCMServiceError {
                return Outcome(registration: registration, status: "failed", detail: "\(error.code) \(error.message)")
            } catch {
                return Outcome(registration: registration, status: "failed", detail: "\(error)")
            }
        }
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: names)
        let verb = validateOnly ? "validated" : "sent"
        for outcome in outcomes {
            switch outcome.status {
            case "sent": console.out("  \(verb)        \(labeler.label(outcome.registration))")
            case "unregistered":
                console.out("  unregistered  \(labeler.label(outcome.registration)) (\(outcome.detail)): remove it from the manifest")
            default: console.out("  failed        \(labeler.label(outcome.registration)): \(SourceExcerptRedaction.redact(outcome.detail, redactor))")
            }
        }
        let sent = outcomes.filter { $0.status == "sent" }.count
        let gone = outcomes.filter { $0.status == "unregistered" }.count
        let failed = outcomes.count - sent - gone
        console.out(
            "\(validateOnly ? "Dry run (validate only) to" : "Fan-out to") local \(Address.group(group.name)): \(plural(outcomes.count, "member")), "
                + "\(sent) \(verb), \(gone) unregistered, \(failed) failed.")
        if gone > 0 {
            console.err(
                "warning: \(plural(gone, "member")) of \(Address.group(group.name)) no longer registered: drift; remove them from the manifest")
        }
        if failed > 0 { throw ExitCode(ExitCodes.partialFailure) }
    }
}
