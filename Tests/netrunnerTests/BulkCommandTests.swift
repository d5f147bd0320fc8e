import Foundation
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `netrunner bulk` as a user runs it: a folder in, result lines out, surviving corrupt files,
/// Ctrl-C and a hard kill.
@Suite("netrunner bulk")
struct BulkCommandTests {
    struct Line: Decodable {
        struct Category: Decodable {
            var label: String?
            var score: Float
        }
        struct Results: Decodable {
            var classification: [Category]?
        }
        var image: String
        var error: Bool
        var errorDescription: String?
        var inferenceLatency: Double?
        var preprocessorLatency: Double?
        var inferenceResults: Results?

        enum CodingKeys: String, CodingKey {
            case image, error
            case errorDescription = "error_description"
            case inferenceLatency = "inference_latency"
            case preprocessorLatency = "preprocessor_latency"
            case inferenceResults = "inference_results"
        }
    }

    static let photoFolder = Fixtures.path("Tests/Fixtures/Photos/test")

    func lines(_ path: String) throws -> [Line] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "only whole lines")
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
    }

    /// A folder tree of `count` links to the test photos, with a corrupt file among them.
    func manyPhotos(_ count: Int, in folder: TemporaryFolder) throws -> String {
        let photos = try FileManager.default.contentsOfDirectory(atPath: Self.photoFolder).sorted()
        let root = folder.path("photos")
        for index in 0..<count {
            let sub = "\(root)/\(index / 50)"
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
            let photo = photos[index % photos.count]
            try FileManager.default.createSymbolicLink(
                atPath: "\(sub)/\(index)-\(photo)", withDestinationPath: "\(Self.photoFolder)/\(photo)")
        }
        try Data("broken".utf8).write(to: URL(fileURLWithPath: "\(root)/0/broken.jpg"))
        return root
    }

    @Test("WebP, GIF, TIFF, PNG, HEIC and AVIF in a folder are listed and answered; odd TIFFs fail by name")
    func photoFormats() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let output = folder.path("out.jsonl")
        let formats = Fixtures.path("Tests/Fixtures/Formats")
        let result = try ProcessResult.run(Fixtures.netrunner, ["bulk", formats, "--output", output, "--no-progress"])
        #expect(result.status == 1, "the refused CMYK TIFF fails: \(result.stderr)")
        #expect(!result.stderr.contains("skipped"), "no format is skipped any more: \(result.stderr)")
        let lines = try lines(output)
        #expect(lines.count == 31, "30 decoded fixtures and 1 refused TIFF")
        for line in lines {
            let refused = line.image.hasSuffix("tiff_cmyk.tif")
            #expect(line.error == refused, "\(line.image): \(line.errorDescription ?? "")")
            if refused {
                #expect(line.errorDescription?.contains("8- and 16-bit grey, RGB and RGBA TIFFs are decoded") == true)
            }
        }
        // Files holding the same pixels get the same answer, whatever their format.
        func top(_ name: String) throws -> BulkCommandTests.Line.Category {
            let line = try #require(lines.first { $0.image.hasSuffix("/" + name) })
            return try #require(line.inferenceResults?.classification?.first)
        }
        let lossless = try ["webp_lossless.webp", "tiff_rgb_lzw.tif", "tiff_rgb_raw.tif"].map(top)
        #expect(Set(lossless.map(\.label)).count == 1 && Set(lossless.map(\.score)).count == 1)
        #expect(try top("heic_plain.heic").score == top("heic_alpha.heic").score)
        let single = try ProcessResult.run(Fixtures.netrunner, ["classify", formats + "/heic_irot.heic"])
        #expect(single.status == 0, "\(single.stderr)")
    }

    @Test("A folder gives one line per image: answers, latencies, and the error of a corrupt file")
    func folder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let root = try manyPhotos(8, in: folder)
        let output = folder.path("out.jsonl")
        let result = try ProcessResult.run(Fixtures.netrunner, ["bulk", root, "--output", output])
        #expect(result.status == 1, "a failed image makes the exit status 1: \(result.stderr)")
        #expect(result.stderr.contains("9 images in") && result.stderr.contains("1 failed"), "\(result.stderr)")
        #expect(result.stderr.contains("inference ms: mean"))
        let lines = try lines(output)
        #expect(lines.count == 9)
        #expect(lines.map(\.image) == lines.map(\.image).sorted(), "in sorted file order")
        let broken = try #require(lines.first { $0.image.hasSuffix("broken.jpg") })
        #expect(broken.error && broken.errorDescription?.contains("broken.jpg") == true)
        for line in lines where !line.error {
            let top = try #require(line.inferenceResults?.classification?.first?.label)
            let expected = [
                "chelsea": "Egyptian cat", "coffee": "espresso", "eagle": "bald eagle",
                "grace_hopper": "military uniform",
            ].first { line.image.contains($0.key) }?.value
            #expect(top.hasPrefix(try #require(expected)), "\(line.image): \(top)")
            #expect((line.inferenceLatency ?? 0) > 0 && (line.preprocessorLatency ?? 0) > 0)
        }
        // CSV to stdout: a header and one row per image.
        let csv = try ProcessResult.run(Fixtures.netrunner, ["bulk", root, "--format", "csv", "--threads", "1"])
        let rows = csv.stdout.split(separator: "\n")
        #expect(
            rows.first
                == "image,answer,score,results,decode_latency,preprocessor_latency,inference_latency,total_latency,error"
        )
        #expect(rows.count == 10)
    }

    @Test(
        "Ctrl-C and SIGTERM stop with whole lines; the rerun finishes the rest, each image once",
        arguments: ["INT", "TERM", "KILL"])
    func interruptAndResume(signalName: String) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let root = try manyPhotos(400, in: folder)
        let output = folder.path("out.jsonl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = ["bulk", root, "--output", output, "--threads", "1"]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Wait until some results are written, then interrupt.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            if size > 2000 { break }
            usleep(20_000)
        }
        let signalled = Date()
        kill(process.processIdentifier, ["INT": SIGINT, "TERM": SIGTERM][signalName] ?? SIGKILL)
        process.waitUntilExit()
        if signalName == "INT" {
            #expect(process.terminationStatus == 130)
        } else if signalName == "TERM" {
            // SIGTERM stops taking images at once: exit 143 within 2 s, whatever is in flight.
            #expect(process.terminationStatus == 143)
            #expect(Date().timeIntervalSince(signalled) < 3, "stopped within 2 s")
        } else {
            #expect(process.terminationReason == .uncaughtSignal)
        }
        let partial = try lines(output)
        #expect(partial.count > 0 && partial.count < 401, "interrupted after \(partial.count)")

        let rerun = try ProcessResult.run(Fixtures.netrunner, ["bulk", root, "--output", output])
        #expect(rerun.status == 1, "the corrupt file still fails: \(rerun.stderr)")
        #expect(rerun.stderr.contains("Resuming \(output): \(partial.count) results already there"), "\(rerun.stderr)")
        let all = try lines(output)
        #expect(all.count == 401)
        #expect(Set(all.map(\.image)).count == 401, "every image exactly once")
        #expect(
            Array(all.prefix(partial.count)).map(\.image) == partial.map(\.image), "earlier lines kept as they were")
    }

    @Test("Bad arguments and files get one clear line")
    func badInput() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let empty = folder.path("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let noImages = try ProcessResult.run(Fixtures.netrunner, ["bulk", empty])
        #expect(noImages.status != 0 && noImages.stderr.contains("No image files found in \(empty)"))
        let badModel = try folder.write(Data("not a model".utf8), named: "bad.tflite")
        let model = try ProcessResult.run(Fixtures.netrunner, ["bulk", Self.photoFolder, "--model", badModel])
        #expect(model.status == 1 && model.stderr.contains(badModel), "\(model.stderr)")
        let notes = try folder.write(Data("{\"a\": 1}\n".utf8), named: "notes.jsonl")
        let foreign = try ProcessResult.run(Fixtures.netrunner, ["bulk", Self.photoFolder, "--output", notes])
        #expect(foreign.status == 1 && foreign.stderr.contains("line 1 is not a results line"), "\(foreign.stderr)")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "{\"a\": 1}\n")
        let restarted = try ProcessResult.run(
            Fixtures.netrunner, ["bulk", Self.photoFolder, "--output", notes, "--restart"])
        #expect(restarted.status == 0, "\(restarted.stderr)")
        #expect(try lines(notes).count == 4)
    }
}

/// Results files that survive hostile names and changed runs: every name round-trips byte for
/// byte (line breaks, quotes, commas, bytes that are not UTF-8), a resumed run must be the same
/// run (model, options, folders by real path), and failures can be retried.
@Suite("netrunner bulk: names and run identity")
struct BulkIdentityTests {
    /// A folder of real photos under hostile names, and the label each must get.
    func hostileFolder() throws -> (folder: TemporaryFolder, expected: [String: String]) {
        let folder = try TemporaryFolder()
        let coffee = try Fixtures.data("Tests/Fixtures/Photos/test/coffee.jpg")
        let eagle = try Fixtures.data("Tests/Fixtures/Photos/test/eagle.jpg")
        let cat = try Fixtures.data("Tests/Fixtures/Photos/test/chelsea.png")
        _ = try folder.write(coffee, named: "line\nbreak.jpg")
        _ = try folder.write(cat, named: "carriage\rreturn.png")
        _ = try folder.write(coffee, named: "q\"uote,comma.jpg")
        // Two names that differ only in bytes that are not UTF-8 must keep their own answers.
        for (bytes, data) in [([0xFF, 0xFE], eagle), ([0xFF, 0xFD], cat)] as [([UInt8], Data)] {
            let name = Array("bad".utf8) + bytes + Array(".jpg".utf8)
            let path = Array(folder.url.path.utf8) + [UInt8(ascii: "/")] + name + [0]
            let descriptor = path.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { characters in
                    characters.baseAddress.map { open($0, O_WRONLY | O_CREAT, 0o644) } ?? -1
                }
            }
            #expect(descriptor >= 0)
            _ = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        }
        return (
            folder,
            [
                "line\nbreak.jpg": "espresso", "carriage\rreturn.png": "Egyptian cat", "q\"uote,comma.jpg": "espresso",
                "bad\u{10FFFF}\u{10FFFE}.jpg": "bald eagle", "bad\u{10FFFF}\u{10FFFD}.jpg": "Egyptian cat",
            ]
        )
    }

    func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, ["bulk", "--no-progress"] + arguments)
    }

    @Test("Every hostile name round-trips, keeps its own answer, and is written once however often the run resumes")
    func hostileNames() throws {
        let (folder, expected) = try hostileFolder()
        defer { folder.remove() }
        for format in ["jsonl", "csv"] {
            let output = folder.path("results.\(format)")
            for _ in 0..<3 {
                let result = try run([folder.url.path, "--output", output])
                #expect(result.status == 0, "\(format): \(result.stderr)")
            }
            let text = try String(contentsOfFile: output, encoding: .utf8)
            var answers: [String: String] = [:]
            if format == "jsonl" {
                for line in text.split(separator: "\n") {
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    let image = try #require(object["image"] as? String)
                    let top =
                        ((object["inference_results"] as? [String: Any])?["classification"] as? [[String: Any]])?
                        .first?["display_name"] as? String
                    #expect(answers[image] == nil, "\(image) written twice")
                    answers[image] = top
                }
            } else {
                // An RFC 4180 reader (quotes, doubled quotes, line breaks inside quotes).
                var records: [[String]] = [[]]
                var field = ""
                var quoted = false
                var scalars = text.unicodeScalars.makeIterator()
                var pending: Unicode.Scalar? = nil
                while let scalar = pending ?? scalars.next() {
                    pending = nil
                    if quoted {
                        if scalar == "\"" {
                            let next = scalars.next()
                            if next == "\"" {
                                field.unicodeScalars.append("\"")
                            } else {
                                quoted = false
                                pending = next
                            }
                        } else {
                            field.unicodeScalars.append(scalar)
                        }
                    } else if scalar == "\"" {
                        quoted = true
                    } else if scalar == "," {
                        records[records.count - 1].append(field)
                        field = ""
                    } else if scalar == "\n" {
                        records[records.count - 1].append(field)
                        field = ""
                        records.append([])
                    } else {
                        field.unicodeScalars.append(scalar)
                    }
                }
                for record in records.dropFirst().dropLast() {
                    let image = try #require(record.first)
                    #expect(answers[image] == nil, "\(image) written twice")
                    answers[image] = record.count > 1 ? record[1] : nil
                }
            }
            #expect(answers.count == expected.count, "\(format): \(answers.keys.sorted())")
            for (name, label) in expected {
                let answer = answers[folder.url.path + "/" + name]
                #expect(answer?.hasPrefix(label) == true, "\(format) \(name.debugDescription): \(answer ?? "missing")")
            }
        }
    }

    @Test("A resumed run must be the same run: spellings of one folder resume, another model or option is refused")
    func identity() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let photos = folder.path("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        for name in ["coffee.jpg", "eagle.jpg"] {
            try FileManager.default.copyItem(
                atPath: Fixtures.path("Tests/Fixtures/Photos/test/\(name)"), toPath: photos + "/" + name)
        }
        _ = try folder.write(Data("broken".utf8), named: "photos/broken.jpg")
        let output = folder.path("out.jsonl")
        let first = try ProcessResult.run(
            Fixtures.netrunner, ["bulk", "--no-progress", "photos", "--output", "out.jsonl"],
            environment: [:], workingDirectory: folder.url.path)
        #expect(first.status == 1, "the broken file fails: \(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: output + ".run.json"))
        // The same folder spelled three other ways: nothing to do, nothing appended.
        for spelling in ["./photos/", photos, folder.url.path + "/./photos"] {
            let again = try ProcessResult.run(
                Fixtures.netrunner, ["bulk", "--no-progress", spelling, "--output", "out.jsonl"],
                environment: [:], workingDirectory: folder.url.path)
            #expect(again.stderr.contains("0 of 3 images to go"), "\(spelling): \(again.stderr)")
        }
        #expect(try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").count == 3)
        // Another model, another option: refused, naming what differs; the file is untouched.
        let before = try Data(contentsOf: URL(fileURLWithPath: output))
        for (arguments, difference) in [
            (["--model", Fixtures.path(Fixtures.MobileNet.float32)], "the model"),
            (["--max-results", "2"], "--max-results (not given; now 2)"),
        ] {
            let refused = try ProcessResult.run(
                Fixtures.netrunner, ["bulk", "--no-progress", "photos", "--output", "out.jsonl"] + arguments,
                environment: [:], workingDirectory: folder.url.path)
            #expect(refused.status == 1)
            #expect(
                refused.stderr.contains("holds the results of another run; what differs: \(difference)"),
                "\(refused.stderr)")
            #expect(refused.stderr.contains("--restart"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == before)
        // The broken photo mended: --retry-failed runs it again, its line replaced.
        try FileManager.default.removeItem(atPath: photos + "/broken.jpg")
        try FileManager.default.copyItem(
            atPath: Fixtures.path("Tests/Fixtures/Photos/test/chelsea.png"), toPath: photos + "/broken.jpg")
        let retried = try ProcessResult.run(
            Fixtures.netrunner, ["bulk", "--no-progress", "photos", "--output", "out.jsonl", "--retry-failed"],
            environment: [:], workingDirectory: folder.url.path)
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stderr.contains("Retrying 1 failed image(s)"))
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.contains("\"error\":false") }, "\(lines)")
        #expect(lines.filter { $0.contains("photos/broken.jpg") }.count == 1)
    }
}

/// `netrunner report`: bulk results as a browsable page.
@Suite("netrunner report")
struct ReportCommandTests {
    @Test("The gallery shows every image with its answer, counts the failures, and fetches nothing")
    func gallery() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let photos = folder.path("photos")
        try FileManager.default.copyItem(atPath: Fixtures.path("Tests/Fixtures/Photos/test"), toPath: photos)
        _ = try folder.write(Data("broken".utf8), named: "photos/broken.jpg")
        let results = folder.path("results.jsonl")
        let bulk = try ProcessResult.run(Fixtures.netrunner, ["bulk", "--no-progress", photos, "--output", results])
        #expect(bulk.status == 1, "the broken file fails: \(bulk.stderr)")
        // One photo is gone by the time the gallery is made: it gets a placeholder.
        try FileManager.default.removeItem(atPath: photos + "/grace_hopper.jpg")
        let report = try ProcessResult.run(Fixtures.netrunner, ["report", results])
        #expect(report.status == 0, "\(report.stderr)")
        let html = try String(contentsOfFile: folder.path("results.html"), encoding: .utf8)
        #expect(html.contains("5 images, 1 failed"))
        for (label, score) in [("Egyptian cat", "0.57421875"), ("espresso", "0.796875"), ("bald eagle", "0.8671875")] {
            #expect(html.contains("\"label\":\"\(label)\",\"score\":\(score)"), "\(label)")
        }
        #expect(
            html.components(separatedBy: "data:image/jpeg;base64,").count == 4,
            "three previews: one is gone, one broken")
        #expect(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("url(http"))
        #expect(report.stderr.contains("2 image(s) could not be read again"))
        let csv = try ProcessResult.run(Fixtures.netrunner, ["report", folder.path("x.csv")])
        #expect(csv.status == 64 && csv.stderr.contains("the gallery reads JSON Lines"))
    }
}
