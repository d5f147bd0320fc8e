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
        try await post(server, path, body: try Fixtures.data(photo), accept: accept)
    }

    static func post(_ server: ServerSession, _ path: String, body: Data, accept: String? = nil) async throws
        -> ServerSession.Reply
    {
        try await server.request(
            path, method: "POST", body: body, contentType: "image/png", headers: accept.map { ["Accept": $0] } ?? [:])
    }

    /// The areas of a `/segment` answer, `(index, pixels)` largest first.
    static func areas(of line: [String: Any]) -> [[Int]] {
        let segmentation = (line["inference_results"] as? [String: Any])?["segmentation"] as? [String: Any]
        return (segmentation?["areas"] as? [[String: Any]] ?? []).map {
            [$0["index"] as? Int ?? -1, $0["pixels"] as? Int ?? -1]
        }
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
        "segment?mask=image answers the areas and the mask as a PNG, Python's on >= 99.5% of pixels; Accept: image/png is the mask"
    )
    func segment() async throws {
        try await ServerSession.with { server in
            for (photo, name) in [(Self.bird, "bird_segmentation"), (Self.squat, "squat")] {
                let reply = try await Self.post(
                    server, "/v1/models/\(Self.segmenter)/segment?mask=image", photo: photo)
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
                    server, "/v1/models/\(Self.segmenter)/segment?mask=image", photo: photo,
                    accept: "image/png, */*;q=0.5")
                #expect(picture.status == 200 && picture.headers["content-type"] == "image/png")
                #expect(try CategoryMask(pngData: picture.body) == mask)
                #expect(picture.headers["server-timing"]?.contains("inference;dur=") == true)
            }
        }
    }

    @Test(
        "segment's mask is the model's 513x513 by default, the photo's with mask=image (the library's), the same areas"
    )
    func maskResolution() async throws {
        // The squat photo, and the same photo twice its size (each pixel doubled): 500x610 and 1000x1220.
        let squat = try ImageDecoder.decode(contentsOf: Fixtures.path(Self.squat)).pixels.converted(to: .rgb24)
        var doubled = [UInt8](repeating: 0, count: 1000 * 1220 * 3)
        squat.withUnsafeBytes { bytes in
            for y in 0..<1220 {
                for x in 0..<1000 {
                    for c in 0..<3 {
                        doubled[(y * 1000 + x) * 3 + c] = bytes[(y / 2) * squat.bytesPerRow + (x / 2) * 3 + c]
                    }
                }
            }
        }
        let large = try PixelBuffer(width: 1000, height: 1220, format: .rgb24, bytes: doubled).pngData()
        // The library's answers (the CLI's): the photo-size mask and the areas.
        var options = ImageTask.Options()
        options.kind = .segmentation
        let library = try ImageTask(
            modelAt: Fixtures.path("Models/bundles/deeplabv3_mnv2_pascal_quant.tiobundle"), options: options)
        let photos = try [("squat", try Fixtures.data(Self.squat), 500, 610), ("squat x2", large, 1000, 1220)].map {
            let answer = try #require(try library.run(.data($0.1)).result as? SegmentationResult)
            return ($0.0, $0.1, $0.2, $0.3, answer.categoryMask, answer.areas.map { [$0.index, $0.pixels] })
        }
        try await ServerSession.with { server in
            let route = "/v1/models/\(Self.segmenter)/segment"
            for (name, photo, width, height, libraryMask, libraryAreas) in photos {
                // The default: the model's output resolution, the photo's size beside it.
                let reply = try await Self.post(server, route, body: photo)
                #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self).prefix(300))")
                let small = try Self.mask(of: reply.json)
                #expect(small.width == 513 && small.height == 513, "\(name): \(small.width)x\(small.height)")
                #expect(reply.json["image_width"] as? Int == width && reply.json["image_height"] as? Int == height)
                let problems = try JSONSchemaCheck("docs/results-line.schema.json")
                    .problems(ofLine: String(decoding: reply.body, as: UTF8.self))
                #expect(problems.isEmpty, "\(name): \(problems)")

                // mask=image: the photo's size, the library's (and the CLI's) mask.
                let full = try await Self.post(server, route + "?mask=image", body: photo)
                #expect(full.status == 200)
                let mask = try Self.mask(of: full.json)
                #expect(mask.width == width && mask.height == height)
                let sameAsLibrary = mask == libraryMask
                #expect(sameAsLibrary, "\(name): mask=image is not the library's mask")
                #expect(Self.areas(of: full.json) == libraryAreas)

                // The model's mask scaled onto the photo by nearest neighbour is the photo-size mask,
                // and the areas are the photo's pixels either way.
                let scaledBack = small.resized(to: PixelSize(width: width, height: height)) == mask
                #expect(scaledBack, "\(name): the model's mask scaled to the photo is not the photo-size mask")
                #expect(Self.areas(of: reply.json) == Self.areas(of: full.json), "\(name)")
                #expect(Self.areas(of: reply.json).map { $0[1] }.reduce(0, +) == width * height)
                // Where the photo is larger than the model's output, the photo-size mask sampled back at
                // the centre of each model cell is the model's mask.
                if width > 513 && height > 513 {
                    var same = 0
                    for y in 0..<513 {
                        for x in 0..<513 {
                            let (px, py) = ((2 * x + 1) * width / (2 * 513), (2 * y + 1) * height / (2 * 513))
                            if mask[px, py] == small[x, y] { same += 1 }
                        }
                    }
                    #expect(same == 513 * 513, "\(name): \(513 * 513 - same) model cells differ")
                }

                // Accept: image/png: the model's mask, the photo's size in headers; mask=image the photo's.
                let png = try await Self.post(server, route, body: photo, accept: "image/png")
                #expect(png.status == 200 && png.headers["content-type"] == "image/png")
                let pngIsMask = try CategoryMask(pngData: png.body) == small
                #expect(pngIsMask, "\(name): the PNG is not the JSON's mask")
                #expect(png.headers["image-width"] == "\(width)" && png.headers["image-height"] == "\(height)")
                let fullPNG = try await Self.post(server, route + "?mask=image", body: photo, accept: "image/png")
                let fullPNGIsMask = try CategoryMask(pngData: fullPNG.body) == mask
                #expect(fullPNGIsMask, "\(name): the PNG is not the JSON's mask")
                #expect(fullPNG.headers["image-width"] == "\(width)")
            }

            // mask=model said outright is the default; another value is a 400 naming both.
            let model = try await Self.post(server, route + "?mask=model", photo: Self.squat)
            #expect(try Self.mask(of: model.json).width == 513)
            for value in ["full", "", "IMAGE", "model,image"] {
                let bad = try await Self.post(server, route + "?mask=\(value)", photo: Self.squat)
                let message = bad.json["error_description"] as? String ?? ""
                #expect(bad.status == 400, "mask=\(value): \(bad.status)")
                #expect(message.contains("mask must be model") && message.contains("image"), "\(message)")
            }
            // Another task's answer has no mask: the option is checked, and otherwise ignored.
            let pose = try await Self.post(server, "/v1/models/\(Self.poseModel)/pose?mask=image", photo: Self.squat)
            #expect(pose.status == 200)
            let badPose = try await Self.post(server, "/v1/models/\(Self.poseModel)/pose?mask=x", photo: Self.squat)
            #expect(badPose.status == 400)
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
