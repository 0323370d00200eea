import FCMClient
import FCMCore
import FCMReconcile

/// How one member of a local group answered a fan-out.
package struct FanOutOutcome: Sendable {
    package enum Status: Sendable, Equatable {
        /// FCM's name for the message.
        case sent(String)
        /// The registration is gone (FCM's error code): drift, the manifest should drop it.
        case unregistered(String)
        case failed(String)
    }

    package var registration: Registration
    package var status: Status
}

/// How every member of one local group answered a fan-out.
package struct FanOutReport: Sendable {
    package var group: String
    package var validateOnly: Bool
    /// In the members' order.
    package var outcomes: [FanOutOutcome]

    package var sent: Int { outcomes.count { if case .sent = $0.status { true } else { false } } }
    package var unregistered: Int { outcomes.count { if case .unregistered = $0.status { true } else { false } } }
    package var failed: Int { outcomes.count { if case .failed = $0.status { true } else { false } } }
}

/// What sends one message (`messages:send`) and returns FCM's name for it: the libcurl client, or a fake.
package protocol MessageSender: Sendable {
    func send(_ message: OutgoingMessage, validateOnly: Bool) async throws -> String
}

extension FCMHTTPService: MessageSender {}

/// The send use case for a local group: one `messages:send` per member, concurrently, paced below FCM's
/// 600,000 messages per minute per project.
package struct MessageFanOut {
    /// 600,000 per minute is 10,000 per second; a tenth is left to the project's other senders.
    package static let messagesPerSecond = 9_000.0

    package let service: any MessageSender
    package let parallelism: Int
    package let clock: any RunClock

    package init(service: any MessageSender, parallelism: Int, clock: any RunClock) {
        self.service = service
        self.parallelism = parallelism
        self.clock = clock
    }

    /// The outcome of every member of `group`, sorted.
    package func send(_ message: OutgoingMessage, to group: DesiredGroup, validateOnly: Bool) async throws -> FanOutReport {
        FanOutReport(
            group: group.name, validateOnly: validateOnly, outcomes: try await send(message, to: group.members.sorted(), validateOnly: validateOnly))
    }

    /// Each member's outcome, in the members' order.
    package func send(_ message: OutgoingMessage, to members: [Registration], validateOnly: Bool) async throws -> [FanOutOutcome] {
        let limiter = RateLimiter(perSecond: Self.messagesPerSecond, clock: clock)
        let service = self.service
        return try await BoundedConcurrency.map(members, limit: ConcurrencyLimit(maximum: parallelism)) { registration in
            var one = message
            one.target = registration.kind == .fid ? .fid(registration.value) : .token(registration.value)
            try await limiter.acquire(1)
            do {
                return FanOutOutcome(registration: registration, status: .sent(try await service.send(one, validateOnly: validateOnly)))
            } catch let error as FCMServiceError where ["UNREGISTERED", "NOT_FOUND"].contains(error.code) {
                return FanOutOutcome(registration: registration, status: .unregistered(error.code))
            } catch let error as FCMServiceError {
                return FanOutOutcome(registration: registration, status: .failed("\(error.code) \(error.message)"))
            } catch {
                return FanOutOutcome(registration: registration, status: .failed("\(error)"))
            }
        }
    }
}
