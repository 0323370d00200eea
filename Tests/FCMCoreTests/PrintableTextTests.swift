import Testing

@testable import FCMCore

@Suite struct PrintableTextTests {
    /// The ASCII shortcut must agree with Unicode's general category on every ASCII scalar, or a control
    /// character in a device name would slip through to a runner's log.
    @Test func asciiShortcutAgreesWithTheGeneralCategory() {
        for value in UInt32(0)..<0x80 {
            let scalar = Unicode.Scalar(value)!
            #expect(PrintableText.isControl(scalar) == (scalar.properties.generalCategory == .control), "U+\(value)")
        }
    }

    @Test(arguments: [0x85, 0x9B, 0x2028, 0x2029, 0x202E, 0x2066] as [UInt32])
    func controlsBeyondASCIIAreStillFound(value: UInt32) {
        #expect(PrintableText.isControl(Unicode.Scalar(value)!))
    }

    @Test func printableTextIsNotControl() {
        #expect(!"kiosk-0001 é ß 東京".unicodeScalars.contains(where: PrintableText.isControl))
    }
}
