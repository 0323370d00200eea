import FCMCore

extension ProjectBinding: CustomStringConvertible {
    /// `acme-prod (sender 222)`, for messages.
    package var description: String {
        switch (id.isEmpty, senderId.isEmpty) {
        case (false, false): "\(id) (sender \(senderId))"
        case (false, true): id
        case (true, false): "sender \(senderId)"
        case (true, true): "no project"
        }
    }
}
