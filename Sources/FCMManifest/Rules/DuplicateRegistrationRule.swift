import FCMCore

/// One registration must have one name: two devices with the same registration, or a raw registration
/// written where a device already names it, make reviews lie about which device is which.
enum DuplicateRegistrationRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let devices = context.manifest.devices.sortedByName()
        // One bit per registration the process knows (an eighth of a byte a device, where a dictionary of
        // owners was 24 bytes); owners are looked for only for the few that turn out to be held twice. The same
        // text as a token and as a FID is one registration too, so each is also looked at as the other kind.
        var seen = [UInt64](repeating: 0, count: RegistrationTable.shared.count / 64 + 1)
        func mark(_ registration: Registration) -> Bool {
            let (word, bit) = (Int(registration.ordinal) / 64, UInt64(1) << (registration.ordinal % 64))
            defer { seen[word] |= bit }
            return seen[word] & bit != 0
        }
        func marked(_ registration: Registration) -> Bool {
            Int(registration.ordinal) / 64 < seen.count && seen[Int(registration.ordinal) / 64] & (1 << (registration.ordinal % 64)) != 0
        }
        func twin(_ registration: Registration) -> Registration? { registration.asKind(registration.kind == .token ? .fid : .token) }
        var again: [Int] = []
        for position in 0..<devices.count {
            guard let registration = devices.registration(at: position) else { continue }
            if mark(registration) || twin(registration).map(marked) == true { again.append(position) }
        }
        var owner: [Registration: Int] = [:]
        if !again.isEmpty {
            let wanted = Set(again.compactMap { devices.registration(at: $0) }.flatMap { [$0] + (twin($0).map { [$0] } ?? []) })
            for position in 0..<devices.count {
                guard let registration = devices.registration(at: position), wanted.contains(registration), owner[registration] == nil
                else { continue }
                owner[registration] = position
            }
        }
        for position in again {
            let registration = devices.registration(at: position)!
            let holders = [owner[registration], twin(registration).flatMap { owner[$0] }].compactMap { $0 }.filter { $0 != position }
            guard let first = holders.min() else { continue }
            diagnostics.append(
                .error(
                    "device/\(devices.name(at: position)) has the same registration as device/\(devices.name(at: first)): keep one of them",
                    at: devices.registrationLocation(at: position)))
        }
        for (address, members) in context.manifest.memberLists {
            for case .name(let located) in members where !devices.contains(located.value) {
                let written = [Registration.Kind.token, .fid].compactMap { Registration(existing: located.value, kind: $0) }
                guard written.contains(where: marked) else { continue }
                // Rare (a mistake being reported): the first device holding it is looked for one by one.
                guard let device = (0..<devices.count).first(where: { devices.registration(at: $0).map(written.contains) == true }) else {
                    continue
                }
                diagnostics.append(
                    .error(
                        "\(address): this registration is declared as device/\(devices.name(at: device)); refer to it as '\(devices.name(at: device))'",
                        at: located.location))
            }
        }
        return diagnostics
    }
}
