import ArgumentParser
import CurlTransport
import Foundation
import LLMRefiner

/// `foodmoment llm …`: the optional LLM refinement's configuration and reachability.
struct LLMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "llm",
        abstract: "Check the optional LLM refinement's provider (see `analyze --refine`).",
        subcommands: [LLMCheckCommand.self]
    )
}

struct LLMCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Does the configured provider answer? Prints the endpoint and the latency; sends no photo.",
        discussion: """
        Sends one free request (OpenAI-compatible: GET /models; Gemini: GET the model; Ollama: GET /api/tags and \
        whether the model is pulled). The key travels in a header and is never printed.

        Exit codes: 0 the provider answered, 1 it did not (the message says why), 2 not configured.
        """
    )

    @Flag(help: "Print one JSON object on stdout.")
    var json = false

    func run() async throws {
        guard let c = try RefineOptions.loadConfiguration() else {
            throw ValidationError("no LLM provider configured: set FOODMOMENT_LLM_PROVIDER (openai, azure, gemini, ollama) and FOODMOMENT_LLM_MODEL, or write llm.json (see README \"LLM refinement\")")
        }
        let client = LLMClient(configuration: c, transport: CurlHTTPTransport(userAgent: RefineOptions.userAgent), clock: ContinuousClock())
        let result = await client.check()
        let ms = Double(result.latency.components.seconds) * 1000 + Double(result.latency.components.attoseconds) / 1e15
        if json {
            struct Report: Encodable {
                var provider, model, endpoint, checked, keySource, message: String
                var local, ok: Bool
                var status: Int?
                var latencyMs: Double
                enum CodingKeys: String, CodingKey {
                    case provider, model, endpoint, checked, message, local, ok, status
                    case keySource = "key_source", latencyMs = "latency_ms"
                }
            }
            print(try Output.json(Report(provider: c.provider.rawValue, model: c.model, endpoint: client.provider.endpoint,
                                         checked: client.provider.checkEndpoint, keySource: c.keySource, message: result.message,
                                         local: c.isLocal, ok: result.ok, status: result.status, latencyMs: (ms * 10).rounded() / 10)))
        } else {
            print("provider  \(c.provider.rawValue) · model \(c.model) · \(c.isLocal ? "local" : "remote")")
            print("endpoint  \(client.provider.endpoint)")
            print("key       \(c.apiKey == nil ? "none" : "from \(c.keySource)")")
            print(String(format: "check     GET %@ → %@ in %.0f ms", client.provider.checkEndpoint, result.ok ? "OK, \(result.message)" : "FAILED: \(result.message)", ms))
        }
        if !result.ok { throw Exit.failed }
    }
}
