import Foundation
import NetRunnerTestSupport
import Testing

/// What a new user of `similar` met (issue 53): the photos that failed named, an index found from
/// any folder (absolute photo and model paths; an older index still opening), the file read by
/// numpy (`tools/embedding/nrindex.py`), and `serve --index` serving the index's model itself.
@Suite("similar index: failures named, paths from any folder, the file in numpy, serve --index")
struct SimilarIndexTests {
    static let extractorBundle = "mobilenet_v1_1.0_224_quant_embedding_extractor.tiobundle"
    static let extractorID = "mobilenet-v1-1.0-224-quant-embedding-extractor"
    static let photos = Fixtures.path("Tests/Fixtures/Embedding/imprinting")

    func netrunner(_ arguments: [String], in folder: String? = nil) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, workingDirectory: folder)
    }

    /// A folder with the four training photos, seven files that are no photos, and a copy of
    /// the extractor's bundle in `models/`.
    /// An index file of one unit embedding of `dimension` values from `model`.
    static func indexFile(model: String, dimension: Int) -> Data {
        var data = Data("NRINDEX1".utf8)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        append(UInt32(dimension))
        append(UInt64(1))
        append(UInt32(model.utf8.count))
        data.append(contentsOf: Array(model.utf8))
        for position in 0..<dimension { append(Float(position == 0 ? 1 : 0).bitPattern) }
        append(UInt32(5))
        data.append(contentsOf: Array("a.jpg".utf8))
        return data
    }

    static func makeFolder() throws -> TemporaryFolder {
        let folder = try TemporaryFolder(prefix: "netrunner-similar-paths")
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder.path("photos"), withIntermediateDirectories: true)
        try manager.createDirectory(atPath: folder.path("models"), withIntermediateDirectories: true)
        try manager.createDirectory(atPath: folder.path("elsewhere"), withIntermediateDirectories: true)
        for name in [
            "cat/cat_train_0.png", "dog/dog_train_0.png", "hotdog/hotdog_train_0.png", "hotdog/hotdog_train_1.png",
        ] {
            let file = String(name.split(separator: "/").last ?? "")
            try manager.copyItem(atPath: photos + "/train/" + name, toPath: folder.path("photos/" + file))
        }
        for number in 1...7 {
            _ = try folder.write(Data("not a photo \(number)".utf8), named: "photos/broken\(number).jpg")
        }
        try manager.copyItem(
            atPath: Fixtures.path("Models/bundles/" + extractorBundle),
            toPath: folder.path("models/extractor.tiobundle"))
        return folder
    }

    @Test("The failed photos are named with why; the index records absolute paths; search works from elsewhere")
    func failuresAndPaths() throws {
        let folder = try Self.makeFolder()
        defer { folder.remove() }
        let built = try netrunner(
            ["similar", "index", "photos", "-o", "pets.nrindex", "--model", "models/extractor.tiobundle"],
            in: folder.path("."))
        #expect(built.stdout.contains("indexed 4 embeddings of 1024 values"), "\(built.stdout)\(built.stderr)")
        #expect(
            built.stderr.contains("7 lines of pets.nrindex.jsonl without an embedding, not indexed:"), "\(built.stderr)"
        )
        let named = built.stderr.split(separator: "\n").filter { $0.contains("photos/broken") }
        #expect(named.count == 5 && built.stderr.contains("  and 2 more"), "\(built.stderr)")
        #expect(named.allSatisfy { $0.contains(": ") && $0.count > 30 }, "each with why: \(named)")
        #expect(built.stdout.contains(folder.path("models/extractor.tiobundle")), "the model's path made absolute")

        // numpy reads the file: the embeddings of bulk's results file, normalised, by photo.
        let python = Fixtures.path(".venv-test/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python), "run scripts/setup-test-python.sh")
        let loaded = try ProcessResult.run(
            python, [Fixtures.path("tools/embedding/nrindex.py"), folder.path("pets.nrindex"), "--json"])
        #expect(loaded.status == 0, "\(loaded.stderr)")
        let index = try #require(try JSONSerialization.jsonObject(with: Data(loaded.stdout.utf8)) as? [String: Any])
        let paths = try #require(index["paths"] as? [String])
        let rows = try #require(index["embeddings"] as? [[Double]])
        #expect(
            index["model"] as? String == folder.path("models/extractor.tiobundle") && index["dimension"] as? Int == 1024
        )
        #expect(paths.allSatisfy { $0.hasPrefix(folder.path("photos/")) } && rows.count == 4, "\(paths)")
        let lines = try String(contentsOfFile: folder.path("pets.nrindex.jsonl"), encoding: .utf8)
        var compared = 0
        for line in lines.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let results = object["inference_results"] as? [String: Any]
            guard let values = (results?["embedding"] as? [String: Any])?["float_embedding"] as? [Double],
                let image = object["image"] as? String,
                let row = paths.firstIndex(of: folder.path(image.hasPrefix("./") ? String(image.dropFirst(2)) : image))
            else { continue }
            let length = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
            let largest = zip(values, rows[row]).map { abs($0 / length - $1) }.max() ?? 1
            #expect(largest < 1e-6, "\(image): \(largest)")
            compared += 1
        }
        #expect(compared == 4)

        // From another folder: the model and the photos are found; an indexed photo named by
        // its relative path (from where it was indexed) is compared by its own embedding.
        let cat = Self.photos + "/test/cat_test_0.png"
        let elsewhere = try netrunner(
            ["similar", "search", folder.path("pets.nrindex"), cat, "-k", "1"], in: folder.path("elsewhere"))
        #expect(elsewhere.status == 0 && elsewhere.stdout.contains("cat_train_0.png"), "\(elsewhere.stderr)")
        let own = try netrunner(
            ["similar", "search", "pets.nrindex", "photos/hotdog_train_0.png", "-k", "1"], in: folder.path("."))
        #expect(own.status == 0 && own.stdout.contains("hotdog_train_1.png"), "\(own.stdout)\(own.stderr)")

        // An index written before (model and photos as typed): it opens where it was made; from
        // elsewhere the message names the model it records and --model.
        try Self.oldIndex(
            from: folder.path("pets.nrindex"), folder: String(folder.path("x").dropLast()),
            to: folder.path("old.nrindex"))
        let old = try netrunner(["similar", "search", "old.nrindex", cat, "-k", "1"], in: folder.path("."))
        #expect(old.status == 0 && old.stdout.contains("photos/cat_train_0.png"), "\(old.stderr)")
        let lost = try netrunner(
            ["similar", "search", folder.path("old.nrindex"), cat, "-k", "1"], in: folder.path("elsewhere"))
        #expect(
            lost.status != 0 && lost.stderr.contains("was made with the model models/extractor.tiobundle")
                && lost.stderr.contains("give --model"), "\(lost.stderr)")
    }

    /// The index at `path` as NetRunner wrote it before: its model and photos relative to
    /// `folder` (which ends with a slash).
    static func oldIndex(from path: String, folder: String, to target: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
            data[offset..<offset + MemoryLayout<T>.size].reversed().reduce(T(0)) { $0 << 8 | T($1) }
        }
        func text(_ string: String) -> Data {
            var bytes = Data()
            withUnsafeBytes(of: UInt32(string.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
            return bytes + Data(string.utf8)
        }
        func relative(_ string: String) -> String {
            string.hasPrefix(folder) ? String(string.dropFirst(folder.count)) : string
        }
        let (dimension, count) = (Int(integer(UInt32.self, at: 8)), Int(integer(UInt64.self, at: 12)))
        let modelLength = Int(integer(UInt32.self, at: 20))
        let model = String(decoding: data[24..<24 + modelLength], as: UTF8.self)
        var offset = 24 + modelLength + 4 * dimension * count
        var old = data[0..<20] + text(relative(model)) + data[24 + modelLength..<offset]
        for _ in 0..<count {
            let length = Int(integer(UInt32.self, at: offset))
            old += text(relative(String(decoding: data[offset + 4..<offset + 4 + length], as: UTF8.self)))
            offset += 4 + length
        }
        try old.write(to: URL(fileURLWithPath: target))
    }

    @Test("serve --index serves the index's model itself: a path not served, then searched")
    func serveLoadsTheModel() async throws {
        let folder = try Self.makeFolder()
        defer { folder.remove() }
        let built = try netrunner(
            ["similar", "index", "photos", "-o", "pets.nrindex", "--model", "models/extractor.tiobundle"],
            in: folder.path("."))
        #expect(built.status == 0 && built.stdout.contains("indexed 4 embeddings"), "\(built.stderr)")
        // An empty models folder: only the embedded classifier and face detector are served.
        try await LiveServer.serve(["--index", "pets=\(folder.path("pets.nrindex"))"], models: folder.path("empty")) {
            server in
            let listed = try await server.request("/v1/indexes")
            let entries = listed.json["indexes"] as? [[String: Any]] ?? []
            #expect(entries.first?["model"] as? String == Self.extractorID, "\(entries)")
            let photo = try Data(contentsOf: URL(fileURLWithPath: Self.photos + "/test/dog_test_0.png"))
            let answer = try await server.request("/v1/indexes/pets/search?k=1", method: "POST", body: photo)
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            let nearest = (answer.json["matches"] as? [[String: Any]])?.first?["path"] as? String ?? ""
            #expect(nearest.hasSuffix("/photos/dog_train_0.png"), "\(answer.json)")
        }
        // Issue 54, finding 11 (b): an index of another dimension, or of a model that is no
        // embedder, is refused at the start (every search answered 500), naming both.
        for (model, dimension, words) in [
            (folder.path("models/extractor.tiobundle"), 8, "makes embeddings of 1024 values"),
            ("mobilenet-v2-1.0-224-uint8", 1001, "is a classification model, no embedder"),
        ] {
            try Self.indexFile(model: model, dimension: dimension).write(
                to: URL(fileURLWithPath: folder.path("x.nrindex")))
            let wrong = try netrunner([
                "serve", "--port", "0", "--models", folder.path("empty"), "--no-import", "--index",
                "other=\(folder.path("x.nrindex"))",
            ])
            #expect(
                wrong.status != 0 && wrong.stderr.contains(words)
                    && wrong.stderr.contains("its 1 embeddings are of \(dimension) values, from \(model)"),
                "\(wrong.stderr)")
        }
        // A model that is gone is refused at the start, naming it.
        try FileManager.default.removeItem(atPath: folder.path("models/extractor.tiobundle"))
        let refused = try netrunner([
            "serve", "--port", "0", "--models", folder.path("empty"), "--no-import", "--index",
            "pets=\(folder.path("pets.nrindex"))",
        ])
        #expect(
            refused.status != 0 && refused.stderr.contains("is not served, and no model has that id")
                && refused.stderr.contains(folder.path("models/extractor.tiobundle")), "\(refused.stderr)")
    }
}
