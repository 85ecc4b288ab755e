import Foundation

/// An API key. It prints as `<redacted>` everywhere (interpolation, `dump`, debug output); only the providers
/// read `value`, to put it in a request header.
public struct LLMSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// Where refinement goes and how: from environment variables, over a config file (`llm.json`, see README).
public struct LLMConfiguration: Sendable {
    public var provider: LLMProviderKind
    public var baseURL: String
    public var model: String
    public var apiKey: LLMSecret?
    /// Where the key came from ("FOODMOMENT_LLM_API_KEY", "key file /path", or "none"); never the key.
    public var keySource: String
    /// `"refine": true` in the config file: refine without `--refine`.
    public var refineByDefault: Bool
    /// Longest side of the uploaded photo (512…1024).
    public var maxSide: Int
    /// Requests in flight at once.
    public var concurrency: Int
    public var timeout: Duration
    public var azureAPIVersion: String
    /// The cache folder; nil disables the cache.
    public var cacheDirectory: String?
    /// The config file that was read, if any.
    public var configFile: String?

    public static let maxSideRange = 512...1024

    /// True when requests stay on this machine or the local network (loopback or private address, `localhost`).
    public var isLocal: Bool { Self.isLocalURL(baseURL) }

    public func makeProvider() -> any LLMProvider {
        switch provider {
        case .openai: OpenAICompatibleProvider(baseURL: baseURL, model: model, apiKey: apiKey)
        case .azure: OpenAICompatibleProvider(baseURL: baseURL, model: model, apiKey: apiKey, azure: true, azureAPIVersion: azureAPIVersion)
        case .gemini: GeminiProvider(baseURL: baseURL, model: model, apiKey: apiKey)
        case .ollama: OllamaProvider(baseURL: baseURL, model: model, apiKey: apiKey)
        }
    }

    /// `$FOODMOMENT_LLM_CONFIG`, else `<user data folder>/llm.json`.
    public static func configPath(environment: [String: String], userDataDirectory: String) -> String {
        if let p = environment["FOODMOMENT_LLM_CONFIG"], !p.isEmpty { return p }
        return userDataDirectory + "/llm.json"
    }

    /// The file's keys (all optional): provider, base_url, model, api_key_file, refine, max_side, concurrency,
    /// timeout_seconds, azure_api_version, cache (bool), cache_dir. It must not hold the key itself.
    struct File: Decodable {
        var provider: String?
        var baseURL: String?
        var model: String?
        var apiKeyFile: String?
        var apiKey: String?
        var refine: Bool?
        var maxSide: Int?
        var concurrency: Int?
        var timeoutSeconds: Double?
        var azureAPIVersion: String?
        var cache: Bool?
        var cacheDir: String?

        enum CodingKeys: String, CodingKey {
            case provider, model, refine, concurrency, cache
            case baseURL = "base_url", apiKeyFile = "api_key_file", apiKey = "api_key", maxSide = "max_side"
            case timeoutSeconds = "timeout_seconds", azureAPIVersion = "azure_api_version", cacheDir = "cache_dir"
        }
    }

    /// Reads the configuration. Returns nil when neither the environment nor the file names a provider (refinement
    /// is then unavailable); throws `.configuration` with what to fix when something is wrong.
    public static func load(environment env: [String: String], userDataDirectory: String) throws(LLMError) -> LLMConfiguration? {
        func value(_ name: String) -> String? { env[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0.trimmingCharacters(in: .whitespaces) } }
        let path = configPath(environment: env, userDataDirectory: userDataDirectory)
        var file = File()
        var fileRead = false
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path) else { throw .configuration("cannot read \(path)") }
            do { file = try JSONDecoder().decode(File.self, from: data) } catch {
                throw .configuration("\(path) is not valid JSON with the documented keys (provider, base_url, model, api_key_file, refine, max_side, concurrency, timeout_seconds, azure_api_version, cache, cache_dir): \(error)")
            }
            if file.apiKey != nil { throw .configuration("\(path) contains \"api_key\"; keys do not belong in the config file: use \"api_key_file\" (mode 600) or FOODMOMENT_LLM_API_KEY") }
            fileRead = true
        }
        let providerName = value("FOODMOMENT_LLM_PROVIDER") ?? file.provider
        guard let providerName else {
            if value("FOODMOMENT_LLM_BASE_URL") != nil || value("FOODMOMENT_LLM_MODEL") != nil || value("FOODMOMENT_LLM_API_KEY") != nil {
                throw .configuration("FOODMOMENT_LLM_PROVIDER is not set (openai, azure, gemini or ollama)")
            }
            return nil
        }
        guard let provider = LLMProviderKind(rawValue: providerName.lowercased()) else {
            throw .configuration("unknown provider \"\(providerName)\"; use openai (any OpenAI-compatible server), azure, gemini or ollama")
        }
        let baseURL = value("FOODMOMENT_LLM_BASE_URL") ?? file.baseURL ?? provider.defaultBaseURL
        guard !baseURL.isEmpty else { throw .configuration("provider \(provider.rawValue) needs FOODMOMENT_LLM_BASE_URL (e.g. https://NAME.openai.azure.com)") }
        guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw .configuration("base URL \"\(baseURL)\" is not an http(s) URL")
        }
        guard let model = value("FOODMOMENT_LLM_MODEL") ?? file.model else {
            throw .configuration("FOODMOMENT_LLM_MODEL is not set (e.g. gpt-4o-mini, gemini-2.5-flash, qwen2.5vl:7b)")
        }
        // A local provider is never silently replaced by a cloud one: when the file names a local endpoint, the
        // environment may not point the same run somewhere else.
        if fileRead, let fileProvider = file.provider.flatMap({ LLMProviderKind(rawValue: $0.lowercased()) }) {
            let fileBase = file.baseURL ?? fileProvider.defaultBaseURL
            if isLocalURL(fileBase), !isLocalURL(baseURL) {
                throw .configuration("\(path) names a local provider (\(fileBase)) but the environment points to \(baseURL); remove one of them: photos are never sent off this machine in place of a local model")
            }
        }
        var key: LLMSecret?
        var keySource = "none"
        if let k = value("FOODMOMENT_LLM_API_KEY") {
            key = LLMSecret(k); keySource = "FOODMOMENT_LLM_API_KEY"
        } else if let keyFile = value("FOODMOMENT_LLM_API_KEY_FILE") ?? file.apiKeyFile {
            key = try readKeyFile(keyFile); keySource = "key file \(keyFile)"
        }
        if key != nil, scheme == "http", !isLocalURL(baseURL) {
            throw .configuration("refusing to send an API key over plain http to \(url.host ?? baseURL); use https")
        }
        if key == nil, provider == .openai || provider == .azure || provider == .gemini, !isLocalURL(baseURL) {
            throw .configuration("provider \(provider.rawValue) at \(baseURL) needs a key: set FOODMOMENT_LLM_API_KEY or FOODMOMENT_LLM_API_KEY_FILE")
        }
        let maxSide = Int(value("FOODMOMENT_LLM_MAX_SIDE") ?? "") ?? file.maxSide ?? 768
        guard maxSideRange.contains(maxSide) else { throw .configuration("max side \(maxSide) is outside 512…1024") }
        let concurrency = file.concurrency ?? 2
        guard (1...16).contains(concurrency) else { throw .configuration("concurrency \(concurrency) is outside 1…16") }
        let timeout = file.timeoutSeconds ?? 90
        guard timeout > 0, timeout <= 600 else { throw .configuration("timeout_seconds \(timeout) is outside 0…600") }
        let cacheDir = file.cache == false ? nil : (file.cacheDir ?? userDataDirectory + "/llm-cache")
        return LLMConfiguration(provider: provider, baseURL: baseURL, model: model, apiKey: key, keySource: keySource,
                                refineByDefault: file.refine ?? false, maxSide: maxSide, concurrency: concurrency,
                                timeout: .milliseconds(Int64(timeout * 1000)), azureAPIVersion: file.azureAPIVersion ?? "2024-10-21",
                                cacheDirectory: cacheDir, configFile: fileRead ? path : nil)
    }

    /// Reads a key file that only its owner can read (no group/other permission bits), trimmed.
    public static func readKeyFile(_ path: String) throws(LLMError) -> LLMSecret {
        let attributes: [FileAttributeKey: Any]
        do { attributes = try FileManager.default.attributesOfItem(atPath: path) } catch {
            throw .configuration("cannot read the key file \(path): no such file or no permission")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        if mode & 0o077 != 0 {
            throw .configuration("the key file \(path) is readable by others (mode \(String(mode, radix: 8))); run `chmod 600 \(path)` first")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw .configuration("cannot read the key file \(path)") }
        let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty else { throw .configuration("the key file \(path) is empty") }
        return LLMSecret(key)
    }

    public static func isLocalURL(_ s: String) -> Bool {
        guard let host = URL(string: s)?.host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) else { return false }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host.hasPrefix("127.") { return true }
        if host.hasPrefix("10.") || host.hasPrefix("192.168.") || host.hasSuffix(".local") { return true }
        let parts = host.split(separator: ".").compactMap { Int($0) }
        if parts.count == 4, parts[0] == 172, (16...31).contains(parts[1]) { return true }
        return host.hasPrefix("fd") && host.contains(":")
    }
}
