import ArgumentParser
import FCMCore
import FCMViews

/// `--target` and `--exclude`, repeatable, on plan and apply.
struct TargetOptions: ParsableArguments {
    @Option(
        name: .customLong("target"),
        help: ArgumentHelp(
            "Plan and apply only this object: \(Address.forms) (or device name). Repeatable.", valueName: "address"))
    var targets: [String] = []

    @Option(
        name: .customLong("exclude"),
        help: ArgumentHelp("Leave this object out of the plan (same addresses as --target). Repeatable.", valueName: "address"))
    var excludes: [String] = []

    func validate() throws {
        for text in targets + excludes where Address(text) == nil {
            throw ValidationError("'\(text)' is not an address: use \(Address.forms)")
        }
    }

    var targeting: PlanTargeting {
        PlanTargeting(targets: targets.compactMap(Address.init), excludes: excludes.compactMap(Address.init))
    }

    func warning(_ redactor: Redactor) -> String? { targeting.warning(redactor) }
}

extension PlanTargeting {
    /// The partial-plan warning, as Terraform prints it for -target.
    /// A registration in an address is redacted like every other output.
    func warning(_ redactor: Redactor) -> String? {
        guard isPartial else { return nil }
        let name = { DocumentJSON.redactedText(of: $0, redactor) }
        let what = (targets.map { "--target \(name($0))" } + excludes.map { "--exclude \(name($0))" }).joined(separator: " ")
        return "this plan is partial (\(what)): changes to other objects are neither shown nor applied, "
            + "so FCM may still differ from the manifest. Use this for exceptional situations, then run plan without it"
    }
}

/// `--adopt-existing` on plan and apply.
struct AdoptOptions: ParsableArguments {
    @Flag(help: "Adopt declared device groups that already exist in FCM but not in the state (otherwise they are named and left alone).")
    var adoptExisting = false
}
