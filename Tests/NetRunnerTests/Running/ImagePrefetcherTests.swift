import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

@Suite("ImagePrefetcher")
struct ImagePrefetcherTests {
    static let photos = ["chelsea.png", "coffee.jpg"].map { Fixtures.path("Tests/Fixtures/Photos/test/" + $0) }

    static func preprocessing(normalization: ImagePreprocessing.Normalization?) -> ImagePreprocessing {
        ImagePreprocessing(
            inputIndex: 0, size: PixelSize(width: 8, height: 8), channels: 3, tensorType: .float32,
            quantization: nil, normalization: normalization, channelOrder: .rgb, cropping: .centerSquare,
            resizeMethod: .bilinear)
    }

    @Test("Images come back in order, decoded and prepared, with their timings")
    func prepared() throws {
        let prefetcher = ImagePrefetcher(
            paths: Self.photos, preprocessing: Self.preprocessing(normalization: .zeroToOne), lookahead: 1)
        var paths: [String] = []
        while let item = prefetcher.next() {
            paths.append(item.path)
            #expect(try item.prepared.get().input.count == 8 * 8 * 3 * 4)
            #expect(try item.image.get().pixels.size.width > 8)
        }
        #expect(paths == Self.photos)
    }

    @Test("A preprocessing that cannot be applied reaches every item as its own error, not as a decoding error")
    func tensorizerError() throws {
        let broken = Self.preprocessing(normalization: ImagePreprocessing.Normalization(mean: [0], std: [0]))
        let prefetcher = ImagePrefetcher(paths: Self.photos, preprocessing: broken)
        var count = 0
        while let item = prefetcher.next() {
            count += 1
            #expect(throws: NetRunnerError.self) { try item.prepared.get() }
            #expect(throws: Never.self) { try item.image.get() }
            if case .failure(let error) = item.prepared { #expect(!"\(error)".contains("empty")) }
        }
        #expect(count == 2)
        let unprepared = ImagePrefetcher(paths: Self.photos)
        let first = try #require(unprepared.next())
        #expect(
            throws: NetRunnerError.invalidOption(
                name: "preprocessing", reason: "the prefetcher was given none, so it prepares no input")
        ) {
            try first.prepared.get()
        }
    }
}
