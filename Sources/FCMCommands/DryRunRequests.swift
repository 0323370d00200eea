import FCMCore
import FCMEngine
import FCMReconcile
import FCMViews

/// `apply --dry-run`: the exact requests apply would send, in its order, redacted unless `--show-tokens`.
struct DryRunRequests {
    let redactor: Redactor

    func print(_ computed: ComputedPlan, service: any FCMService) {
        let console = Console.current
        guard computed.plan.hasChanges else { return }
        let preview = RequestPreviewText(redactor: redactor)
        console.out("")
        console.out("Dry run: apply would send these requests, in this order (nothing was sent):")
        for change in computed.plan.groups {
            let key = computed.observed.groups[change.name].map { redactor.redact($0.notificationKey) }
            for step in change.steps {
                for request in service.preview(step, name: change.name, key: key) { console.out("  \(preview.line(request))") }
            }
        }
        // The order apply uses: every addition, then the removals.
        let size = service.topicBatchSize
        for action in [SubscriptionChange.Action.subscribe, .unsubscribe] {
            for batch in Applier.batches(computed.plan.topics, action, size: size) {
                for request in service.previewBatch(topic: batch.topic, action: batch.action, Array(batch.registrations)) {
                    console.out("  \(preview.line(request))")
                }
            }
        }
    }
}
