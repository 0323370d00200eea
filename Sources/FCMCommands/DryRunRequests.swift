import FCMCore
import FCMEngine
import FCMReconcile
import FCMViews

/// `apply --dry-run`: the exact requests apply would send, in its order, redacted unless `--show-tokens`.
struct DryRunRequests {
    let console: Console
    let redactor: Redactor

    func print(_ computed: ComputedPlan, service: any FCMService) {
        guard computed.plan.hasChanges else { return }
        let text = RequestPreviewText(redactor: redactor)
        console.out("")
        console.out("Dry run: apply would send these requests, in this order (nothing was sent):")
        for request in Applier.order(of: computed.plan, batchSize: service.topicBatchSize).requests {
            let previews =
                switch request {
                case .groupStep(let change, let step):
                    service.preview(step, name: change.name, key: computed.observed.groups[change.name].map { redactor.redact($0.notificationKey) })
                case .batch(let batch):
                    service.previewBatch(topic: batch.topic, action: batch.action, Array(batch.registrations))
                }
            for preview in previews { console.out("  \(text.line(preview))") }
        }
    }
}
