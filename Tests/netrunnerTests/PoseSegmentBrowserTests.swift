import Foundation
import NetRunnerTestSupport
import Testing

/// serve's web page with MoveNet, DeepLab and Coral's embedding extractor in headless Chromium
/// (`tools/pose/browser_check.py`): the live camera (a fake one playing a clip of the squat
/// photo) with the skeleton drawn on the person, a picked photo's mask and legend, the album's
/// captions and opened photos, and two photos' embeddings compared, each against Python's answers
/// on the photo (`tools/pose/record.sh`, `tools/embedding/record.sh`).
@Suite("pose and segmentation on the web page")
struct PoseSegmentBrowserTests {
    /// Python's keypoints on the squat photo, `[x, y, score]` in its pixels.
    static func python() throws -> [[Double]] {
        try JSONDecoder().decode([[Double]].self, from: try Fixtures.data("Tests/Fixtures/Pose/squat.python.json"))
    }

    /// Python's pixels of a class on a photo (`Tests/Fixtures/Segmentation/NAME.python.json`).
    static func pythonArea(_ name: String, _ index: Int) throws -> (pixels: Int, total: Int) {
        let summary = try #require(
            try JSONSerialization.jsonObject(with: try Fixtures.data("Tests/Fixtures/Segmentation/\(name).python.json"))
                as? [String: Any])
        let areas = summary["areas"] as? [String: Int] ?? [:]
        return (areas[String(index)] ?? -1, (summary["width"] as? Int ?? 0) * (summary["height"] as? Int ?? 0))
    }

    /// Whether a drawn box (`[left, top, right, bottom]`, canvas pixels) is Python's keypoints'
    /// box, grown by the dots' radius, within 4% of the photo's side (the camera's frames are
    /// JPEGs of a YUV 4:2:0 clip).
    static func isPythonPose(_ drawn: Any?) throws -> Bool {
        let box = try #require(((drawn as? [String: Any])?["box"] as? [Int])?.map(Double.init))
        let points = try python()
        let radius = 500.0 / 90
        let (xs, ys) = (points.map { $0[0] }, points.map { $0[1] })
        let expected = [
            (xs.min() ?? .nan) - radius, (ys.min() ?? .nan) - radius, (xs.max() ?? .nan) + radius,
            (ys.max() ?? .nan) + radius,
        ]
        return box.count == 4 && zip(box, expected).allSatisfy { abs($0 - $1) <= 0.04 * 610 }
    }

    @Test("Camera, photo and album: the skeleton on the person, the mask and its legend as Python's")
    func page() async throws {
        _ = try BrowserPage.python()
        let folder = try TemporaryFolder(prefix: "netrunner-pose-browser")
        defer { folder.remove() }
        let album = folder.path("album")
        try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
        for photo in ["Tests/Fixtures/Pose/squat.png", "Tests/Fixtures/Segmentation/bird_segmentation.png"] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path(photo), toPath: album + "/" + (photo.split(separator: "/").last ?? ""))
        }
        // Screenshots go to the repository's git-ignored out/ folder, where CI keeps them.
        let shots = Fixtures.path("out/pose-browser")
        let report = try await LiveServer.serve(["--threads", "2", "--albums", album]) { server in
            try await BrowserPage.check("tools/pose/browser_check.py", [server.address + "/", shots])
        }.json
        let text = "\(report)"
        // The camera: every keypoint listed (all score over the page's 0.1), drawn where Python finds them.
        let names = [
            "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder", "left_elbow",
            "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee", "right_knee",
            "left_ankle", "right_ankle",
        ]
        #expect(report["camera_keypoints"] as? [String] == names, "\(text)")
        #expect(report["camera_video"] as? [Int] == [500, 610], "\(text)")
        #expect(try Self.isPythonPose(report["camera_drawn"]), "\(report["camera_drawn"] ?? "")")

        // The photo: the person's share in the legend and the pixels the overlay covers, as Python's mask.
        let person = try Self.pythonArea("squat", 15)
        let share = Double(person.pixels) / Double(person.total) * 100
        #expect(report["photo_legend"] as? [String] == ["person"], "\(text)")
        let shown = Double((report["photo_shares"] as? [String])?.first?.dropLast() ?? "") ?? -1
        #expect(abs(shown - share) <= 0.5, "\(shown)% vs Python's \(share)%")
        #expect(report["camera_legend"] as? [String] == ["person"], "\(text)")
        // The camera's frames are JPEGs of a YUV 4:2:0 clip: within 2% of the image.
        let camera = (report["camera_mask_drawn"] as? [String: Any])?["count"] as? Int ?? -1
        #expect(abs(camera - person.pixels) * 50 <= person.total, "camera: \(camera) vs \(person.pixels)")
        for key in ["photo_drawn", "album_segment_drawn"] {
            let covered = (report[key] as? [String: Any])?["count"] as? Int ?? -1
            #expect(abs(covered - person.pixels) * 200 <= person.total, "\(key): \(covered) vs \(person.pixels)")
        }

        // The album: captions from Python's areas and mean score, the squat opened with its mask, then its skeleton.
        let bird = try Self.pythonArea("bird_segmentation", 3)
        let captions = Dictionary(
            ((report["album_segment_captions"] as? [[String]]) ?? []).map { ($0.first ?? "", $0.last ?? "") },
            uniquingKeysWith: { first, _ in first })
        #expect(captions["squat.png"] == "person \(Int((share).rounded()))%", "\(captions)")
        #expect(
            captions["bird_segmentation.png"]
                == "bird \(Int((Double(bird.pixels) / Double(bird.total) * 100).rounded()))%",
            "\(captions)")
        #expect(report["album_segment_answers"] as? [String] == ["person"], "\(text)")
        // The album run's status gives its latency, the run's own summary (GET /v1/runs/{id}).
        for name in ["segment", "pose"] {
            let status = report["album_\(name)_status"] as? String ?? ""
            #expect(status.contains("2 of 2 photos; inference ") && status.contains(" ms mean, p90 "), "\(status)")
        }
        let poses = ((report["album_pose_captions"] as? [[String]]) ?? []).first { $0.first == "squat.png" }
        let mean = try Self.python().map { $0[2] }.reduce(0, +) / 17
        let caption = poses?.last ?? ""
        let score = Double(caption.dropFirst("pose ".count).prefix(4)) ?? -1
        #expect(abs(score - mean) <= 0.011 && caption.hasSuffix("17 keypoints"), "\(caption) vs Python's mean \(mean)")
        #expect(report["album_pose_answers"] as? [String] == names, "\(text)")
        #expect(try Self.isPythonPose(report["album_pose_drawn"]), "\(report["album_pose_drawn"] ?? "")")
        // Coral's extractor on a cat, then another: the size, and Python's cosine of the two
        // (0.7328, from imprinting.python.json's vectors), to the 4 decimals shown.
        let embeddings = try JSONDecoder().decode(
            [String: ImageEmbeddingFixture].self,
            from: try Fixtures.data("Tests/Fixtures/Embedding/imprinting.python.json"))
        let (first, second) = (
            try #require(embeddings["cat_test_0.png"]?.values), try #require(embeddings["cat_train_0.png"]?.values)
        )
        let dot = zip(first, second).map(*).reduce(0, +)
        let cosine = dot / (first.map { $0 * $0 }.reduce(0, +) * second.map { $0 * $0 }.reduce(0, +)).squareRoot()
        // The panel's size is the second cat's, its length Python's to the 4 decimals shown.
        let length = Double((report["embedding_size"] as? String)?.split(separator: " ").last ?? "") ?? -1
        #expect((report["embedding_size"] as? String)?.hasPrefix("1024 values, length ") == true, "\(text)")
        #expect(abs(length - second.map { $0 * $0 }.reduce(0, +).squareRoot()) <= 0.00015, "\(length)")
        let shownCosine = Double(report["embedding_cosine"] as? String ?? "") ?? -1
        #expect(abs(shownCosine - cosine) <= 0.00015, "shown \(shownCosine), Python's \(cosine)")
        #expect((report["console_errors"] as? [String]) == [], "\(report["console_errors"] ?? "")")
        for name in [
            "camera-pose.png", "camera-segment.png", "photo-segment.png", "album-segment.png", "album-pose.png",
            "photo-embedding.png",
        ] {
            #expect(FileManager.default.fileExists(atPath: shots + "/" + name), "\(name)")
        }
    }
}

/// One photo's embedding as Python recorded it: raw values and their quantization.
struct ImageEmbeddingFixture: Decodable {
    var raw: [Double]
    var scale: Double
    var zeroPoint: Double

    enum CodingKeys: String, CodingKey {
        case raw, scale
        case zeroPoint = "zero_point"
    }

    /// The real values.
    var values: [Double] { raw.map { ($0 - zeroPoint) * scale } }
}
