import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import Testing

@testable import NetRunnerServer

/// `POST /v1/models/{id}/pose` and `/segment`, and KServe's raw tensors on the same models, in
/// process on the repository's bundles, against Python's answers (`tools/pose/record.sh`:
/// ai_edge_litert, Pillow BILINEAR to the input, NEAREST back).
@Suite("Pose and segmentation through serve")
struct PoseSegmentRouteTests {
    static let poseModel = "movenet-single-pose-lightning-ptq"
    static let segmenter = "deeplabv3-mnv2-pascal-quant"
    static let squat = "Tests/Fixtures/Pose/squat.png"
    static let bird = "Tests/Fixtures/Segmentation/bird_segmentation.png"

    /// Python's keypoints on the squat photo: `[x, y, score]`, x and y in the image's pixels.
    static func pythonKeypoints() throws -> [[Double]] {
        try JSONDecoder().decode([[Double]].self, from: try Fixtures.data("Tests/Fixtures/Pose/squat.python.json"))
    }

    /// The share of pixels two masks give the same class.
    static func agreement(_ a: CategoryMask, _ b: CategoryMask) -> Double {
        guard a.width == b.width, a.height == b.height else { return 0 }
        return Double(zip(a.classIndices, b.classIndices).count { $0 == $1 }) / Double(a.classIndices.count)
    }

    /// The mask of a `/segment` answer (`inference_results.segmentation.mask`, a base64 PNG).
    static func mask(of line: [String: Any]) throws -> CategoryMask {
        let segmentation = try #require(
            (line["inference_results"] as? [String: Any])?["segmentation"] as? [String: Any])
        let mask = try #require(segmentation["mask"] as? [String: Any])
        #expect(mask["encoding"] as? String == "png")
        let data = try #require(Data(base64Encoded: mask["data"] as? String ?? ""))
        let decoded = try CategoryMask(pngData: data)
        #expect(decoded.width == mask["width"] as? Int && decoded.height == mask["height"] as? Int)
        return decoded
    }

    static func post(_ server: ServerSession, _ path: String, photo: String, accept: String? = nil) async throws
        -> ServerSession.Reply
    {
        try await server.request(
            path, method: "POST", body: try Fixtures.data(photo), contentType: "image/png",
            headers: accept.map { ["Accept": $0] } ?? [:])
    }

    @Test("pose answers 17 named keypoints in the image's pixels (Python's within 0.1%) and the skeleton's edges")
    func pose() async throws {
        try await ServerSession.with { server in
            let reply = try await Self.post(server, "/v1/models/\(Self.poseModel)/pose", photo: Self.squat)
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self).prefix(300))")
            let line = reply.json
            #expect(line["image_width"] as? Int == 500 && line["image_height"] as? Int == 610)
            let keypoints = try #require((line["inference_results"] as? [String: Any])?["pose"] as? [[String: Any]])
            #expect(keypoints.compactMap { $0["name"] as? String } == PoseEstimator.keypointNames)
            let python = try Self.pythonKeypoints()
            try #require(python.count == 17)
            var worst = 0.0
            var worstScore = 0.0
            for (keypoint, expected) in zip(keypoints, python) {
                let x = keypoint["x"] as? Double ?? .nan
                let y = keypoint["y"] as? Double ?? .nan
                worst = max(worst, abs(x - expected[0]) / 500, abs(y - expected[1]) / 610)
                worstScore = max(worstScore, abs((keypoint["score"] as? Double ?? .nan) - expected[2]))
            }
            print("serve pose: largest error vs Python \(worst) (normalised), score \(worstScore)")
            // The same input bytes as Python's (Pillow's BILINEAR, every pixel): the same answer, to float
            // rounding (2.5e-8 measured).
            #expect(worst <= 0.001 && worstScore <= 0.001, "position \(worst), score \(worstScore)")
            let skeleton = try #require(line["skeleton"] as? [[Int]])
            #expect(
                skeleton.count == 18 && skeleton.allSatisfy { $0.count == 2 && $0.allSatisfy { (0..<17).contains($0) } }
            )
            #expect(skeleton.map { [$0[0], $0[1]] } == PoseEstimator.skeleton.map { [$0.from, $0.to] })
            #expect(reply.headers["server-timing"]?.contains("inference;dur=") == true)
            let problems = try JSONSchemaCheck("docs/results-line.schema.json")
                .problems(ofLine: String(decoding: reply.body, as: UTF8.self))
            #expect(problems.isEmpty, "\(problems)")

            // The model list names each model's route, which the web page posts a photo to.
            for (model, task, verb) in [(Self.poseModel, "pose", "pose"), (Self.segmenter, "segmentation", "segment")] {
                let info = try await server.request("/v1/models/\(model)").json
                #expect(info["task"] as? String == task && info["verb"] as? String == verb, "\(info)")
            }

            // A picture is a segmenter's answer only: the pose stays JSON; the wrong route says the right one.
            let png = try await Self.post(
                server, "/v1/models/\(Self.poseModel)/pose", photo: Self.squat, accept: "image/png")
            #expect(png.status == 200 && png.headers["content-type"] == "application/json")
            let wrong = try await Self.post(server, "/v1/models/\(Self.poseModel)/segment", photo: Self.squat)
            #expect(wrong.status == 404)
            #expect((wrong.json["error_description"] as? String)?.contains("/v1/models/\(Self.poseModel)/pose") == true)
        }
    }

    @Test(
        "segment answers the areas and the mask as a PNG, Python's on >= 99.5% of pixels; Accept: image/png is the mask"
    )
    func segment() async throws {
        try await ServerSession.with { server in
            for (photo, name) in [(Self.bird, "bird_segmentation"), (Self.squat, "squat")] {
                let reply = try await Self.post(server, "/v1/models/\(Self.segmenter)/segment", photo: photo)
                #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self).prefix(300))")
                let mask = try Self.mask(of: reply.json)
                let python = try CategoryMask(
                    pngData: try Fixtures.data("Tests/Fixtures/Segmentation/\(name).python_mask.png"))
                let agreement = Self.agreement(mask, python)
                print("serve segment \(name): vs Python \(agreement)")
                #expect(agreement >= 0.995, "\(name): \(agreement)")
                #expect(reply.json["image_width"] as? Int == python.width)

                // The areas: each class's pixels, as Python counts them (within 0.5% of the image).
                let segmentation =
                    (reply.json["inference_results"] as? [String: Any])?["segmentation"] as? [String: Any]
                let areas = segmentation?["areas"] as? [[String: Any]] ?? []
                let summary =
                    try JSONSerialization.jsonObject(
                        with: try Fixtures.data("Tests/Fixtures/Segmentation/\(name).python.json")) as? [String: Any]
                let expected = summary?["areas"] as? [String: Int] ?? [:]
                let total = Double(python.width * python.height)
                #expect(areas.map { $0["pixels"] as? Int ?? 0 }.reduce(0, +) == python.width * python.height)
                for (index, pixels) in expected where Double(pixels) / total > 0.01 {
                    let found = areas.first { $0["index"] as? Int == Int(index) }?["pixels"] as? Int ?? 0
                    #expect(
                        abs(Double(found - pixels)) / total <= 0.005, "\(name) class \(index): \(found) vs \(pixels)")
                }
                let label = name == "squat" ? "person" : "bird"
                #expect(areas.first { $0["index"] as? Int != 0 }?["label"] as? String == label, "\(areas)")
                let problems = try JSONSchemaCheck("docs/results-line.schema.json")
                    .problems(ofLine: String(decoding: reply.body, as: UTF8.self))
                #expect(problems.isEmpty, "\(name): \(problems)")

                // Accept: image/png: the mask itself, the same one.
                let picture = try await Self.post(
                    server, "/v1/models/\(Self.segmenter)/segment", photo: photo, accept: "image/png, */*;q=0.5")
                #expect(picture.status == 200 && picture.headers["content-type"] == "image/png")
                #expect(try CategoryMask(pngData: picture.body) == mask)
                #expect(picture.headers["server-timing"]?.contains("inference;dur=") == true)
            }
        }
    }

    @Test("KServe raw tensors: MoveNet's keypoints and DeepLab's class map as Python finds them")
    func kserve() async throws {
        try await ServerSession.with { server in
            // MoveNet: the squat as the library prepares it (192 x 192, every byte), in the binary extension.
            let estimator = try PoseEstimator(
                modelPath: Fixtures.path("Models/movenet_single_pose_lightning_ptq.tflite"))
            let library = try estimator.run(.file(Fixtures.path(Self.squat)))
            let input = try estimator.inputImage()
            let output = try await Self.infer(server, Self.poseModel, pixels: input)
            let values = output.flatMap { $0 }
            try #require(values.count == 17 * 3, "\(values.count) values")
            let python = try Self.pythonKeypoints()
            var worst = 0.0
            for index in 0..<17 {
                let (y, x, score) = (values[3 * index], values[3 * index + 1], values[3 * index + 2])
                #expect(abs(Float(x * 500) - library.keypoints[index].x) < 1e-3, "the library's answer, \(index)")
                #expect(abs(Float(score) - library.keypoints[index].score) < 1e-6)
                worst = max(worst, abs(x - python[index][0] / 500), abs(y - python[index][1] / 610))
            }
            print("serve KServe pose: largest error vs Python \(worst) (normalised)")
            #expect(worst <= 0.001)

            // DeepLab: the bird is 513 x 513, the input's size: its pixels are the tensor.
            let bird = try ImageDecoder.decode(contentsOf: Fixtures.path(Self.bird)).pixels
            let classes = try await Self.infer(server, Self.segmenter, pixels: bird).flatMap { $0 }
            try #require(classes.count == 513 * 513, "\(classes.count) values")
            let mask = CategoryMask(width: 513, height: 513, classIndices: classes.map { UInt8(clamping: Int($0)) })
            let pythonMask = try CategoryMask(
                pngData: try Fixtures.data("Tests/Fixtures/Segmentation/bird_segmentation.python_mask.png"))
            let agreement = Self.agreement(mask, pythonMask)
            print("serve KServe segment bird: vs Python \(agreement)")
            #expect(agreement >= 0.995)
        }
    }

    /// A KServe v2 inference of an RGB picture as the model's one uint8 input (the binary tensor
    /// extension), its first output's values as JSON, in rows of the output's last dimension.
    static func infer(_ server: ServerSession, _ model: String, pixels: PixelBuffer) async throws -> [[Double]] {
        let rgb = pixels.format == .rgb24 ? pixels : pixels.converted(to: .rgb24)
        var bytes = Data()
        rgb.withUnsafeBytes { raw in
            for y in 0..<rgb.height {
                bytes.append(contentsOf: raw[(y * rgb.bytesPerRow)..<(y * rgb.bytesPerRow + 3 * rgb.width)])
            }
        }
        let metadata = try await server.request("/v2/models/\(model)").json
        let input = try #require((metadata["inputs"] as? [[String: Any]])?.first?["name"] as? String)
        let header = Data(
            (#"{"inputs":[{"name":"\#(input)","shape":[1,\#(rgb.height),\#(rgb.width),3],"datatype":"UINT8","#
                + #""parameters":{"binary_data_size":\#(bytes.count)}}]}"#).utf8)
        let reply = try await server.request(
            "/v2/models/\(model)/infer", method: "POST", body: header + bytes, contentType: "application/octet-stream",
            headers: ["Inference-Header-Content-Length": String(header.count)])
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self).prefix(300))")
        let output = try #require((reply.json["outputs"] as? [[String: Any]])?.first)
        let shape = output["shape"] as? [Int] ?? []
        let data = (output["data"] as? [Any] ?? []).map { ($0 as? NSNumber)?.doubleValue ?? .nan }
        let row = max(shape.last ?? 1, 1)
        return stride(from: 0, to: data.count, by: row).map { Array(data[$0..<min($0 + row, data.count)]) }
    }
}
