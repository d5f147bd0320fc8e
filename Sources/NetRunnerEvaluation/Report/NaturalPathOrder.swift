/// File paths in the order Finder and GNOME Files list names: folder by folder, each run of
/// digits compared as the number it writes (`img_2` before `img_10`), the rest without regard
/// to case; paths equal so (`IMG_2` and `img_2`, `img_02` and `img_2`) in the order of their
/// bytes, so the order is total.
///
///     let sorted = paths.sorted(by: NaturalPathOrder.areInIncreasingOrder)
enum NaturalPathOrder {
    /// A path's sort key, compared byte for byte (as GLib's collation key for file names is):
    /// each component's characters lowercased, in UTF-8; a run of digits as `0` (where a digit
    /// sorts: after a space, `-` or `.`, before a letter), its length without leading zeros
    /// (4 bytes, big-endian) and those digits, so a longer number is a larger one; each
    /// component ended by a 0 byte, so a name goes before the longer names it starts and a
    /// folder's files before the next name.
    ///
    /// - Parameter path: The path.
    /// - Returns: The key.
    static func key(_ path: String) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(path.utf8.count + 8)
        var text = ""
        var digits: [UInt8] = []
        func closeText() {
            key += text.lowercased().utf8
            text = ""
        }
        func closeDigits() {
            guard !digits.isEmpty else { return }
            let significant = digits.drop { $0 == UInt8(ascii: "0") }
            let length = UInt32(clamping: significant.count)
            key.append(UInt8(ascii: "0"))
            key += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            key += significant
            digits = []
        }
        for scalar in path.unicodeScalars {
            if scalar == "/" {
                closeText()
                closeDigits()
                key.append(0)
            } else if ("0"..."9").contains(scalar) {
                closeText()
                digits.append(UInt8(scalar.value))
            } else {
                closeDigits()
                text.unicodeScalars.append(scalar)
            }
        }
        closeText()
        closeDigits()
        return key
    }

    /// Whether the path `left` goes before `right`.
    static func areInIncreasingOrder(_ left: String, _ right: String) -> Bool {
        precedes((key(left), left), (key(right), right))
    }

    /// Keys first, then the paths' bytes.
    private static func precedes(_ left: ([UInt8], String), _ right: ([UInt8], String)) -> Bool {
        if left.0 != right.0 { return left.0.lexicographicallyPrecedes(right.0) }
        return left.1.utf8.lexicographicallyPrecedes(right.1.utf8)
    }

    /// The elements sorted by their paths (each key made once); equal paths keep their order.
    ///
    /// - Parameters:
    ///   - elements: The elements.
    ///   - path: An element's path.
    /// - Returns: The sorted elements.
    static func sorted<Element>(_ elements: some Sequence<Element>, by path: (Element) -> String) -> [Element] {
        elements.enumerated()
            .map { (key: (key(path($0.element)), path($0.element)), index: $0.offset, element: $0.element) }
            .sorted { precedes($0.key, $1.key) || (!precedes($1.key, $0.key) && $0.index < $1.index) }
            .map(\.element)
    }
}
