import FCMClient
import FCMViews
import Foundation
import Testing

@testable import FCMEmulator

/// `fcmctl send` against the emulator: targets, images on every platform, dry runs, refusals.
@Suite struct SendTests {
    func inbox(_ emulator: any EmulatorHandle, _ registration: String) async throws -> [[String: Any]] {
        try await emulator.admin("GET", "/emulator/v1/registrations/\(registration)/inbox").1["messages"] as? [[String: Any]] ?? []
    }

    @Test func imageMessageToADeviceNameReachesItWithEveryPlatformsImage() async throws {
        let emulator = try await InProcessEmulator()
        let fleet = ManifestCommandTests.example("kiosk-fleet")
        let image = "https://example.com/sparky.png"
        let result = await CLI.run(
            ["send", "-f", fleet, "--token", "kiosk-lon-001", "--title", "Hello", "--image", image, "--data", "kind=demo"], emulator: emulator)
        #expect(result.code == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Sent to device kiosk-lon-001: projects/acme-signage/messages/"))
        let message = try #require(try await inbox(emulator, "eLx8Q2mVn0c:APA91bF1hGk7sQpZ3wYt9uRcXvBnM4aLdE2").first?["message"] as? [String: Any])
        #expect((message["notification"] as? [String: Any])?["image"] as? String == image)
        #expect(((message["android"] as? [String: Any])?["notification"] as? [String: Any])?["image"] as? String == image)
        #expect(((message["apns"] as? [String: Any])?["fcm_options"] as? [String: Any])?["image"] as? String == image)
        #expect(((message["webpush"] as? [String: Any])?["headers"] as? [String: Any])?["image"] as? String == image)
        #expect((message["data"] as? [String: String]) == ["kind": "demo"])
    }

    @Test func topicConditionAndGroupTargets() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let quickstart = PlanApplyTests.quickstart
        #expect(await CLI.run(["apply", "--auto-approve", "-f", quickstart, "--state", workspace.statePath], emulator: emulator).code == 0)
        let kiosk = "kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug"
        let phone = "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"
        #expect(await CLI.run(["send", "-f", quickstart, "--topic", "industry-tech", "--body", "t"], emulator: emulator).code == 0)
        var kioskInbox = try await inbox(emulator, kiosk)
        var phoneInbox = try await inbox(emulator, phone)
        #expect(kioskInbox.count == 1 && phoneInbox.isEmpty)
        #expect(
            await CLI.run(
                ["send", "-f", quickstart, "--condition", "'weather-nyc' in topics && !('industry-tech' in topics)", "--body", "c"],
                emulator: emulator
            ).code == 0)
        kioskInbox = try await inbox(emulator, kiosk)
        phoneInbox = try await inbox(emulator, phone)
        #expect(phoneInbox.count == 1 && kioskInbox.count == 1)
        let group = await CLI.run(["send", "-f", quickstart, "--group", "appUser-Chris", "--body", "g"], emulator: emulator)
        #expect(group.code == 0, "\(group.stderr)")
        #expect(try await inbox(emulator, phone).count == 2)
        #expect(try await inbox(emulator, "cR1rjyj4_KcAPA91bGusQ2").count == 1)
    }

    @Test func dryRunValidatesOnlyAndRefusalsAreExplained() async throws {
        let emulator = try await InProcessEmulator()
        let dry = await CLI.run(["send", "--project", "p", "--token", "a:APA91b", "--body", "x", "--dry-run"], emulator: emulator)
        #expect(dry.code == 0)
        #expect(dry.stdout == "Validated a message to a token (dry run: nothing was delivered): projects/p/messages/fake_message_id\n")
        #expect(try await emulator.admin("GET", "/emulator/v1/registrations/a:APA91b/inbox").0 == 404, "nothing delivered, nothing recorded")

        _ = try await emulator.admin("POST", "/emulator/v1/registrations", json: #"{"registrations":[{"token":"gone:APA91b"}]}"#)
        _ = try await emulator.admin("DELETE", "/emulator/v1/registrations/gone:APA91b")
        let refused = await CLI.run(["send", "--project", "p", "--token", "gone:APA91b", "--body", "x"], emulator: emulator)
        #expect(refused.code == 1)
        #expect(refused.stderr.contains("FCM refused the message to a token: UNREGISTERED"))
        #expect(refused.stderr.contains("app uninstalled or token expired"))

        let bad = await CLI.run(["send", "--project", "p", "--topic", "a", "--token", "b"], emulator: emulator)
        #expect(bad.code == 64)
    }

    /// Every request body `fcmctl send` can put on the wire (each target, a device group's key and a local
    /// group's members included; with and without texts, image and data; dry run or not) is one that Google's
    /// contract, as the emulator checks it, accepts.
    @Test func everyBodyFcmctlSendProducesPassesTheContract() {
        let targets: [OutgoingMessage.Target] = [
            .token("fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"), .fid("cR1rjyj4_KcAPA91bGusQ2"), .topic("industry-tech"),
            .condition("'weather-nyc' in topics && !('industry-tech' in topics)"), .token(NotificationKeyCodec.encode(groupID: 3)),
        ]
        let datas: [[String: String]] = [[:], ["kind": "demo"], ["empty": "", "pair": "a=b", "ünï": "çødé 😀"]]
        var checked = 0
        for target in targets {
            for (title, body) in [(nil, nil), ("Hello", nil), (nil, "Body"), ("", "Body with \"quotes\" and \\ / slashes")] {
                for image in [nil, "https://example.com/sparky.png", "http://example.com/a%20b.png?x=1"] {
                    for data in datas {
                        let message = OutgoingMessage(target: target, title: title, body: body, image: image, data: data)
                        for validateOnly in [false, true] {
                            let violations = SendContract.violations(of: message.requestBody(validateOnly: validateOnly))
                            #expect(violations == [], "\(message.json)")
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 360)
    }

    @Test func anImageURLWithoutAHostIsRefusedBeforeSending() async throws {
        let emulator = try await InProcessEmulator()
        let result = await CLI.run(["send", "--project", "p", "--topic", "a", "--image", "https:example.png"], emulator: emulator)
        #expect(result.code == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--image must be an http(s) URL"))
    }
}
