/// The manifest's fixed keys in schema order: the decoder accepts exactly these, `fmt` writes them in
/// this order, and `schemas/manifest.schema.json` lists the same (a test keeps them in step).
package enum ManifestSchema {
    package static let apiVersion = "fcmctl/v1"
    package static let topLevel = ["apiVersion", "include", "project", "state", "defaults", "devices", "deviceFiles", "groups", "topics"]
    package static let project = ["id", "senderId", "topicApi"]
    package static let state = ["backend", "path", "bucket", "prefix"]
    package static let defaults = ["ownership", "protect", "groupMode"]
    package static let device = ["token", "fid", "labels"]
    package static let group = ["mode", "protect", "members"]
    package static let topic = ["ownership", "protect", "allowEmpty", "members"]
    package static let topicMembers = ["selector", "include", "exclude"]
    package static let explicitMember = ["token", "fid"]
    package static let stateBackends = ["local", "gcs"]
}
