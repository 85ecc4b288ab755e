import Foundation
import Hummingbird
import ImageCodecs
import JWTKit
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches a JSON Web Key Set. The executable chooses the transport; tests point it at a key set on loopback.
public protocol KeySetFetcher: Sendable {
    func fetch(_ url: URL) async throws -> Data
}

/// Verifies Sign in with Apple identity tokens: RS256 against Apple's published keys (fetched on first use and again
/// when a token names a key not seen yet, at most once a minute), `iss` Apple, `aud` our bundle id, `exp`, and the
/// nonce when the app sends one. Tokens with `alg: none` or HMAC fail: only Apple's RSA keys are in the collection.
actor AppleIdentityVerifier {
    let keySetURL: URL
    /// The bundle id (the iPhone app's tokens) and the web app's Services ID, when it has one.
    let audiences: Set<String>
    let fetcher: any KeySetFetcher
    let refetchInterval: TimeInterval
    private var keys = JWTKeyCollection()
    private var fetchedAt: Date?
    private var hasKeys = false
    private var knownKeyIDs: Set<String> = []

    /// The `kid` of a JWT's header, read without trusting anything else in it.
    static func keyID(of token: String) -> String? {
        guard token.count <= 8192, let header = token.split(separator: ".", omittingEmptySubsequences: false).first else { return nil }
        var text = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object["kid"] as? String
    }

    init(keySetURL: URL, audiences: [String], fetcher: any KeySetFetcher, refetchInterval: TimeInterval) {
        self.keySetURL = keySetURL; self.audiences = Set(audiences); self.fetcher = fetcher; self.refetchInterval = refetchInterval
    }

    func verify(_ token: String, nonce: String?) async throws -> AppleIdentityToken {
        if !hasKeys { try await refresh() }
        guard let kid = Self.keyID(of: token) else {
            throw APIError(.unauthorized, code: "invalid_identity_token", "the Apple identity token was refused: it is not a JWT with a key id")
        }
        if !knownKeyIDs.contains(kid), fetchedAt.map({ Date().timeIntervalSince($0) > refetchInterval }) ?? true {
            // Apple rotates its keys: a token signed with a new one makes us look again (at most once per interval,
            // so made-up key ids cannot turn us into a fetch loop).
            try await refresh()
        }
        // Checked here because the key collection would otherwise fall back to its default key.
        guard knownKeyIDs.contains(kid) else {
            throw APIError(.unauthorized, code: "invalid_identity_token", "the Apple identity token was refused: it is not signed with a key Apple publishes")
        }
        let claims: AppleIdentityToken
        do {
            claims = try await keys.verify(token, as: AppleIdentityToken.self, expectedAudiences: audiences)
        } catch {
            throw Self.refusal(error)
        }
        if let nonce {
            // The app sends Apple SHA-256(nonce) and us the nonce itself.
            guard let claimed = claims.nonce, claimed == ContentDigest.sha256Hex(Array(nonce.utf8)) else {
                throw APIError(.unauthorized, code: "invalid_identity_token",
                               "the identity token's nonce does not match the nonce sent: send the nonce whose SHA-256 the app gave Apple")
            }
        }
        return claims
    }

    private func refresh() async throws {
        let data: Data
        do { data = try await fetcher.fetch(keySetURL) } catch {
            throw APIError(.serviceUnavailable, code: "apple_keys_unavailable",
                           "Apple's signing keys could not be fetched; try again shortly", headers: [.retryAfter: "30"])
        }
        let fresh = JWTKeyCollection()
        let ids: [String]
        do {
            let jwks = try JSONDecoder().decode(JWKS.self, from: data)
            ids = jwks.keys.compactMap { $0.keyIdentifier?.string }
            _ = try await fresh.add(jwks: jwks)
        } catch {
            throw APIError(.serviceUnavailable, code: "apple_keys_unavailable",
                           "Apple's signing keys could not be read; try again shortly", headers: [.retryAfter: "30"])
        }
        keys = fresh
        knownKeyIDs = Set(ids)
        fetchedAt = Date()
        hasKeys = true
    }

    /// Says why a token was refused without echoing it.
    static func refusal(_ error: any Error) -> APIError {
        let why: String
        if let e = error as? JWTError {
            switch e.errorType {
            case .claimVerificationFailure:
                why = "a claim failed: \(e.reason ?? "invalid") (check the token is fresh and was issued for this app's bundle id)"
            case .signatureVerificationFailed: why = "its signature does not verify against Apple's keys"
            case .unknownKID, .missingKIDHeader: why = "it is not signed with a key Apple publishes"
            case .malformedToken: why = "it is not a JWT"
            case .unsupportedAlgorithm, .noKeyProvided: why = "its algorithm is not RS256"
            default: why = "it could not be verified"
            }
        } else if error is DecodingError {
            why = "its claims are not those of an Apple identity token"
        } else {
            why = "it could not be verified"
        }
        return APIError(.unauthorized, code: "invalid_identity_token", "the Apple identity token was refused: \(why)")
    }
}

/// `GET /api/v1/auth/methods` (no token needed): how a person can sign in here and whether analyze can refine, so the
/// web app shows only what this server does.
struct SignInMethods: Encodable, Sendable {
    struct Apple: Encodable, Sendable {
        var clientID: String
        var authorizeURL: String
        enum CodingKeys: String, CodingKey { case clientID = "client_id", authorizeURL = "authorize_url" }
    }
    var token = true
    var apple: Apple?
    var refine: Bool
}

/// Our own access tokens: short-lived HS256 JWTs naming the user. The secret comes from the configuration (shared by
/// every instance behind one load balancer) or is made once per data folder.
struct AccessClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var iss: IssuerClaim

    static let issuer = "foodmoment"

    func verify(using _: some JWTAlgorithm) throws {
        try exp.verifyNotExpired()
        guard iss.value == Self.issuer else { throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "not issued by FoodMoment") }
    }
}

struct TokenIssuer: Sendable {
    let keys: JWTKeyCollection
    let accessLifetime: TimeInterval
    let refreshLifetime: TimeInterval
    let accounts: any Accounts

    init(secret: [UInt8], accessLifetime: TimeInterval, refreshLifetime: TimeInterval, accounts: any Accounts) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.accessLifetime = accessLifetime; self.refreshLifetime = refreshLifetime; self.accounts = accounts
    }

    struct Tokens: Encodable {
        var accessToken: String
        var tokenType = "Bearer"
        var expiresIn: Int
        var refreshToken: String
        var refreshExpiresIn: Int
        var userId: String
        var newUser: Bool?
        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in", refreshToken = "refresh_token"
            case refreshExpiresIn = "refresh_expires_in", userId = "user_id", newUser = "new_user"
        }
    }

    func accessToken(for user: UserID, now: Date = Date()) async throws -> String {
        try await keys.sign(AccessClaims(sub: .init(value: user.rawValue), exp: .init(value: now.addingTimeInterval(accessLifetime)),
                                         iat: .init(value: now), iss: .init(value: AccessClaims.issuer)))
    }

    func tokens(for user: UserID, refresh: String, newUser: Bool? = nil) async throws -> Tokens {
        Tokens(accessToken: try await accessToken(for: user), expiresIn: Int(accessLifetime), refreshToken: refresh,
               refreshExpiresIn: Int(refreshLifetime), userId: user.rawValue, newUser: newUser)
    }

    /// The user an access token names, or nil when it is not ours, expired or malformed.
    func user(forAccessToken token: String) async -> UserID? {
        guard token.count <= 4096, let claims = try? await keys.verify(token, as: AccessClaims.self) else { return nil }
        return UserID(rawValue: claims.sub.value)
    }

    /// The HMAC secret: `FOODMOMENT_JWT_SECRET` when set (every instance must share it), else `DATA/jwt-secret`,
    /// made on first start with 32 random bytes and readable by the owner only.
    static func secret(environment: String?, dataDirectory: String) throws -> [UInt8] {
        if let environment, !environment.isEmpty {
            guard environment.utf8.count >= 32 else {
                throw APIError(.internalServerError, code: "weak_secret", "FOODMOMENT_JWT_SECRET must be at least 32 bytes")
            }
            return Array(environment.utf8)
        }
        let path = dataDirectory + "/jwt-secret"
        if let data = FileManager.default.contents(atPath: path), data.count >= 32 { return [UInt8](data) }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        return bytes
    }
}

/// `POST /auth/apple`, `POST /auth/refresh` (no bearer token: these make one), `DELETE /auth/account`.
struct AuthRoutes: Sendable {
    let apple: AppleIdentityVerifier?
    let issuer: TokenIssuer
    let store: any ServerStore
    let folders: UserFolders

    struct AppleSignIn: Decodable {
        var identityToken: String
        var nonce: String?
        enum CodingKeys: String, CodingKey { case identityToken = "identity_token", nonce }
    }

    struct Refresh: Decodable {
        var refreshToken: String
        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
    }

    @Sendable func signInWithApple(_ request: Request, context: APIContext) async throws -> Response {
        guard let apple else {
            throw APIError(.forbidden, code: "apple_sign_in_off",
                           "this server does not take Sign in with Apple (start it with --apple-bundle-id); use a personal token")
        }
        let body = try await MealRoutes.body(AppleSignIn.self, of: request, limit: 64 << 10,
                                             example: #"{"identity_token": "eyJ…", "nonce": "the nonce the app hashed for Apple"}"#)
        guard body.identityToken.count <= 8192 else { throw APIError.badRequest("invalid_identity_token", "identity_token is longer than 8192 characters") }
        let claims = try await apple.verify(body.identityToken, nonce: body.nonce)
        let (user, created) = try await store.appleUser(subject: claims.subject.value, now: Date())
        let refresh = try await store.createRefreshToken(for: user, family: nil, lifetime: issuer.refreshLifetime, now: Date())
        context.logger.info("signed in with Apple", metadata: ["user": .string(user.rawValue), "new": .stringConvertible(created)])
        return try JSONResponse.make(try await issuer.tokens(for: user, refresh: refresh, newUser: created))
    }

    @Sendable func refresh(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await MealRoutes.body(Refresh.self, of: request, limit: 16 << 10, example: #"{"refresh_token": "fr_…"}"#)
        switch try await store.rotateRefreshToken(body.refreshToken, lifetime: issuer.refreshLifetime, now: Date()) {
        case .rotated(let user, let token):
            return try JSONResponse.make(try await issuer.tokens(for: user, refresh: token))
        case .unknown:
            throw APIError(.unauthorized, code: "invalid_refresh_token", "this refresh token is not known: sign in again")
        case .expired:
            throw APIError(.unauthorized, code: "refresh_token_expired", "this refresh token has expired: sign in again")
        case .reused:
            context.logger.warning("refresh token reused; family revoked")
            throw APIError(.unauthorized, code: "refresh_token_reused",
                           "this refresh token was already used, so every token from that sign-in is revoked: sign in again")
        }
    }

    /// Deletes the caller and everything of theirs: tokens, profile, idempotency records, diary and photos.
    @Sendable func deleteAccount(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        try await store.deleteUser(user)
        try folders.remove(user)
        context.logger.info("account deleted", metadata: ["user": .string(user.rawValue)])
        return Response(status: .noContent)
    }
}

/// Fetches the key set over HTTP(S) with Foundation's URLSession (libcurl on Linux), 10 s at most.
public struct URLSessionKeySetFetcher: KeySetFetcher {
    public init() {}

    public func fetch(_ url: URL) async throws -> Data {
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else { throw URLError(.badServerResponse) }
        return data
    }
}

/// For a configuration that names no fetcher: every fetch fails, so Sign in with Apple answers 503.
struct NoKeySetFetcher: KeySetFetcher {
    func fetch(_ url: URL) async throws -> Data { throw URLError(.unsupportedURL) }
}
