import NetRunner
import NetRunnerImage
import Testing

@Suite("Annotator")
struct AnnotatorTests {
    static func detection(_ box: BoundingBox, classIndex: Int = 2) -> Detection {
        Detection(
            boundingBox: box, categories: [Category(index: classIndex, score: 0.9, label: "face", displayName: nil)])
    }

    @Test("A box is drawn in its class's colour, with its label above it")
    func drawsBoxAndLabel() throws {
        let image = try PixelBuffer(width: 200, height: 150, format: .rgb24)
        let annotated = try Annotator.draw(
            [Self.detection(BoundingBox(minX: 50, minY: 60, maxX: 150, maxY: 140))], on: image)
        let color = Annotator.color(forClass: 2)
        let bytes = annotated.packedBytes
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(bytes[(y * 200 + x) * 3..<(y * 200 + x) * 3 + 3]) }
        #expect(pixel(50, 100) == [color.red, color.green, color.blue])
        #expect(pixel(100, 100) == [0, 0, 0])
        #expect(pixel(52, 55) == [color.red, color.green, color.blue] || pixel(52, 55) == [255, 255, 255])
    }

    @Test("Boxes and keypoints with non-finite or huge coordinates are clipped, never trap")
    func hostileCoordinates() throws {
        let image = try PixelBuffer(width: 32, height: 32, format: .rgb24)
        var wild = Self.detection(BoundingBox(minX: -.infinity, minY: .nan, maxX: 1e30, maxY: .infinity))
        wild.keypoints = [Keypoint(x: .nan, y: 1e38), Keypoint(x: -1e38, y: 5)]
        let annotated = try Annotator.draw(
            [wild, Self.detection(BoundingBox(minX: 1e9, minY: 1e9, maxX: 2e9, maxY: 2e9))], on: image)
        #expect(annotated.size == image.size)
    }
}
