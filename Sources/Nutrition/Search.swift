/// One search hit.
public struct SearchResult: Sendable, Codable, Equatable {
    /// How the hit matched, best first.
    public enum Match: String, Sendable, Codable, Comparable {
        /// A recognition label's name or alias (labels.json).
        case label
        /// The whole name, or its head before the first comma ("Apples, raw" for "apple").
        case exact
        /// The name starts with the query ("apple pie" for "apple").
        case prefix
        /// Every query word is a word of the name.
        case token
        /// Some word matched only with one typo, or (autocomplete) as a word prefix.
        case fuzzy

        var rank: Int { [.label: 0, .exact: 1, .prefix: 2, .token: 3, .fuzzy: 4][self]! }
        public static func < (a: Match, b: Match) -> Bool { a.rank < b.rank }
    }

    public var food: Food
    public var match: Match
    /// For Chinese queries: the dictionary entry that led here ("苹果 → label apple", "牛奶 → Cow's milk").
    public var via: String?
}

extension NutritionDatabase {
    /// Searches foods and products, best first: a recognition label's food; then generic (USDA) foods that answer
    /// the query (its words as the name's start, or the name's head word — "Yogurt, Greek, plain" for "greek yogurt",
    /// "Fish, salmon, raw" for "salmon" — among the query's words); then branded products; then other generic foods
    /// that only contain the words ("Soft drink, cola" for "coca cola"); typo matches last. Within each: names without
    /// a processed-form word the query did not ask for ("chicken breast, roasted" before "chicken breast, roll"); then
    /// exact > prefix > token; names with a plain preparation word (raw, cooked, roasted, brewed, NFS, …); label foods;
    /// shorter names. British spellings are read as the tables' American ones ("yoghurt", "aubergine", "courgette").
    /// `prefix: true` is the autocomplete mode (the last word may be incomplete). Chinese queries go through label
    /// names and aliases, then the Open Food Facts taxonomy (zh → en).
    public func search(_ query: String, limit: Int = 10, prefix: Bool = false) -> [SearchResult] {
        guard limit > 0 else { return [] }
        if Text.containsHan(query) { return searchChinese(query, limit: limit, prefix: prefix) }
        return searchEnglish(query, limit: limit, prefix: prefix)
    }

    // MARK: - English

    private struct Candidate { var entry: Int; var tier: Int; var generic: Bool; var labelFood: Bool; var keyLength: Int }

    func searchEnglish(_ query: String, limit: Int, prefix: Bool) -> [SearchResult] {
        let qTokens = Text.tokens(query).map(Text.stem).map { Self.spellingVariants[$0] ?? $0 }
        guard !qTokens.isEmpty else { return [] }
        let qKey = Array(qTokens.joined(separator: " ").utf8)
        let qWords = qTokens.map { Array($0.utf8) }
        let qSorted = qWords.sorted { $0.lexicographicallyPrecedes($1) }
        var results: [SearchResult] = []
        var seen = Set<String>()

        // Labels first: "fried rice", "banana", "naan".
        if let label = labelAliases[String(decoding: qKey, as: UTF8.self)], let l = labels[label], let f = food(id: l.food) {
            results.append(SearchResult(food: f, match: .label, via: "label \(label)"))
            seen.insert(f.id)
        }

        // Per query word: (entry << 8 | kind) sorted, one per entry with its best kind (0 exact, 1 prefix, 2 fuzzy).
        // Exact (and autocomplete) words first; typo matches rank below them, so they are only looked up
        // when the exact pass cannot fill the page.
        var candidates = rankedCandidates(qTokens, qKey: qKey, qWords: qWords, qSorted: qSorted, prefix: prefix, fuzzy: false)
        if candidates.count <= limit {
            candidates = rankedCandidates(qTokens, qKey: qKey, qWords: qWords, qSorted: qSorted, prefix: prefix, fuzzy: true)
        }
        let tiers: [UInt64: SearchResult.Match] = [1: .exact, 2: .prefix, 3: .token, 4: .fuzzy, 5: .fuzzy, 6: .fuzzy]
        for c in candidates {
            if results.count >= limit { break }
            let f = entry(Int(c & 0xFFFF_FFFF))
            if seen.insert(f.id).inserted { results.append(SearchResult(food: f, match: tiers[c >> 60]!, via: nil)) }
        }
        return Array(results.prefix(limit))
    }

    /// Candidates as packed, sorted keys: tier, USDA before products, label foods first, shorter names, entry.
    private func rankedCandidates(_ qTokens: [String], qKey: [UInt8], qWords: [[UInt8]], qSorted: [[UInt8]], prefix: Bool, fuzzy: Bool) -> [UInt64] {
        var perWord: [[UInt64]] = []
        for (i, t) in qTokens.enumerated() {
            let allowPrefix = prefix && i == qTokens.count - 1
            perWord.append(entriesMatching(Array(t.utf8), allowPrefix: allowPrefix, fuzzy: fuzzy))
        }
        let order = perWord.indices.sorted { perWord[$0].count < perWord[$1].count }
        var candidates: [UInt64] = []
        let labelFoodEntries: Set<Int> = Set(Set(labels.values.map(\.food)).compactMap { entryIndex(forID: $0) })
        var cursors = [Int](repeating: 0, count: perWord.count)
        withView { v in
            for packed in perWord[order[0]] {
                let entry = packed >> 8
                var worst = UInt8(packed & 0xFF)
                var ok = true
                for w in order.dropFirst() {
                    // Merge walk: every list is sorted by entry.
                    let list = perWord[w]
                    var c = cursors[w]
                    while c < list.count, list[c] >> 8 < entry { c += 1 }
                    cursors[w] = c
                    guard c < list.count, list[c] >> 8 == entry else { ok = false; break }
                    worst = max(worst, UInt8(list[c] & 0xFF))
                }
                guard ok else { continue }
                let e = Int(entry)
                let isFood = e < foodCount
                let o = isFood ? foodOffset(e) : productOffset(e - foodCount)
                let keyRef = v.u32(o + (isFood ? 28 : 12))
                let head = Int(isFood ? v.u8(o + 32) : v.u8(o + 22))
                let r = stringRange(v, keyRef)
                let key = UnsafeRawBufferPointer(rebasing: v.base[r])
                var tier = 3
                if worst > 0 {
                    // Fuzzy: rank by what the name would be with the typos corrected (head/exact, prefix, words).
                    tier = 4 + Self.fuzzyShape(key: key, head: head, query: qWords)
                    if prefix, worst == 1, key.count >= qKey.count, key.prefix(qKey.count).elementsEqual(qKey) {
                        tier = 2 // autocomplete: "appl" -> names starting "appl..."
                    }
                } else if key.elementsEqual(qKey) || (head == qKey.count && key.prefix(head).elementsEqual(qKey))
                            || (qWords.count > 1 && (Self.sameWords(key[...], qSorted) || Self.sameWords(key.prefix(head), qSorted))) {
                    tier = 1 // "Apples, raw" for "apple"; "Milk, whole" for "whole milk"
                } else if key.count > qKey.count, key.prefix(qKey.count).elementsEqual(qKey), key[qKey.count] == 32 {
                    tier = 2
                }
                // Group: generic foods that answer the query, products, generic foods that only contain its words,
                // typo matches. The tier stays in the top bits (the caller reads it back); the order is group, tier,
                // no unasked processed form, a plain preparation, label foods, shorter names, entry.
                let words = Self.words(key)
                var headWords = Self.words(UnsafeRawBufferPointer(rebasing: key.prefix(head)))
                // "Fish, salmon, …": the food is the word after a category head.
                if headWords.count == 1, Self.categoryHeads.contains(where: { $0.elementsEqual(headWords[0]) }), words.count > 1 {
                    headWords.append(words[1])
                }
                func unasked(_ w: Slice<UnsafeRawBufferPointer>) -> Bool {
                    Self.processedFormBytes.contains { $0.elementsEqual(w) } && !qWords.contains { $0.elementsEqual(w) }
                }
                // A dish named after the food ("Nutella sandwich on white bread", "Tuna salad") does not answer it.
                let answers = !headWords.contains(where: unasked)
                    && (tier <= 2 || headWords.contains { h in qWords.contains { $0.elementsEqual(h) } })
                let group: UInt64 = tier >= 4 ? 3 : !isFood ? 1 : answers ? 0 : 2
                let processed = isFood && words.contains(where: unasked)
                let plain = words.contains { w in Self.plainFormBytes.contains { $0.elementsEqual(w) } }
                let packedKey = UInt64(tier) << 60 | group << 56 | UInt64(processed ? 1 : 0) << 55 | UInt64(plain ? 0 : 1) << 54
                    | UInt64(labelFoodEntries.contains(e) ? 0 : 1) << 52 | UInt64(min(r.count, 0xFFFF)) << 32 | UInt64(e)
                candidates.append(packedKey)
            }
        }
        // The group, then an unasked processed form, then the packed key (tier in the top bits, then the rest).
        candidates.sort { a, b in
            let ga = (a >> 55) & 0x7, gb = (b >> 55) & 0x7
            return ga != gb ? ga < gb : a < b
        }
        return candidates
    }

    /// The space-separated words of a packed key.
    static func words(_ key: UnsafeRawBufferPointer) -> [Slice<UnsafeRawBufferPointer>] {
        key.split(separator: 32)
    }

    /// British spellings (stemmed, as `Text.stem` leaves them) read as the American ones the USDA tables use.
    static let spellingVariants: [String: String] = [
        "yoghurt": "yogurt", "yoghourt": "yogurt", "aubergine": "eggplant", "courgette": "zucchini", "chilli": "chili",
        "chillie": "chili", "beetroot": "beet", "porridge": "oatmeal", "prawn": "shrimp", "rocket": "arugula",
        "sweetcorn": "corn", "mangetout": "snowpea", "flavour": "flavor", "colour": "color", "fibre": "fiber",
    ]

    /// Words that mark a processed or unusual form of a food ("Chicken breast, roll", "Egg, dried"); a name with one
    /// the query did not ask for ranks after the plain ones of its tier.
    static let processedForms: Set<String> = [
        "roll", "loaf", "deli", "luncheon", "lunchmeat", "nugget", "patty", "breaded", "battered", "canned", "dried",
        "dehydrated", "powder", "powdered", "imitation", "substitute", "babyfood", "baby", "infant", "toddler",
        "formula", "frozen", "mix", "flavored", "sweetened", "fat-free", "nonfat", "reduced", "light", "diet",
        "creamed", "deviled", "pickled", "smoked", "cured", "malted", "condensed", "evaporated", "free", "sliced",
        "sauce", "gravy", "sandwich", "coated", "meatless", "pre", "salad", "ground", "chocolate", "iced", "feet", "liver",
        "gizzard", "giblets", "heart", "neck", "and",
    ]

    /// Everyday foods whose Chinese name the Open Food Facts taxonomy lacks (花生酱 is only found through 花生,
    /// peanuts) or maps to something less common; read before the taxonomy.
    static let everydayChinese: [String: String] = [
        "花生酱": "peanut butter", "鸡胸肉": "chicken breast", "鸡胸": "chicken breast", "面条": "noodles", "燕麦": "oatmeal",
        "燕麦片": "oatmeal", "全麦面包": "whole wheat bread", "橄榄油": "olive oil", "金枪鱼": "tuna", "豆浆": "soymilk",
        "绿茶": "green tea", "红茶": "black tea", "白糖": "sugar", "黄油": "butter", "奶酪": "cheese", "芝士": "cheese",
        "鸡腿": "chicken drumstick", "糙米": "brown rice", "红薯": "sweet potato", "地瓜": "sweet potato", "牛油果": "avocado",
        "西兰花": "broccoli", "胡萝卜": "carrot", "黄瓜": "cucumber", "菠菜": "spinach", "橙汁": "orange juice",
        "可乐": "soft drink cola", "白米饭": "rice white cooked",
    ]

    /// Heads that name a category, not the food ("Fish, salmon, raw").
    static let categoryHeads: [[UInt8]] = ["fish", "crustacean", "mollusk"].map { Array($0.utf8) }

    /// Words of the plain, everyday preparation of a food ("Coffee, brewed" before "Coffee, Cuban").
    static let plainForms: Set<String> = [
        "raw", "plain", "cooked", "roasted", "baked", "boiled", "grilled", "broiled", "steamed", "brewed", "nfs", "fresh",
        "whole",
    ]

    private static let processedFormBytes: [[UInt8]] = processedForms.map { Array(Text.stem($0).utf8) }
    private static let plainFormBytes: [[UInt8]] = plainForms.map { Array(Text.stem($0).utf8) }
    /// True when `haystack` contains the byte sequence `needle`.
    static func bytes(_ haystack: UnsafeRawBufferPointer, contain needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] {
                var j = 1
                while j < needle.count, haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    /// True when `haystack` contains `needle` (both UTF-8).
    static func contains(_ haystack: [UInt8], _ needle: UnsafeRawBufferPointer) -> Bool {
        haystack.withUnsafeBytes { bytes($0, contain: Array(needle)) }
    }

    /// The words of `key` (space separated) are the query words in some order.
    static func sameWords(_ key: Slice<UnsafeRawBufferPointer>, _ sortedQuery: [[UInt8]]) -> Bool {
        var spaces = 0
        for b in key where b == 32 { spaces += 1 }
        guard spaces + 1 == sortedQuery.count else { return false }
        let words = key.split(separator: 32)
        guard words.count == sortedQuery.count, words.count > 1 else { return false }
        return words.map { Array($0) }.sorted { $0.lexicographicallyPrecedes($1) } == sortedQuery
    }

    /// 0 when the key's head (or whole key) equals the query up to one edit per word, 1 when the key starts
    /// with the query that way, 2 otherwise.
    static func fuzzyShape(key: UnsafeRawBufferPointer, head: Int, query: [[UInt8]]) -> Int {
        let base = key.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var start = 0, index = 0, headWords = 0
        var words = 0
        var i = 0
        while i <= key.count {
            if i == key.count || key[i] == 32 {
                if i > start {
                    if index < query.count {
                        let w = UnsafeBufferPointer(start: base + start, count: i - start)
                        let ok = query[index].withUnsafeBufferPointer { q in
                            w.elementsEqual(q) || (q.count >= 4 && Text.withinOneEdit(w, q))
                        }
                        if !ok { return 2 }
                        index += 1
                    }
                    words += 1
                    if i <= head { headWords += 1 }
                }
                start = i + 1
            }
            i += 1
        }
        guard index == query.count else { return 2 }
        return words == query.count || headWords == query.count ? 0 : 1
    }

    /// Entry index of a food id (foods only; used for the label boost).
    func entryIndex(forID id: String) -> Int? {
        let parts = id.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let num = UInt64(parts[1]),
              let source = [FoodSource.srLegacy, .foundation, .fndds].first(where: { $0.idPrefix == parts[0] }) else { return nil }
        return withView { v in
            var lo = 0, hi = foodCount
            let key = (source.rawValue, num)
            while lo < hi {
                let mid = (lo + hi) / 2, o = foodOffset(mid)
                let k = (v.u8(o + 8), v.u64(o))
                if k == key { return mid }
                if k < key { lo = mid + 1 } else { hi = mid }
            }
            return nil
        }
    }

    /// Posting entries whose index word equals `word` (kind 0), starts with it (kind 1, autocomplete only),
    /// or is one Damerau-Levenshtein edit away (kind 2, words of 4+ letters).
    private func entriesMatching(_ word: [UInt8], allowPrefix: Bool, fuzzy: Bool) -> [UInt64] {
        let tokens = sections[Format.Section.tokens.rawValue]
        let postings = sections[Format.Section.postings.rawValue]
        var out: [UInt64] = []
        withView { v in
            func tokenBytes(_ i: Int) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: v.base[stringRange(v, v.u32(tokens.offset + i * Format.tokenStride))])
            }
            func add(_ i: Int, _ kind: UInt8) {
                let o = tokens.offset + i * Format.tokenStride
                let start = Int(v.u32(o + 4)), count = Int(v.u32(o + 8))
                out.reserveCapacity(out.count + count)
                for p in start..<(start + count) {
                    out.append(UInt64(v.u32(postings.offset + 4 * p)) << 8 | UInt64(kind))
                }
            }
            // Lower bound of `word` in the sorted token table.
            var lo = 0, hi = tokens.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if tokenBytes(mid).lexicographicallyPrecedes(word) { lo = mid + 1 } else { hi = mid }
            }
            if lo < tokens.count, tokenBytes(lo).elementsEqual(word) { add(lo, 0) }
            if allowPrefix {
                var i = lo, budget = 200_000
                while i < tokens.count, budget > 0 {
                    let t = tokenBytes(i)
                    guard t.count >= word.count, t.prefix(word.count).elementsEqual(word) else { break }
                    if t.count > word.count {
                        add(i, 1)
                        budget -= Int(v.u32(tokens.offset + i * Format.tokenStride + 8))
                    }
                    i += 1
                }
            }
            guard fuzzy, word.count >= 4 else { return }
            word.withUnsafeBufferPointer { w in
                for i in 0..<tokens.count {
                    let r = stringRange(v, v.u32(tokens.offset + i * Format.tokenStride))
                    guard abs(r.count - w.count) <= 1 else { continue }
                    let t = UnsafeBufferPointer<UInt8>(start: v.base.baseAddress!.advanced(by: r.lowerBound).assumingMemoryBound(to: UInt8.self), count: r.count)
                    if Text.withinOneEdit(t, w), !t.elementsEqual(w) { add(i, 2) }
                }
            }
        }
        // Sorted by entry, then kind: keep the first (best) kind of each entry.
        out.sort()
        var unique: [UInt64] = []
        unique.reserveCapacity(out.count)
        for x in out where unique.last.map({ $0 >> 8 != x >> 8 }) ?? true { unique.append(x) }
        return unique
    }

    // MARK: - Chinese

    func searchChinese(_ query: String, limit: Int, prefix: Bool) -> [SearchResult] {
        let q = query.filter { !$0.isWhitespace }
        var results: [SearchResult] = []
        var seen = Set<String>()
        func push(_ f: Food, _ m: SearchResult.Match, _ via: String) {
            if results.count < limit, seen.insert(f.id).inserted { results.append(SearchResult(food: f, match: m, via: via)) }
        }
        // 1. Labels: exact Chinese name/alias, then names containing the query (or contained in it).
        var labelHits: [(rank: Int, len: Int, label: String, term: String)] = []
        for key in labels.keys.sorted() {
            let l = labels[key]!
            for term in [l.nameZh] + l.aliases.zh where !term.isEmpty {
                if term == q { labelHits.append((0, term.count, key, term)) }
                else if term.hasPrefix(q) { labelHits.append((1, term.count, key, term)) }
                else if term.contains(q) || (!prefix && q.contains(term)) { labelHits.append((2, term.count, key, term)) }
            }
        }
        labelHits.sort { ($0.rank, $0.len, $0.label) < ($1.rank, $1.len, $1.label) }
        func pushLabels(_ ranks: ClosedRange<Int>) {
            for h in labelHits where ranks.contains(h.rank) {
                if let f = food(id: labels[h.label]!.food) {
                    push(f, h.rank == 0 ? .label : (h.rank == 1 ? .prefix : .token), "\(h.term) → label \(h.label)")
                }
            }
        }
        // The everyday foods the taxonomy lacks or names oddly first (面条 is noodles, not only ramen); then exact
        // label names; labels that merely contain the query ("鞑靼牛肉" for "牛肉") come after an exact dictionary
        // translation (牛肉 → Beef).
        if let english = Self.everydayChinese[q] {
            for h in searchEnglish(english, limit: limit, prefix: false) { push(h.food, h.match, "\(q) → \(english)") }
        }
        pushLabels(0...0)
        // 2. OFF taxonomy: zh → English name, then an English search (dropping leading words if needed).
        var terms: [(rank: Int, len: Int, zh: String, en: String)] = []
        let zhSec = sections[Format.Section.zhPairs.rawValue]
        let qBytes = Array(q.utf8)
        withView { v in
            for i in 0..<zhSec.count {
                let o = zhSec.offset + i * Format.zhStride
                // Compare UTF-8 bytes in place; decode only the entries that match.
                let zh = UnsafeRawBufferPointer(rebasing: v.base[stringRange(v, v.u32(o))])
                let rank: Int
                if zh.elementsEqual(qBytes) { rank = 0 }
                else if zh.count > qBytes.count, zh.prefix(qBytes.count).elementsEqual(qBytes) { rank = 1 }
                else if Self.bytes(zh, contain: qBytes) { rank = 2 }
                else if !prefix, zh.count >= 6, Self.contains(qBytes, zh) { rank = 3 } // query holds a 2+ character term
                else { continue }
                let zhString = String(decoding: zh, as: UTF8.self)
                terms.append((rank, zhString.count, zhString, string(v, v.u32(o + 4))))
            }
        }
        terms.sort { ($0.rank, $0.len, $0.zh, $0.en) < ($1.rank, $1.len, $1.zh, $1.en) }
        func pushTerms(_ chosen: ArraySlice<(rank: Int, len: Int, zh: String, en: String)>) {
            for t in chosen where results.count < limit {
                let words = Text.tokens(t.en)
                // In the English search's own order (generic foods that answer it first).
                var hits = searchEnglish(words.joined(separator: " "), limit: limit, prefix: false)
                // English heads come last ("cow s milk" -> "milk"): try the head noun when no USDA food matched.
                if words.count > 1, let last = words.last, !hits.contains(where: { $0.food.source.isGeneric && $0.match <= .prefix }) {
                    let head = searchEnglish(last, limit: limit, prefix: false)
                    hits = hits.filter { $0.food.source.isGeneric } + head + hits.filter { !$0.food.source.isGeneric }
                }
                for h in hits { push(h.food, t.rank == 0 ? h.match : max(h.match, .token), "\(t.zh) → \(t.en)") }
            }
        }
        let chosen = terms.prefix(4)
        pushTerms(chosen.filter { $0.rank == 0 }[...])
        pushLabels(1...2)
        pushTerms(chosen.filter { $0.rank != 0 }[...])
        // 3. Products or foods whose own names contain the Chinese text.
        if results.count < limit {
            for h in searchEnglish(q, limit: limit, prefix: prefix) { push(h.food, h.match, "name") }
        }
        return results
    }
}
