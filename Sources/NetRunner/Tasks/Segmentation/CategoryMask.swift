public import FoundationEssentials
public import NetRunnerImage

/// A category mask: one class index per pixel, a byte each (row after row), over the whole
/// image.
///
/// At the image's size (``Resolution/image``) it takes the image's pixel count in bytes
/// whatever the number of classes; at the model's output resolution (``Resolution/model``)
/// each of its pixels covers `imageWidth / width` by `imageHeight / height` pixels of the
/// image, and ``resized(to:)`` to the image's size gives the image-size mask. Class indices
/// above 254 read as ``unknown``.
public struct CategoryMask: Hashable, Sendable {
    /// The class index of pixels the model says nothing about (outside a crop, or a class
    /// index that does not fit a byte): Pascal VOC's ignore label.
    public static let unknown: UInt8 = 255

    /// The size a segmenter makes its mask at (``ImageSegmenter/Options/maskResolution``).
    ///
    /// Either way the mask covers the whole image and the areas are counted in the image's
    /// pixels; only the mask's own size differs.
    public enum Resolution: String, Hashable, Sendable, CaseIterable {
        /// The image's size: a byte per image pixel (100 MB for a 100-megapixel photo); the
        /// library's and the CLI's default.
        case image
        /// The model's output resolution (513 x 513 for DeepLab, whatever the image): a
        /// client scales it onto the image by nearest neighbour; `netrunner serve`'s default.
        case model
    }

    /// The mask's width in pixels (the image's, or the model's output's).
    public let width: Int
    /// The mask's height in pixels (the image's, or the model's output's).
    public let height: Int
    /// The class index of each pixel, `width * height` bytes, row after row.
    public let classIndices: [UInt8]

    /// Creates a mask.
    ///
    /// - Parameters:
    ///   - width: The width.
    ///   - height: The height.
    ///   - classIndices: `width * height` class indices, row after row.
    /// - Precondition: `classIndices.count == width * height`.
    public init(width: Int, height: Int, classIndices: [UInt8]) {
        precondition(classIndices.count == width * height, "a mask holds width x height class indices")
        self.width = width
        self.height = height
        self.classIndices = classIndices
    }

    /// The class index at a pixel.
    ///
    /// - Parameters:
    ///   - x: The column, `0..<width`.
    ///   - y: The row, `0..<height`.
    /// - Returns: The class index.
    public subscript(x: Int, y: Int) -> UInt8 { classIndices[y * width + x] }

    /// The mask as a grayscale PNG whose pixel values are the class indices (lossless).
    ///
    /// - Returns: The PNG file's bytes.
    /// - Throws: ``ImageError`` if the encoder fails.
    public func pngData() throws(ImageError) -> Data {
        try PixelBuffer(width: width, height: height, format: .gray8, bytes: classIndices).pngData()
    }

    /// Reads a mask written by ``pngData()``.
    ///
    /// - Parameter pngData: A grayscale PNG.
    /// - Throws: ``ImageError`` for bytes that are not a grayscale image.
    public init(pngData: Data) throws(ImageError) {
        let pixels = try ImageDecoder.decode(data: pngData, source: "category mask").pixels
        let gray = pixels.format == .gray8 ? pixels : pixels.converted(to: .gray8)
        var indices = [UInt8](repeating: 0, count: gray.width * gray.height)
        gray.withUnsafeBytes { bytes in
            for y in 0..<gray.height {
                for x in 0..<gray.width { indices[y * gray.width + x] = bytes[y * gray.bytesPerRow + x] }
            }
        }
        self.init(width: gray.width, height: gray.height, classIndices: indices)
    }

    /// The mask at another size, by nearest neighbour (Pillow's `NEAREST`).
    ///
    /// - Parameter size: The size wanted.
    /// - Returns: The mask at that size.
    public func resized(to size: PixelSize) -> CategoryMask {
        if size.width == width && size.height == height { return self }
        let columns = Self.nearest(
            count: size.width, source: width, offset: 0, scale: Double(width) / Double(size.width))
        let rows = Self.nearest(
            count: size.height, source: height, offset: 0, scale: Double(height) / Double(size.height))
        var indices = [UInt8](repeating: 0, count: size.width * size.height)
        for y in 0..<size.height {
            let row = rows[y] * width
            for x in 0..<size.width { indices[y * size.width + x] = classIndices[row + columns[x]] }
        }
        return CategoryMask(width: size.width, height: size.height, classIndices: indices)
    }

    /// The pixels of each class (indexed by class, 256 counts) of this mask resized to a size
    /// by ``resized(to:)``, without making the resized mask.
    ///
    /// - Parameter size: The size.
    /// - Returns: The pixel count of each class index at that size.
    func classCounts(resizedTo size: PixelSize) -> [Int] {
        let columns = Self.nearest(
            count: size.width, source: width, offset: 0, scale: Double(width) / Double(max(size.width, 1)))
        let rows = Self.nearest(
            count: size.height, source: height, offset: 0, scale: Double(height) / Double(max(size.height, 1)))
        return Self.classCounts(of: classIndices, width: width, height: height, columns: columns, rows: rows)
    }

    /// The pixels of each class (256 counts) of the mask that `columns` and `rows` would make
    /// of a `width` x `height` class map.
    ///
    /// `columns` and `rows` are source indices by target pixel, -1 outside, as
    /// ``nearest(count:source:offset:scale:)`` makes them. The counts come from how many target
    /// pixels each source row and column gets: the map's size in work and memory, not the
    /// target's. Pixels outside the source count as ``unknown``.
    static func classCounts(of indices: [UInt8], width: Int, height: Int, columns: [Int], rows: [Int]) -> [Int] {
        var columnCounts = [Int](repeating: 0, count: width)
        var rowCounts = [Int](repeating: 0, count: height)
        var outsideColumns = 0
        var outsideRows = 0
        for column in columns {
            if column >= 0 { columnCounts[column] += 1 } else { outsideColumns += 1 }
        }
        for row in rows {
            if row >= 0 { rowCounts[row] += 1 } else { outsideRows += 1 }
        }
        var counts = [Int](repeating: 0, count: 256)
        for y in 0..<height where rowCounts[y] > 0 {
            for x in 0..<width where columnCounts[x] > 0 {
                counts[Int(indices[y * width + x])] += rowCounts[y] * columnCounts[x]
            }
        }
        counts[Int(unknown)] +=
            columns.count * rows.count - (columns.count - outsideColumns) * (rows.count - outsideRows)
        return counts
    }

    /// Pillow's nearest-neighbour source index of each of `count` target pixels: the target
    /// pixel's centre, `offset + (i + 0.5) * scale`, accumulated as Pillow accumulates it,
    /// clamped to the source; -1 where it falls outside.
    static func nearest(count: Int, source: Int, offset: Double, scale: Double) -> [Int] {
        var position = offset + scale * 0.5
        var indices = [Int](repeating: 0, count: count)
        for i in 0..<count {
            let index = position < 0 ? -1 : Int(position)
            indices[i] = index < source ? index : -1
            position += scale
        }
        return indices
    }
}
