import _CryptoExtras
import FoodServer
import Foundation
import Hummingbird
import ImageCodecs
import JWTKit
import Logging
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Apple's side, on loopback: an RSA key that signs identity tokens and a JWKS endpoint that publishes its public half
/// (and counts how often it is fetched). `rotate()` replaces the key, as Apple does.
final class FakeApple: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [(kid: String, key: JWTKit.Insecure.RSA.PrivateKey)] = []
    private(set) var fetches = 0
    private var task: Task<Void, any Error>?
    var url: URL!
    static let bundleID = "com.foodmoment.app"

    init() async throws {
        try rotate()
        let router = Router()
        router.get("auth/keys") { _, _ -> Response in
            let body = self.lock.withLock { () -> [UInt8] in
                self.fetches += 1
                return Array(self.jwks().utf8)
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let (task, port) = await serveOnLoopback(router, label: "fake-apple")
        self.task = task
        url = URL(string: "http://127.0.0.1:\(port)/auth/keys")!
    }

    func stop() async {
        task?.cancel()
        _ = await task?.result
    }

    /// A new signing key; the old one is no longer published.
    func rotate() throws {
        let key = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        lock.withLock { keys = [("key-\(UUID().uuidString.prefix(8))", key)] }
    }

    var current: (kid: String, key: JWTKit.Insecure.RSA.PrivateKey) { lock.withLock { keys[0] } }

    private func jwks() -> String {
        let entries = keys.map { kid, key -> String in
            let (n, e) = try! key.publicKey.getKeyPrimitives()
            return #"{"kty": "RSA", "kid": "\#(kid)", "use": "sig", "alg": "RS256", "n": "\#(Self.base64url(n))", "e": "\#(Self.base64url(e))"}"#
        }
        return #"{"keys": [\#(entries.joined(separator: ", "))]}"#
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// An identity token as Apple would sign it for `subject`, with any claim overridden.
    func identityToken(subject: String = "001234.abcdef.1234", audience: String = FakeApple.bundleID, issuer: String = "https://appleid.apple.com",
                       expires: Date = Date().addingTimeInterval(600), nonce: String? = nil,
                       key: (kid: String, key: JWTKit.Insecure.RSA.PrivateKey)? = nil) async throws -> String {
        let (kid, rsa) = key ?? current
        let keys = JWTKeyCollection()
        await keys.add(rsa: rsa, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        let claims = AppleIdentityToken(issuer: .init(value: issuer), audience: .init(value: [audience]), expires: .init(value: expires),
                                        issuedAt: .init(value: Date()), subject: .init(value: subject), nonce: nonce)
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }
}

func json(_ text: String) -> Data { Data(text.utf8) }

extension LiveServer {
    convenience init(apple: FakeApple, logs: LogCapture? = nil, configure: @escaping (inout ServerConfiguration) -> Void = { _ in }) async throws {
        try await self.init(logs: logs) { config in
            config.appleBundleID = FakeApple.bundleID
            config.appleKeySetURL = apple.url
            config.keySetFetcher = URLSessionKeySetFetcher()
            configure(&config)
        }
    }

    func signIn(_ identityToken: String, nonce: String? = nil) async throws -> Reply {
        let body = nonce.map { #"{"identity_token": "\#(identityToken)", "nonce": "\#($0)"}"# } ?? #"{"identity_token": "\#(identityToken)"}"#
        return try await request("POST", "/api/v1/auth/apple", contentType: "application/json", body: json(body))
    }
}

@Suite("Sign in with Apple, access and refresh tokens, account deletion", .serialized)
struct AuthTests {
    /// The app's whole flow: sign in, analyse a photo, log it, list the day, see the stats, delete the account — and
    /// then nothing of the user is left, on disk or through the API.
    @Test func theAppsFlowEndToEnd() async throws {
        let apple = try await FakeApple()
        let logs = LogCapture()
        let server = try await LiveServer(apple: apple, logs: logs)
        let nonce = "n-\(UUID().uuidString)"
        let hashed = SHA256Hex.of(nonce)
        let signIn = try await server.signIn(try await apple.identityToken(nonce: hashed), nonce: nonce)
        #expect(signIn.status == 200, "\(String(decoding: signIn.body, as: UTF8.self))")
        let access = try #require(signIn.json["access_token"] as? String)
        let refresh = try #require(signIn.json["refresh_token"] as? String)
        let userID = try #require(signIn.json["user_id"] as? String)
        #expect(signIn.json["new_user"] as? Bool == true && signIn.json["token_type"] as? String == "Bearer")
        #expect(signIn.json["expires_in"] as? Int == 900 && refresh.hasPrefix("fr_"))

        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        let analysis = try await server.request("POST", "/api/v1/food/analyze?store_photo=true", token: access, contentType: "image/jpeg", body: photo)
        #expect(analysis.status == 200 && analysis.json["photo_stored"] as? Bool == true)
        let foods = try #require(analysis.json["detected_foods"] as? [[String: Any]])
        let items = foods.map { #"{"food": "\#($0["label"] as! String)", "grams": \#($0["grams"] as! Double)}"# }.joined(separator: ", ")
        let logged = try await server.request("POST", "/api/v1/meals", token: access, contentType: "application/json",
                                              body: json(#"{"foods": [\#(items)], "time": "2026-11-26T08:00:00Z"}"#))
        #expect(logged.status == 201)
        let day = try await server.request("GET", "/api/v1/meals?date=2026-11-26", token: access)
        #expect((day.json["meals"] as? [Any])?.count == 1)
        let stats = try await server.request("GET", "/api/v1/stats/daily?date=2026-11-26", token: access)
        let kcal = ((stats.json["current"] as? [String: Any])?["totals"] as? [String: Any])?["kcal"] as? Double ?? 0
        #expect(stats.status == 200 && abs(kcal - (analysis.json["total_calories"] as? Double ?? -1)) < 1, "the day's kcal are the photo's")
        let userFolder = server.data + "/users/" + userID
        // The diary: the user's own SQLite file, or their rows in PostgreSQL.
        let everything = (Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 4e9))
        if let store = server.store {
            #expect(try await store.diary(for: UserID(rawValue: userID)).meals(from: everything.0, to: everything.1).count == 1)
        } else {
            #expect(FileManager.default.fileExists(atPath: userFolder + "/meals.sqlite"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: userFolder + "/photos").count == 1)

        let deleted = try await server.request("DELETE", "/api/v1/auth/account", token: access)
        #expect(deleted.status == 204)
        #expect(!FileManager.default.fileExists(atPath: userFolder), "the diary and photos are gone")
        if let store = server.store {
            #expect(try await store.diary(for: UserID(rawValue: userID)).meals(from: everything.0, to: everything.1).isEmpty,
                    "the user's rows are gone with the user")
        }
        let after = try await server.request("GET", "/api/v1/meals?date=2026-11-26", token: access)
        #expect(after.status == 401, "a deleted account's access token stops working at once")
        let refreshAfter = try await server.request("POST", "/api/v1/auth/refresh", contentType: "application/json",
                                                    body: json(#"{"refresh_token": "\#(refresh)"}"#))
        #expect(refreshAfter.status == 401 && errorCode(refreshAfter) == "invalid_refresh_token")
        // Signing in again makes a new, empty account.
        let again = try await server.signIn(try await apple.identityToken())
        #expect(again.json["new_user"] as? Bool == true && again.json["user_id"] as? String != userID)
        let fresh = try await server.request("GET", "/api/v1/meals?date=2026-11-26", token: again.json["access_token"] as? String)
        #expect(fresh.status == 200 && (fresh.json["meals"] as? [Any])?.isEmpty == true)
        // Logged at trace level, the whole flow left request lines with the user id — and no token of any kind.
        let lines = logs.all
        #expect(lines.count > 10 && lines.contains { $0.contains(userID) } && lines.contains { $0.contains("/api/v1/food/analyze") })
        for secret in [access, refresh, String(access.split(separator: ".")[2]), nonce] {
            #expect(!lines.contains { $0.contains(secret) }, "a token or nonce in the log")
        }
        #expect(!lines.contains { $0.lowercased().contains("bearer ") || $0.contains("eyJ") })
        await server.stop()
        await apple.stop()
    }

    @Test func refreshTokensRotateAndAReusedOneRevokesTheFamily() async throws {
        let apple = try await FakeApple()
        let server = try await LiveServer(apple: apple)
        let first = try await server.signIn(try await apple.identityToken())
        let r1 = try #require(first.json["refresh_token"] as? String)
        // A second sign-in (another device) is its own family.
        let other = try await server.signIn(try await apple.identityToken())
        #expect(other.json["new_user"] as? Bool == false && other.json["user_id"] as? String == first.json["user_id"] as? String)
        let o1 = try #require(other.json["refresh_token"] as? String)

        func refresh(_ token: String) async throws -> LiveServer.Reply {
            try await server.request("POST", "/api/v1/auth/refresh", contentType: "application/json", body: json(#"{"refresh_token": "\#(token)"}"#))
        }
        let second = try await refresh(r1)
        let r2 = try #require(second.json["refresh_token"] as? String)
        #expect(second.status == 200 && r2 != r1)
        let access2 = try #require(second.json["access_token"] as? String)
        #expect(try await server.request("GET", "/api/v1/user/profile", token: access2).status == 200)
        // r1 comes back (stolen, or replayed): refused, and r2 — its successor — dies with it.
        let reuse = try await refresh(r1)
        #expect(reuse.status == 401 && errorCode(reuse) == "refresh_token_reused")
        let successor = try await refresh(r2)
        #expect(successor.status == 401 && errorCode(successor) == "refresh_token_reused")
        // The other device's family is untouched.
        #expect(try await refresh(o1).status == 200)
        for body in [#"{"refresh_token": "fr_nope"}"#, #"{"refresh_token": "eyJhbGciOi"}"#, #"{"token": "x"}"#, "[]"] {
            let reply = try await server.request("POST", "/api/v1/auth/refresh", contentType: "application/json", body: json(body))
            #expect([400, 401].contains(reply.status) && errorCode(reply) != nil, "\(body)")
        }
        await server.stop()
        await apple.stop()
    }

    @Test func identityTokensThatMustBeRefused() async throws {
        let apple = try await FakeApple()
        let server = try await LiveServer(apple: apple)
        let good = try await apple.identityToken()
        let parts = good.split(separator: ".").map(String.init)
        func b64(_ s: String) -> String { FakeApple.base64url(Data(s.utf8)) }
        let payload = parts[1]
        // HS256 "signed" with Apple's public key as the HMAC secret: the classic algorithm confusion.
        let pem = apple.current.key.publicKey.pemRepresentation
        let hsHeader = b64(#"{"alg":"HS256","typ":"JWT","kid":"\#(apple.current.kid)"}"#)
        let hsKeys = JWTKeyCollection()
        await hsKeys.add(hmac: HMACKey(from: pem), digestAlgorithm: .sha256)
        let hsSigned = try await hsKeys.sign(try await JWTKeyCollection().unverified(good, as: AppleIdentityToken.self))
        let confused = hsHeader + "." + hsSigned.split(separator: ".")[1] + "." + hsSigned.split(separator: ".")[2]
        let cases: [(String, String)] = [
            ("expired", try await apple.identityToken(expires: Date().addingTimeInterval(-60))),
            ("wrong audience", try await apple.identityToken(audience: "com.someone.else")),
            ("wrong issuer", try await apple.identityToken(issuer: "https://evil.example")),
            ("alg none", b64(#"{"alg":"none","typ":"JWT"}"#) + "." + payload + "."),
            ("HS256 with the public key", confused),
            ("signature of another key", parts[0] + "." + parts[1] + "." + (try await apple.identityToken(subject: "x")).split(separator: ".")[2]),
            ("not a JWT", "hello"),
        ]
        for (name, token) in cases {
            let reply = try await server.signIn(token)
            #expect(reply.status == 401 && errorCode(reply) == "invalid_identity_token", "\(name): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            #expect(!String(decoding: reply.body, as: UTF8.self).contains(token.prefix(20)), "the token is not echoed")
        }
        // A nonce that does not match what the app gave Apple.
        let withNonce = try await apple.identityToken(nonce: SHA256Hex.of("right"))
        #expect(try await server.signIn(withNonce, nonce: "wrong").status == 401)
        #expect(try await server.signIn(withNonce, nonce: "right").status == 200)
        #expect(try await server.signIn(good).status == 200)
        await server.stop()
        await apple.stop()
    }

    @Test func aRotatedAppleKeyIsFetchedOnceAndNotForEveryUnknownKid() async throws {
        let apple = try await FakeApple()
        // Made before anything is timed: RSA key generation can take seconds on a loaded machine.
        let stranger = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let server = try await LiveServer(apple: apple) { $0.appleKeysRefetchInterval = 3 }
        #expect(try await server.signIn(try await apple.identityToken()).status == 200)
        #expect(apple.fetches == 1)
        #expect(try await server.signIn(try await apple.identityToken()).status == 200)
        #expect(apple.fetches == 1, "keys are cached")
        // Apple rotates: a token with the new kid makes the server look again, and it is accepted.
        try apple.rotate()
        try await Task.sleep(for: .milliseconds(3100))
        #expect(try await server.signIn(try await apple.identityToken()).status == 200)
        #expect(apple.fetches == 2)
        // A token naming a kid Apple does not publish, right after: no new look within the interval.
        for _ in 0..<3 {
            let reply = try await server.signIn(try await apple.identityToken(key: ("made-up", stranger)))
            #expect(reply.status == 401)
        }
        #expect(apple.fetches == 2, "made-up key ids do not make the server fetch Apple's keys each time (\(apple.fetches))")
        await server.stop()
        await apple.stop()
    }

    /// The web app signs in with Apple through its Services ID: a token for that audience is taken, the methods route
    /// tells the page where to send the person, and a server without a web client id offers only tokens.
    @Test func theWebAppsServicesIDIsASecondAudience() async throws {
        let apple = try await FakeApple()
        let server = try await LiveServer(apple: apple) {
            $0.appleWebClientID = "com.foodmoment.web"
            $0.appleAuthorizeURL = URL(string: "http://127.0.0.1:9/authorize")!
        }
        let methods = try await server.request("GET", "/api/v1/auth/methods")
        #expect(methods.status == 200 && methods.json["token"] as? Bool == true && methods.json["refine"] as? Bool == false)
        let offer = try #require(methods.json["apple"] as? [String: Any])
        #expect(offer["client_id"] as? String == "com.foodmoment.web" && offer["authorize_url"] as? String == "http://127.0.0.1:9/authorize")
        let web = try await server.signIn(try await apple.identityToken(subject: "web.1", audience: "com.foodmoment.web"))
        #expect(web.status == 200 && web.json["access_token"] is String)
        let app = try await server.signIn(try await apple.identityToken(subject: "web.1"))
        #expect(app.status == 200 && app.json["new_user"] as? Bool == false, "the same Apple account through the app and the web")
        #expect(try await server.signIn(try await apple.identityToken(audience: "com.someone.web")).status == 401)
        await server.stop()
        let plain = try await LiveServer()
        let none = try await plain.request("GET", "/api/v1/auth/methods")
        #expect(none.status == 200 && none.json["apple"] == nil)
        await plain.stop()
        await apple.stop()
    }

    @Test func appleSignInIsOffWithoutABundleID() async throws {
        let server = try await LiveServer()
        let reply = try await server.request("POST", "/api/v1/auth/apple", contentType: "application/json", body: json(#"{"identity_token": "x.y.z"}"#))
        #expect(reply.status == 403 && errorCode(reply) == "apple_sign_in_off")
        await server.stop()
    }
}

enum SHA256Hex {
    static func of(_ text: String) -> String { ContentDigest.sha256Hex(Array(text.utf8)) }
}
