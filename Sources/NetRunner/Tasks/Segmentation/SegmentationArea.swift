/// How much of the image one class covers.
public struct SegmentationArea: Hashable, Sendable, Codable {
    /// The class index.
    public var index: Int
    /// The class's label, if known.
    public var label: String?
    /// The pixels of the image labelled with it.
    public var pixels: Int

    /// Creates an area.
    ///
    /// - Parameters:
    ///   - index: The class index.
    ///   - label: The class's label.
    ///   - pixels: The pixels labelled with it.
    public init(index: Int, label: String?, pixels: Int) {
        self.index = index
        self.label = label
        self.pixels = pixels
    }
}
