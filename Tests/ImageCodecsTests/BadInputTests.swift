import FoodCore
import FoodMomentTestSupport
import ImageCodecs
import Testing

@Suite("Bad inputs throw typed errors with clear messages")
struct BadInputTests {
    @Test(arguments: BadInputs.all)
    func throwsTypedError(_ input: BadInputs.Case) {
        do {
            let d = try ImageDecoder.decode(input.bytes)
            Issue.record("\(input.name): decoded \(d.image.width)x\(d.image.height) instead of failing")
        } catch {
            #expect(input.expectedKinds.contains(error.kind), "\(input.name): kind \(error.kind) — \(error)")
            #expect(!error.description.isEmpty)
        }
    }

    @Test func corpusIsLargeEnough() {
        #expect(BadInputs.all.filter { $0.name.hasPrefix("JPEG truncated") }.count >= 20)
    }

    @Test func messagesSayWhatToDo() {
        let gif = ImageCodecError.unsupportedFormat(.gif).description
        #expect(gif.hasPrefix("unsupported format: GIF (convert with"))
        #expect(ImageCodecError.tooLarge(width: 60000, height: 60000, limit: 100_000_000).description.contains("--max-pixels"))
    }
}
