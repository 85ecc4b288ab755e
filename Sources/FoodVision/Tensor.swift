public import FoodCore

/// A dense NHWC Float tensor: `batch` images of `height x width x channels`, channel fastest.
///
/// The value type the layer API takes and returns; the network itself runs on preallocated buffers.
public struct Tensor: Sendable, Equatable {
    public let batch: Int
    public let height: Int
    public let width: Int
    public let channels: Int
    public var values: [Float]

    public init(batch: Int, height: Int, width: Int, channels: Int, values: [Float]) {
        precondition(batch >= 0 && height >= 0 && width >= 0 && channels >= 0, "Tensor: negative dimension")
        precondition(values.count == batch * height * width * channels,
                     "Tensor: \(values.count) values for \(batch)x\(height)x\(width)x\(channels)")
        self.batch = batch; self.height = height; self.width = width; self.channels = channels
        self.values = values
    }

    public init(zerosBatch batch: Int, height: Int, width: Int, channels: Int) {
        self.init(batch: batch, height: height, width: width, channels: channels,
                  values: [Float](repeating: 0, count: batch * height * width * channels))
    }

    /// Stacks same-sized HWC images into one batch.
    public init(stacking images: [FloatImage]) throws(FoodVisionError) {
        guard let first = images.first else { throw .invalidInput(reason: "empty batch: pass at least one image") }
        var values = [Float]()
        values.reserveCapacity(images.count * first.values.count)
        for (i, img) in images.enumerated() {
            guard img.width == first.width, img.height == first.height, img.channels == first.channels else {
                throw .invalidInput(reason: "image \(i) is \(img.width)x\(img.height)x\(img.channels) but image 0 is \(first.width)x\(first.height)x\(first.channels); resize every image to the same size")
            }
            values.append(contentsOf: img.values)
        }
        self.init(batch: images.count, height: first.height, width: first.width, channels: first.channels, values: values)
    }

    public var count: Int { values.count }

    /// Image `index` of the batch as an HWC `FloatImage`.
    public func image(_ index: Int) -> FloatImage {
        let size = height * width * channels
        return FloatImage(width: width, height: height, channels: channels,
                          values: Array(values[(index * size)..<((index + 1) * size)]))
    }
}
