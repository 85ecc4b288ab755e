extension Duration {
    /// Milliseconds, rounded to a microsecond: the unit of every timing the product reports.
    public var milliseconds: Double {
        let c = components
        let ms = Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15
        return (ms * 1000).rounded() / 1000
    }
}
