/// The emulator's one `Duration` to seconds conversion (it does not depend on FCMCore, which has fcmctl's).
extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
