import FCMClient
import FCMCore

/// Who a test message goes to, as the person named it.
package enum MessageRecipient: Sendable {
    /// A registration token, or a device name from the manifest.
    case token(String)
    /// A Firebase Installation ID, or a device name from the manifest.
    case fid(String)
    case topic(String)
    case condition(String)
    /// An FCM device group, messaged through its notification key.
    case fcmGroup(String)
}

/// Where a message went, resolved, without the registration itself: what the sender is told.
package enum MessageDestination: Sendable, Hashable {
    /// A device the manifest names.
    case device(name: String)
    /// A registration token given as it is.
    case token
    /// A Firebase Installation ID given as it is.
    case fid
    /// A topic, or an FCM device group messaged through its notification key.
    case object(Address)
    case condition(String)
}

/// FCM refused a message: where it was going, and FCM's answer.
package struct MessageRefused: Error {
    package var destination: MessageDestination
    package var error: FCMServiceError
}

/// The send use case for one message: the recipient resolved (device names, a group's key read fresh), the
/// message sent or validated, FCM's name for it returned.
package struct MessageSend {
    package let session: Session
    package let service: FCMHTTPService
    /// Device names of the manifest, to their registrations.
    package let devices: [String: Registration]

    package init(session: Session, service: FCMHTTPService, devices: [String: Registration]) {
        self.session = session
        self.service = service
        self.devices = devices
    }

    /// Returns where it went and FCM's name for the message.
    package func send(_ message: OutgoingMessage, to recipient: MessageRecipient, validateOnly: Bool) async throws -> (
        destination: MessageDestination, name: String
    ) {
        let (target, destination) = try await resolve(recipient)
        var message = message
        message.target = target
        do {
            return (destination, try await service.send(message, validateOnly: validateOnly))
        } catch let error as FCMServiceError {
            throw MessageRefused(destination: destination, error: error)
        }
    }

    func resolve(_ recipient: MessageRecipient) async throws -> (OutgoingMessage.Target, MessageDestination) {
        switch recipient {
        case .token(let token):
            return (.token(devices[token]?.value ?? token), devices[token] != nil ? .device(name: token) : .token)
        case .fid(let fid):
            return (.fid(devices[fid]?.value ?? fid), devices[fid] != nil ? .device(name: fid) : .fid)
        case .topic(let topic):
            return (.topic(topic), .object(.topic(topic)))
        case .condition(let condition):
            return (.condition(condition), .condition(condition))
        case .fcmGroup(let name):
            if PlatformDeprecations.refusal(usesGroups: true, usesIID: false, now: session.world.now()) != nil {
                throw EngineFailure(
                    "\(Address.group(name)) is an FCM device group, and FCM removed device groups on 2027-09-29. Declare it with `mode: local` "
                        + "(fcmctl migrate groups) so fcmctl sends to its members")
            }
            guard !service.project.senderId.isEmpty else {
                throw EngineFailure("--group needs the sender id: pass --sender-id or -f with a manifest")
            }
            // A group is messaged through its notification key, read fresh: keys change on every read.
            guard let key = try await service.groupKey(name: name) else { throw EngineFailure("\(Address.group(name)) does not exist in FCM") }
            return (.token(key), .object(.group(name)))
        }
    }
}
