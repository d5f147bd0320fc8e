import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunner

/// The face detector on committed portraits, against the reference in
/// Tests/Fixtures/DetectionReference (numpy re-implementation of MediaPipe's post-processing,
/// itself checked against MediaPipe's FaceDetector).
@Suite("Face detection on real photos")
struct ObjectDetectorTests {
    struct Reference: Decodable {
        struct Photo: Decodable {
            struct Found: Decodable {
                var score: Float
                var boxPixels: [Float]
                enum CodingKeys: String, CodingKey {
                    case score
                    case boxPixels = "box_px"
                }
            }
            struct SSD: Decodable {
                var count: Int
                var boxesPixels: [[Float]]
                var scores: [Float]
                enum CodingKeys: String, CodingKey {
                    case count, scores
                    case boxesPixels = "boxes_px"
                }
            }
            var file: String
            var width: Int
            var height: Int
            var detections: [Found]
            var ssdModel: SSD?
            enum CodingKeys: String, CodingKey {
                case file, width, height
                case detections = "detections_weighted_nms"
                case ssdModel = "ssd_model"
            }
        }
        var photos: [Photo]
    }

    static func reference() throws -> Reference {
        try JSONDecoder().decode(
            Reference.self, from: try Fixtures.data("Tests/Fixtures/DetectionReference/reference.json"))
    }

    func box(_ values: [Float]) -> BoundingBox {
        BoundingBox(minX: values[0], minY: values[1], maxX: values[2], maxY: values[3])
    }

    @Test("BlazeFace finds every reference face at IoU >= 0.8, and none in the coffee photo")
    func blazeFace() throws {
        let detector = try ObjectDetector(modelPath: Fixtures.path("Models/face_detection_short_range.tflite"))
        #expect(detector.preprocessing.cropping == .letterbox)
        for photo in try Self.reference().photos {
            let result = try detector.detect(fileAt: Fixtures.path(photo.file))
            #expect(result.imageWidth == photo.width && result.imageHeight == photo.height)
            #expect(result.detections.count == photo.detections.count, "\(photo.file)")
            for (found, expected) in zip(result.detections, photo.detections) {
                let iou = found.boundingBox.intersectionOverUnion(with: box(expected.boxPixels))
                #expect(iou >= 0.8, "\(photo.file): IoU \(iou)")
                #expect(abs(found.score - expected.score) < 0.02, "\(photo.file)")
                #expect(found.keypoints.count == 6)
            }
        }
    }

    @Test(
        "The SSD variant's four outputs are resolved by name, and its boxes match at IoU >= 0.8",
        arguments: [false, true])
    func ssd(fromBundle: Bool) throws {
        var options = ObjectDetector.Options()
        options.cropping = .letterbox
        // Its bundle's model.json says "crop": "letterbox", so the default options are right.
        let detector =
            fromBundle
            ? try ObjectDetector(modelPath: Fixtures.path("Models/bundles/face_detection_short_range_ssd.tiobundle"))
            : try ObjectDetector(
                modelPath: Fixtures.path("Models/face_detection_short_range_ssd.tflite"),
                labelsPath: Fixtures.path("Models/face_labels.txt"), options: options)
        #expect(detector.preprocessing.cropping == .letterbox)
        for photo in try Self.reference().photos {
            let expected = try #require(photo.ssdModel)
            let result = try detector.detect(fileAt: Fixtures.path(photo.file))
            let kept = zip(expected.boxesPixels, expected.scores).filter { $0.1 >= 0.5 }
            #expect(result.detections.count == kept.count, "\(photo.file)")
            for (found, (expectedBox, _)) in zip(result.detections, kept) {
                let iou = found.boundingBox.intersectionOverUnion(with: box(expectedBox))
                #expect(iou >= 0.8, "\(photo.file): IoU \(iou)")
                #expect(found.categories.first?.label == "face")
            }
        }
    }

    @Test("Anchors equal the reference's 896 anchors exactly")
    func anchors() throws {
        let expected = try Fixtures.data("Tests/Fixtures/DetectionReference/anchors.bin")
        let values = Numerics.floats(expected)
        let anchors = SSDAnchors(options: .blazeFaceShortRange).anchors
        #expect(values.count == anchors.count * 4)
        for (index, anchor) in anchors.enumerated() {
            #expect(
                [anchor.xCenter, anchor.yCenter, anchor.width, anchor.height]
                    == Array(values[(4 * index)..<(4 * index + 4)]))
        }
    }

    @Test("Boxes map back through EXIF rotation and JPEG downscaling to the original pixels")
    func mappingBack() throws {
        let detector = try ObjectDetector(modelPath: Fixtures.path("Models/face_detection_short_range.tflite"))
        let path = Fixtures.path("Tests/Fixtures/Photos/test/grace_hopper.jpg")
        let full = try detector.detect(image: try ImageDecoder.decode(contentsOf: path))
        var small = DecodingOptions()
        small.minimumSize = PixelSize(width: 128, height: 128)
        let scaled = try detector.detect(image: try ImageDecoder.decode(contentsOf: path, options: small))
        let a = try #require(full.detections.first).boundingBox
        let b = try #require(scaled.detections.first).boundingBox
        #expect(a.intersectionOverUnion(with: b) >= 0.85)
        #expect(scaled.imageWidth == 512 && scaled.imageHeight == 600)
    }

    @Test("A classifier is not a detector: a clear error")
    func notADetector() {
        #expect {
            try ObjectDetector(modelPath: Fixtures.path(Fixtures.MobileNet.uint8))
        } throws: { error in
            guard case NetRunnerError.unsupportedOutputs = error else { return false }
            return true
        }
    }
}

extension ObjectDetector {
    fileprivate func detect(image: DecodedImage) throws -> DetectionResult { try run(image) }
}
