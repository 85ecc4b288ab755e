public import FoodCore

/// Generated "foods" no model was trained on, with seeded jitter: tests that train, learn or match use them.
public enum GeneratedPhotos {
    /// A warm blob on a light background.
    public static func blob(seed: UInt64) -> RGBImage { photo(kind: 0, seed: seed) }

    /// Cool vertical stripes.
    public static func stripes(seed: UInt64) -> RGBImage { photo(kind: 1, seed: seed) }

    static func photo(kind: Int, seed: UInt64) -> RGBImage {
        var rng = SplitMix64(seed: seed)
        var img = RGBImage(width: 96, height: 96)
        let phase = Int(rng.next() % 8)
        for y in 0..<96 {
            for x in 0..<96 {
                let n = UInt8(rng.next() % 30)
                if kind == 0 {
                    let dx = x - 48, dy = y - 48
                    img[x, y] = dx * dx + dy * dy < 900 + phase * 40 ? (200 + n / 2, 120 + n, 40) : (250, 240 - n, 230)
                } else {
                    img[x, y] = ((x + phase) / 6) % 2 == 0 ? (30, 60 + n, 160 + n) : (220, 230, 240 - n)
                }
            }
        }
        return img
    }
}
