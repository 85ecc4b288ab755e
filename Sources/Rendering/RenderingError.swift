/// Why a drawing input was refused. Drawing itself never fails (it clips); only parsing inputs does.
public enum RenderingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A colour string that is not `#RRGGBB` or `#RGB`.
    case invalidColor(String)
    /// A glyph atlas whose bytes do not follow the format of `tools/glyphs/make_glyph_atlas.py`.
    case invalidGlyphAtlas(String)

    public var description: String {
        switch self {
        case .invalidColor(let text):
            "invalid colour \"\(text)\": expected #RRGGBB or #RGB with hexadecimal digits (as in nutrition-db/labels.json)"
        case .invalidGlyphAtlas(let detail):
            "invalid glyph atlas: \(detail); regenerate it with tools/glyphs/make_glyph_atlas.py"
        }
    }
}
