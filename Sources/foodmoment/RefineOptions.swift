import ArgumentParser
import CurlTransport
import FoodCore
import Foundation
import LLMRefiner
import Nutrition
import FoodMoment
import FoodRecognition
import FoodTraining

/// `analyze` options for the optional LLM refinement (stage 2), and where the concrete refiner is built:
/// libcurl transport, continuous clock, configuration from the environment and `llm.json`.
struct RefineOptions: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Send each photo (downscaled, re-encoded without EXIF) and the on-device candidates to the configured LLM to correct names and grams.",
        discussion: "Off unless given (or \"refine\": true in llm.json). Configure with FOODMOMENT_LLM_PROVIDER/BASE_URL/MODEL/API_KEY; see `foodmoment llm check`."))
    var refine: Bool?

    @Flag(help: "List every destination this run would contact and what it would send, then exit without analysing.")
    var explainNetwork = false

    @Option(help: "Longest side in pixels of the photo sent to the LLM (512–1024; default 768 or max_side in llm.json).")
    var llmMaxSide: Int?

    @Flag(help: "Neither read nor write the LLM answer cache.")
    var noLLMCache = false

    func validate() throws {
        if let s = llmMaxSide, !LLMConfiguration.maxSideRange.contains(s) { throw ValidationError("--llm-max-side must be within 512…1024") }
        if refine == true, try Self.loadConfiguration() == nil { throw Self.notConfigured }
    }

    static func loadConfiguration() throws -> LLMConfiguration? {
        do {
            return try LLMConfiguration.load(environment: ProcessInfo.processInfo.environment,
                                             userDataDirectory: ProcessSettings.userDataDirectory)
        } catch {
            throw ValidationError(error.description)
        }
    }

    static let notConfigured = ValidationError("--refine needs a provider: set FOODMOMENT_LLM_PROVIDER (openai, azure, gemini, ollama) and FOODMOMENT_LLM_MODEL, or write llm.json (see README \"LLM refinement\")")

    static let userAgent = "FoodMoment/\(FoodMomentVersion.string) (Linux command-line meal analysis)"

    /// The refiner when refinement is on (flag or config), else nil. Asked for but not configured is a usage error.
    func makeRefiner(nutrition: NutritionDatabase?) throws -> PhotoRefiner? {
        let configuration = try Self.loadConfiguration()
        guard refine ?? configuration?.refineByDefault ?? false else { return nil }
        guard var c = configuration else { throw Self.notConfigured }
        if let s = llmMaxSide { c.maxSide = s }
        let client = LLMClient(configuration: c, transport: CurlHTTPTransport(userAgent: Self.userAgent), clock: ContinuousClock(),
                               useCache: !noLLMCache, note: { Output.note($0) })
        Output.note("note: refining with \(c.provider.rawValue) \(c.model) at \(client.provider.endpoint) (\(c.isLocal ? "local" : "leaves this machine"))")
        return PhotoRefiner(client: client, nutrition: nutrition, maxSide: c.maxSide)
    }

    /// Results refined when a refiner exists, unchanged otherwise.
    func refine(_ photos: [AnalyzedPhoto], with refiner: PhotoRefiner?) async -> [PhotoResult] {
        guard let refiner else { return photos.map(\.result) }
        let refined = await refiner.refine(photos)
        for r in refined where r.refinement?.status == .unrefined { Output.note("note: \(r.file) not refined: \(r.refinement?.reason ?? "")") }
        return refined
    }

    /// `--explain-network`: every destination and what goes there, on stdout.
    func explain(photoCount: Int) throws {
        print("Network use of this `foodmoment analyze` run (\(photoCount) photo\(photoCount == 1 ? "" : "s")):")
        print("  recognition, nutrition and the diary run on this machine; nothing is sent for them.")
        let configuration: LLMConfiguration?
        do { configuration = try Self.loadConfiguration() } catch {
            print("  LLM refinement: misconfigured, would not run: \(error)")
            return
        }
        guard let c = configuration, refine ?? c.refineByDefault else {
            print("  LLM refinement: off (pass --refine" + (configuration == nil ? " and configure a provider" : "") + "); no destination is contacted.")
            return
        }
        let p = c.makeProvider()
        let side = llmMaxSide ?? c.maxSide
        print("  LLM refinement: ON")
        print("    destination: POST \(p.endpoint)")
        print("    where:       \(c.isLocal ? "this machine / local network" : "a remote service: photos leave this machine") (provider \(c.provider.rawValue), model \(c.model))")
        print("    per photo:   one JPEG, longest side \(side) px, re-encoded without EXIF (no GPS, no camera data, no file name);")
        print("                 the on-device foods (names, Chinese names, confidences, boxes, grams); prompt \(LLMPrompt.version); temperature 0")
        print("    key:         " + (c.apiKey == nil ? "none sent" : "sent in a request header only, from \(c.keySource); never printed, logged or cached"))
        print("    retries:     up to 4 attempts on 408/409/429/5xx/timeouts; concurrency \(c.concurrency)")
        if noLLMCache {
            print("    cache:       off (--no-llm-cache)")
        } else if let dir = c.cacheDirectory {
            print("    cache:       answers only, in \(dir); a photo already answered is not sent again")
        }
    }
}
