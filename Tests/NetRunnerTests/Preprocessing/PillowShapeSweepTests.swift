import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import TensorFlowLite
import Testing

/// The model input of every fitting (stretch, centre square, letterbox) against Pillow's, byte
/// for byte, with a photo resized by Pillow to 81 shapes: landscape and portrait, odd sizes,
/// one pixel either side of the input's, smaller than the input (enlarging) and larger
/// (shrinking), into a square input and a non-square one. Pillow 13 resamples the columns first
/// where the height shrinks much more than the width (`ResampleCoefficients.runsVerticalFirst`);
/// while NetRunner always ran the rows first, 77 of these 486 inputs differed, all from tall
/// shapes: the stretch of 25 shapes to 224x224 and of 20 to 193x257, the letterbox of 32, and
/// no centre square.
///
/// The reference is computed now by `tools/images/pillow_resize_sweep.py` in `.venv-test`
/// (Pillow pinned by tools/serve/requirements.txt), every shape in one call.
@Suite("Model inputs as Pillow's on every shape")
struct PillowShapeSweepTests {
    static let sides = [31, 150, 223, 224, 225, 300, 401, 600, 1000]
    static let inputs = [PixelSize.square(224), PixelSize(width: 193, height: 257)]
    /// In the script's order.
    static let croppings: [ImagePreprocessing.Cropping] = [.stretch, .centerSquare, .letterbox]

    @Test("Stretch, centre square and letterbox from 81 shapes equal Pillow's, byte for byte")
    func sweep() throws {
        let python = Fixtures.path(".venv-test/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-test-python.sh")
        let folder = try TemporaryFolder(prefix: "netrunner-resize-sweep")
        defer { folder.remove() }
        let shapes = Self.sides.flatMap { height in Self.sides.map { PixelSize(width: $0, height: height) } }
        let spec: [String: [[Int]]] = [
            "shapes": shapes.map { [$0.width, $0.height] }, "inputs": Self.inputs.map { [$0.width, $0.height] },
        ]
        let run = try ProcessResult.run(
            python,
            [
                Fixtures.path("tools/images/pillow_resize_sweep.py"),
                Fixtures.path("Tests/Fixtures/Photos/test/eagle.jpg"),
                folder.path(""), String(decoding: try JSONEncoder().encode(spec), as: UTF8.self),
            ])
        try #require(run.status == 0, "\(run.stderr.suffix(2000))")
        let sources = try Data(contentsOf: URL(fileURLWithPath: folder.path("sources.rgb")))
        let reference = try Data(contentsOf: URL(fileURLWithPath: folder.path("reference.rgb")))
        // One tensorizer per input and fitting for all shapes, as a server keeps one per model.
        let tensorizers = try Self.inputs.map { input in
            try Self.croppings.map { cropping in
                try ImageTensorizer(
                    preprocessing: ImagePreprocessing(
                        inputIndex: 0, size: input, channels: 3, tensorType: .uInt8, quantization: nil,
                        normalization: nil, channelOrder: .rgb, cropping: cropping, resizeMethod: .bilinear))
            }
        }
        var (sourceOffset, referenceOffset) = (0, 0)
        var differing: [String] = []
        for shape in shapes {
            let count = shape.width * shape.height * 3
            try #require(sourceOffset + count <= sources.count, "the script wrote too few sources")
            let pixels = try PixelBuffer(
                width: shape.width, height: shape.height, format: .rgb24,
                bytes: [UInt8](sources.subdata(in: sourceOffset..<(sourceOffset + count))))
            sourceOffset += count
            for (input, row) in zip(Self.inputs, tensorizers) {
                for (cropping, tensorizer) in zip(Self.croppings, row) {
                    let size = input.width * input.height * 3
                    try #require(referenceOffset + size <= reference.count, "the script wrote too few inputs")
                    let expected = reference.subdata(in: referenceOffset..<(referenceOffset + size))
                    referenceOffset += size
                    try tensorizer.prepare(pixels)
                    // Data's == compares the bytes at once; the count only for a failure.
                    guard tensorizer.input != expected else { continue }
                    let unequal = zip(tensorizer.input, expected).count { $0 != $1 }
                    differing.append(
                        "\(shape.width)x\(shape.height) \(cropping) to \(input.width)x\(input.height): "
                            + "\(unequal) of \(size) values")
                }
            }
        }
        #expect(sourceOffset == sources.count && referenceOffset == reference.count)
        let total = shapes.count * Self.inputs.count * Self.croppings.count
        let pillow = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            differing.isEmpty,
            "\(differing.count) of \(total) inputs differ from Pillow \(pillow)'s: \(differing.joined(separator: "; "))"
        )
    }
}
