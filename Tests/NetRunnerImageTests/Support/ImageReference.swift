import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// The Pillow reference recorded by `tools/images/record_image_reference.py`.
struct ImageReference: Decodable {
    struct Sample: Decodable {
        var x: Int
        var y: Int
        var value: [Int]
    }

    struct Draft: Decodable {
        var width: Int
        var height: Int
        var scaleNumerator: Int
        var samples: [Sample]
        var center224: String
    }

    struct Photo: Decodable, CustomTestStringConvertible {
        var file: String
        var format: String
        var mode: String
        var width: Int
        var height: Int
        var samples: [Sample]
        var center224: String?
        var draft: Draft?

        var testDescription: String { (file as NSString).lastPathComponent }
    }

    struct Region: Decodable, CustomTestStringConvertible {
        var file: String
        var x: Int
        var y: Int
        var width: Int
        var height: Int
        var outWidth: Int
        var outHeight: Int

        var testDescription: String { file }
    }

    struct Orientation: Decodable, CustomTestStringConvertible {
        var file: String
        var orientation: Int
        var width: Int
        var height: Int
        var samples: [Sample]

        var testDescription: String { file }
    }

    struct PNGVariant: Decodable, CustomTestStringConvertible {
        var file: String
        var width: Int
        var height: Int
        var colorType: Int
        var bitDepth: Int
        var interlaced: Bool
        /// The expected pixels as 8-bit RGBA, in hex.
        var rgba: String

        var testDescription: String { file }

        var expectedRGBA: [UInt8] {
            var bytes: [UInt8] = []
            var index = rgba.startIndex
            while index < rgba.endIndex {
                let next = rgba.index(index, offsetBy: 2)
                bytes.append(UInt8(rgba[index..<next], radix: 16) ?? 0)
                index = next
            }
            return bytes
        }
    }

    var pillow: String
    var photos: [Photo]
    var regions: [Region]
    var orientations: [Orientation]
    var pngVariants: [PNGVariant]
    var cmyk: CMYK?

    struct CMYK: Decodable {
        var file: String
        var width: Int
        var height: Int
        var samples: [Sample]
    }

    static let folder = "Tests/Fixtures/ImageReference/"

    /// The recorded reference; an empty one if it cannot be read (the tests then fail on counts).
    static let shared: ImageReference = {
        do {
            return try JSONDecoder().decode(ImageReference.self, from: Fixtures.data(folder + "reference.json"))
        } catch {
            return ImageReference(
                pillow: "missing: \(error)", photos: [], regions: [], orientations: [], pngVariants: [], cmyk: nil)
        }
    }()

    static var testPhotos: [Photo] { shared.photos.filter { $0.center224 != nil } }
    static var jpegTestPhotos: [Photo] { shared.photos.filter { $0.draft != nil } }

    /// The bytes of a reference file in the ImageReference folder.
    static func bytes(_ name: String) throws -> [UInt8] {
        try [UInt8](Fixtures.data(folder + name))
    }
}

/// How two byte arrays of equal length differ.
struct ByteDifference: CustomStringConvertible {
    var maximum = 0
    var countOverOne = 0
    var countNonZero = 0
    var total = 0
    var sumAbsolute = 0

    init(_ a: [UInt8], _ b: [UInt8]) {
        total = min(a.count, b.count)
        for index in 0..<total {
            let difference = abs(Int(a[index]) - Int(b[index]))
            maximum = max(maximum, difference)
            if difference > 1 { countOverOne += 1 }
            if difference > 0 { countNonZero += 1 }
            sumAbsolute += difference
        }
    }

    /// The fraction of values within 1.
    var withinOne: Double { total == 0 ? 0 : Double(total - countOverOne) / Double(total) }
    var meanAbsolute: Double { total == 0 ? 0 : Double(sumAbsolute) / Double(total) }

    var description: String {
        "max \(maximum), \(countNonZero) of \(total) differ, \(countOverOne) by more than 1, mean \(meanAbsolute)"
    }
}
