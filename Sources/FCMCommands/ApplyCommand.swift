import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

struct ApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply", abstract: "Make FCM match the manifests. Safe to re-run.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions

    @Flag(help: "Do not ask for confirmation.")
    var autoApprove = false

    @Flag(help: "Print the exact requests apply would send, and send none of them.")
    var dryRun = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Stop sending after this long (e.g. 45m, 2h; 0: no limit), write the state and exit 3; re-running continues. Default: 30m.",
            valueName: "duration"),
        transform: LockTimeout.parse)
    var timeout: LockTimeout = LockTimeout(duration: .seconds(30 * 60))

    @OptionGroup var locking: LockOptions
    @OptionGroup var rails: RemovalRails
    @OptionGroup var output: OutputOptions
    @OptionGroup var progressOptions: ProgressOptions
    @OptionGroup var target: TargetOptions
    @OptionGroup var adopt: AdoptOptions

    @Argument(help: "A plan saved by `plan -out FILE`: apply exactly its operations, or exit 5 if what it was made from has changed.")
    var planFile: String?

    @Option(
        help: ArgumentHelp(
            "Apply the saved plan only if its digest is this one (`sha256:…`, as `plan -out` printed it): the merge job runs only the approved plan.",
            valueName: "digest"))
    var expectDigest: String?

    func validate() throws {
        if expectDigest != nil && planFile == nil { throw ValidationError("--expect-digest checks a saved plan: pass its FILE too") }
        if planFile != nil && dryRun { throw ValidationError("--dry-run applies to a fresh plan; use `fcmctl show FILE` to read a saved one") }
        if planFile != nil && target.targeting.isPartial {
            throw ValidationError("--target and --exclude shape a fresh plan; a saved plan already holds exactly what it will do")
        }
        if dryRun && output.format != .text {
            throw ValidationError(
                "--dry-run prints requests as text; for a machine-readable plan use `fcmctl plan --format \(output.format.rawValue)`")
        }
    }

    func run() async throws {
        try await ErrorDocument.guarding("apply", output: output, showTokens: run.showTokens) {
            try await progressOptions.running("apply", format: output.format) { try await run(progress: $0) }
        }
    }

    func run(progress: RunProgress) async throws {
        if let planFile { return try await applyRun.applySaved(planFile, expectDigest: expectDigest, progress: progress) }
        try await applyRun.apply(progress: progress)
    }

    var applyRun: ApplyRun {
        ApplyRun(
            manifest: manifest, state: state, run: run, output: output, lock: locking.lock, lockTimeout: locking.lockTimeout.duration,
            maxRemovals: rails.maxRemovals, targeting: target.targeting, adoptExisting: adopt.adoptExisting, autoApprove: autoApprove, dryRun: dryRun,
            timeout: timeout)
    }
}
