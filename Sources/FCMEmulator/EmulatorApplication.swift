import Foundation
import Hummingbird
import Logging
import NIOCore

package struct EmulatorConfiguration: Sendable {
    package var host = "127.0.0.1"
    package var port = 0
    package var strictRegistrations = false
    package var camelCaseFields = false

    package init() {}
}

/// Dispatches every request itself rather than through Hummingbird's router: FCM paths carry
/// percent-encoded registrations and verbs after colons (`v1:batchAdd`), which must be matched exactly.
struct EmulatorResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let store: EmulatorStore
    let deviceGroups: DeviceGroupRoutes
    let topicSubscriptions: TopicSubscriptionRoutes
    let admin: AdminRoutes

    init(store: EmulatorStore, configuration: EmulatorConfiguration) {
        self.store = store
        deviceGroups = DeviceGroupRoutes(store: store)
        topicSubscriptions = TopicSubscriptionRoutes(store: store, camelCaseFields: configuration.camelCaseFields)
        admin = AdminRoutes(store: store)
    }

    static let maximumBodyBytes = 4 << 20

    func respond(to request: Request, context: Context) async throws -> Response {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
        let buffer = try await request.body.collect(upTo: Self.maximumBodyBytes)
        let incoming = EmulatorRequest(
            method: request.method.rawValue, rawPath: request.uri.path, rawQuery: request.uri.query, headers: headers,
            body: Data(buffer.readableBytesView))
        let answer = await route(incoming)
        if incoming.segments.first != "emulator" {
            await store.record(.init(method: incoming.method, path: incoming.path, status: answer.status))
        }
        return Response(
            status: .init(code: answer.status), headers: [.contentType: answer.contentType],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    func route(_ request: EmulatorRequest) async -> EmulatorResponse {
        if let answer = await admin.handle(request) { return answer }
        if let answer = await deviceGroups.handle(request) { return answer }
        if let answer = await topicSubscriptions.handle(request) { return answer }
        return .rpcError(404, "fcm-emulator does not serve \(request.method) \(request.path)")
    }
}

package enum EmulatorApplication {
    /// Builds the emulator. `onListening` receives the bound port (useful with port 0).
    package static func build(
        configuration: EmulatorConfiguration, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        let store = EmulatorStore(strictRegistrations: configuration.strictRegistrations)
        return Application(
            responder: EmulatorResponder(store: store, configuration: configuration),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "fcm-emulator"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }
}
