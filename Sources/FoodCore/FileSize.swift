import Foundation

/// The size of the file at `path`, or nil when it cannot be read (missing, no permission).
///
/// Readers of our own file formats check it before reading: Foundation's read of an empty file leaks its 4 KiB buffer
/// (found by the food-head, model-manifest and nutrition-db fuzz targets), so an empty or too-short file is refused
/// without reading it.
package func fileSize(atPath path: String) -> Int? {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue
}
