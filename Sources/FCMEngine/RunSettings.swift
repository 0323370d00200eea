import FCMCore

/// What a person chose for this run, as values: the command line's shared options, without the parser.
package struct RunSettings: Sendable {
    package var showTokens = false
    package var parallelism = 512
    package var qps: Double = 2500
    package var endpoint: String?
    package var groupExportURL: String?
    package var verbose = false
    package var allowEmpty = false
    package var skipUnreadable = false
    /// `--adopt-existing`: declared groups that exist in FCM but not in the state become fcmctl's.
    package var adoptExisting = false
    /// `--target` / `--exclude`: the plan is cut down to these.
    package var targeting = PlanTargeting()

    package init() {}
}
