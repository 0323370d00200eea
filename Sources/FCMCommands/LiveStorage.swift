import FCMClient
import FCMCore
import FCMEngine
import FCMState

enum LiveStorage {
    /// The JSON API of GCS (or of the emulator STORAGE_EMULATOR_HOST names, without credentials), on its
    /// own libcurl transport with the FCM client's retry policy.
    static func store(
        _ location: GCSLocation, environment: [String: String], clock: any RunClock, warn: @escaping @Sendable (String) -> Void
    ) -> any StateStore {
        // Credentials are resolved before the transport exists, so a run without them starts no worker
        // thread; the transport that is made lives exactly as long as the storage that holds it.
        // FCMCTL_STORAGE_ENDPOINT names another JSON API endpoint (a Private Service Connect one, or a test
        // double) and keeps the credentials; STORAGE_EMULATOR_HOST, as in Google's client libraries, drops them.
        let custom = environment["FCMCTL_STORAGE_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
        let emulator = custom == nil ? GCSObjectStorage.emulatorBase(environment) : nil
        var source: CredentialSource?
        if emulator == nil {
            do {
                source = try CredentialResolver.resolve(environment: environment)
            } catch {
                return UnavailableStateStore(displayName: location.url, reason: "no credentials for the state bucket: \(error)")
            }
        }
        let lifetime: TransportLifetime
        do {
            // Its 8 connections are part of what `DescriptorBudget` reserves beside the FCM connections.
            let connections = try DescriptorBudget.connections(wanted: 8)
            lifetime = TransportLifetime(
                try CurlTransport(
                    options: CurlTransport.Options(maximumConnectionsPerHost: connections, loop: CurlTransport.Loop(environment: environment))))
        } catch {
            return UnavailableStateStore(displayName: location.url, reason: "\(error)")
        }
        var credentials: (any AccessTokenProvider)?
        if let source {
            do {
                credentials = try TokenProviderFactory.make(source, environment: environment, transport: lifetime.transport, clock: clock)
            } catch {
                return UnavailableStateStore(displayName: location.url, reason: "no credentials for the state bucket: \(error)")
            }
        }
        let storage = GCSObjectStorage(
            bucket: location.bucket, base: custom ?? emulator ?? "https://storage.googleapis.com",
            sender: RequestSender(transport: lifetime.transport, credentials: credentials, clock: clock), lifetime: lifetime)
        return GCSStateStore(
            storage: storage, prefix: location.prefix, lease: World.lockLease(environment), identity: .current(), version: FCMCtl.version,
            warn: warn)
    }
}
