import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

/// A plan refused after it was computed (`--max-removals`, a registration it introduces that FCM does not
/// know) is shown whole first; this says why on stderr and gives the exit to end with.
enum RefusedPlan {
    static func ending(_ plan: Plan, showTokens: Bool) -> ExitCode? {
        guard !plan.refusals.isEmpty else { return nil }
        let redactor = Redactor(showTokens: showTokens)
        let console = Console.current
        for diagnostic in plan.refusalDiagnostics(redactor) where diagnostic.location != nil { console.say(Notice(diagnostic)) }
        for refusal in plan.refusals { console.say(.error(refusal.headline(redactor))) }
        return ExitCode(ExitCodes.error)
    }
}
