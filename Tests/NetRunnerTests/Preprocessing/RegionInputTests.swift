import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

/// The model input made from the centre square a region decode keeps is byte for byte the one
/// a full decode gives, and maps boxes back to the same place: the default decoding options
/// of a centre-crop model decode only that square, and leave a turned photo as stored for the
/// tensorizer to turn while it resizes (the full decode here is turned first, at full size).
@Suite("Model inputs from region decoding")
struct RegionInputTests {
    static let files: [String] =
        [
            "wide_420", "wide_444_progressive", "wide_gray", "tall_422_progressive", "slim_420",
            "wide_420_orientation6", "wide_422_orientation8", "tall_420_orientation7", "tall_444_orientation3",
        ].map { "Tests/Fixtures/ImageReference/variants/\($0).jpg" }
        + ["Tests/Fixtures/ImageReference/cmyk.jpg", "Tests/Fixtures/Photos/test/coffee.jpg"]

    /// A uint8 input (raw bytes), a float input in [-1, 1] with BGR order, and a one-channel input.
    static let preprocessings: [ImagePreprocessing] = [
        ImagePreprocessing(
            inputIndex: 0, size: .square(24), channels: 3, tensorType: .uInt8, quantization: nil, normalization: nil,
            channelOrder: .rgb, cropping: .centerSquare, resizeMethod: .bilinear),
        ImagePreprocessing(
            inputIndex: 0, size: PixelSize(width: 40, height: 30), channels: 3, tensorType: .float32,
            quantization: nil, normalization: .minusOneToOne, channelOrder: .bgr, cropping: .centerSquare,
            resizeMethod: .bilinear),
        ImagePreprocessing(
            inputIndex: 0, size: .square(17), channels: 1, tensorType: .uInt8, quantization: nil, normalization: nil,
            channelOrder: .rgb, cropping: .centerSquare, resizeMethod: .bilinear),
        ImagePreprocessing(
            inputIndex: 0, size: PixelSize(width: 20, height: 36), channels: 3, tensorType: .uInt8, quantization: nil,
            normalization: nil, channelOrder: .rgb, cropping: .stretch, resizeMethod: .area),
    ]

    @Test("Same input bytes and same transform as from the full decode", arguments: files)
    func sameInput(file: String) throws {
        let data = try Fixtures.data(file)
        for preprocessing in Self.preprocessings {
            var options = preprocessing.decodingOptions(maximumPixelCount: 1 << 30)
            #expect(options.region == (preprocessing.cropping == .centerSquare ? .centerSquare : .whole))
            #expect(options.defersOrientation)
            let part = try ImageDecoder.decode(data: data, options: options, source: file)
            #expect(part.isUpright == (part.orientation == .up), "\(file)")
            options.region = .whole
            options.defersOrientation = false
            let whole = try ImageDecoder.decode(data: data, options: options, source: file)
            let fromPart = try ImageTensorizer(preprocessing: preprocessing)
            let fromWhole = try ImageTensorizer(preprocessing: preprocessing)
            let partTransform = try fromPart.prepare(part)
            let wholeTransform = try fromWhole.prepare(whole)
            let same = fromPart.input == fromWhole.input  // a Bool: a diff of two tensors takes minutes
            #expect(same, "\(file) \(preprocessing.size)")
            #expect(partTransform == wholeTransform, "\(file) \(preprocessing.size)")
            #expect(part.orientedSize == whole.orientedSize, "\(file)")
        }
    }

    @Test("A letterboxing or stretching model decodes every pixel")
    func wholeForOtherCroppings() {
        for cropping in [ImagePreprocessing.Cropping.letterbox, .stretch] {
            let preprocessing = ImagePreprocessing(
                inputIndex: 0, size: .square(24), channels: 3, tensorType: .uInt8, quantization: nil,
                normalization: nil, channelOrder: .rgb, cropping: cropping, resizeMethod: .bilinear)
            #expect(preprocessing.decodingOptions(maximumPixelCount: 1 << 20).region == .whole)
        }
    }

    @Test("A region that lacks the part a preprocessing needs is refused, not stretched")
    func refusesTooSmallRegion() throws {
        let file = "Tests/Fixtures/ImageReference/variants/wide_420.jpg"
        let part = try ImageDecoder.decode(
            data: try Fixtures.data(file), options: DecodingOptions(region: .centerSquare), source: file)
        let stretch = ImagePreprocessing(
            inputIndex: 0, size: .square(24), channels: 3, tensorType: .uInt8, quantization: nil, normalization: nil,
            channelOrder: .rgb, cropping: .stretch, resizeMethod: .bilinear)
        #expect(throws: ImageError.self) { try ImageTensorizer(preprocessing: stretch).prepare(part) }
    }

    /// The fast path decodes at a power-of-two DCT scale that keeps at least 5/4 of the input's
    /// size in the square, never straight to the input's size.
    @Test("Scaling while decoding keeps 5/4 of the input's size in the square, by powers of two")
    func fastPathKeepsFiveQuarters() throws {
        let data = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")  // 600x400
        // input side, numerator: 96 needs 120 (3/8 would keep 150 but runs the plain-C IDCT; 1/4
        // keeps 100), 40 needs 50 (1/8 keeps exactly 50), 200 needs 250 (1/2 keeps 200).
        for (side, numerator) in [(96, 4), (40, 1), (200, 8)] {
            let preprocessing = ImagePreprocessing(
                inputIndex: 0, size: .square(side), channels: 3, tensorType: .uInt8, quantization: nil,
                normalization: nil, channelOrder: .rgb, cropping: .centerSquare, resizeMethod: .bilinear)
            let options = preprocessing.decodingOptions(maximumPixelCount: 1 << 30, scalesWhileDecoding: true)
            #expect(options.scalesByPowersOfTwo)
            let image = try ImageDecoder.decode(data: data, options: options)
            #expect(image.scaleNumerator == numerator, "input \(side)")
            #expect(min(image.fullSize.width, image.fullSize.height) >= (5 * side + 3) / 4 || numerator == 8)
        }
    }

    /// A HEIC's thumbnail stands in on the fast path where it covers the input in the part kept.
    @Test("Scaling while decoding takes a HEIC's thumbnail of at least the input's size in the square")
    func fastPathTakesThumbnail() throws {
        let data = try Fixtures.data("Tests/Fixtures/Thumbnails/heic_thumbnail.heic")  // 480x320, a 336x224 thumbnail
        for (side, cropping, thumbnail) in [
            (224, ImagePreprocessing.Cropping.centerSquare, true), (225, .centerSquare, false), (224, .stretch, true),
        ] {
            let preprocessing = ImagePreprocessing(
                inputIndex: 0, size: .square(side), channels: 3, tensorType: .uInt8, quantization: nil,
                normalization: nil, channelOrder: .rgb, cropping: cropping, resizeMethod: .bilinear)
            let fast = try ImageDecoder.decode(
                data: data,
                options: preprocessing.decodingOptions(maximumPixelCount: 1 << 30, scalesWhileDecoding: true))
            #expect(
                fast.fullSize == (thumbnail ? PixelSize(width: 336, height: 224) : PixelSize(width: 480, height: 320)))
            #expect(fast.orientedSize == PixelSize(width: 480, height: 320))
            let exact = try ImageDecoder.decode(
                data: data, options: preprocessing.decodingOptions(maximumPixelCount: 1 << 30))
            #expect(exact.fullSize == PixelSize(width: 480, height: 320), "the exact path never takes it")
        }
    }
}
