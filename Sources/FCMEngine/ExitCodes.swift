/// The documented exit-code contract (product.md, "Exit codes"). Tests check each on the built binary.
package enum ExitCodes {
    package static let success: Int32 = 0
    package static let error: Int32 = 1
    package static let changesPresent: Int32 = 2
    package static let partialFailure: Int32 = 3
    package static let stateLocked: Int32 = 4
    package static let stalePlan: Int32 = 5
    package static let usage: Int32 = 64
}
