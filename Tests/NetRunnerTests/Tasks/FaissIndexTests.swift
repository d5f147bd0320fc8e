#if os(Linux)
    import Foundation
    import NetRunnerSupport
    import NetRunnerTestSupport
    import Testing

    @testable import NetRunner

    /// FAISS indexes (`FaissIndex`, `FaissEmbeddingIndex`): the files we write are FAISS's own
    /// (Debian's python3-faiss reads them and answers the same ids and scores), Flat is the
    /// exact search of `EmbeddingIndex`, HNSW reaches its recall target, and bad input is a
    /// clear error.
    @Suite("FAISS indexes")
    struct FaissIndexTests {
        static let dimension = 64

        /// `count` seeded vectors around `clusters` centres (the clustered embeddings of a photo
        /// library: near neighbours close together), and `queries` more drawn alike but not stored.
        static func library(count: Int, queries: Int = 0, clusters: Int, seed: UInt64) throws -> (
            index: EmbeddingIndex, queries: [Float]
        ) {
            var random = SeededGenerator(seed: seed)
            func value() -> Float { Float.random(in: -0.5...0.5, using: &random) }
            let centres = (0..<clusters).map { _ in (0..<dimension).map { _ in value() } }
            func draw() -> [Float] {
                centres[Int.random(in: 0..<clusters, using: &random)].map { $0 + 0.15 * value() }
            }
            var index = EmbeddingIndex(dimension: dimension, model: "test-model")
            for item in 0..<count { try index.add(path: "/photos/p\(item).jpg", embedding: draw()) }
            return (index, (0..<queries).flatMap { _ in draw() })
        }

        static func folder() throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("faiss-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }

        /// Python's FAISS (Debian's python3-faiss, the system Python) on our file: the k nearest
        /// of each query, as ids and scores.
        static func pythonSearch(index: String, queries: [Float], k: Int) throws -> (ids: [[Int]], scores: [[Float]]) {
            let queryFile = index + ".queries.f32"
            try queries.withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: queryFile)) }
            let script = """
                import json, sys, faiss, numpy
                index = faiss.read_index(sys.argv[1])
                queries = numpy.fromfile(sys.argv[2], dtype=numpy.float32).reshape(-1, index.d)
                scores, ids = index.search(queries, int(sys.argv[3]))
                print(json.dumps({"ids": ids.tolist(), "scores": scores.tolist()}))
                """
            let result = try ProcessResult.run(
                "/usr/bin/python3", ["-c", script, index, queryFile, String(k)],
                environment: ["PYTHONPATH": nil, "PYTHONHOME": nil, "OMP_NUM_THREADS": "2"])
            #expect(result.status == 0, "python3-faiss: \(result.stderr)")
            struct Answer: Decodable {
                var ids: [[Int]]
                var scores: [[Float]]
            }
            let answer = try JSONDecoder().decode(Answer.self, from: Data(result.stdout.utf8))
            return (answer.ids, answer.scores)
        }

        @Test(
            "Python's faiss reads our Flat, HNSW and IVF files and answers the same",
            arguments: [
                "Flat", "HNSW32", "IVF64,Flat",
            ])
        func pythonReadsOurFiles(factory: String) throws {
            let (exact, queries) = try Self.library(count: 3_000, queries: 50, clusters: 30, seed: 7)
            let built = try FaissEmbeddingIndex.build(from: exact, factory: factory)
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let path = folder + "/photos.faiss"
            try built.write(to: path)
            let read = try FaissEmbeddingIndex.read(from: path)
            // The sidecar as built, with the digest of the index file written beside it.
            var expected = built.sidecar
            expected.indexSHA256 = SHA256.hexDigest(of: try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(read.sidecar == expected)
            #expect(try FaissEmbeddingIndex.read(from: path, verifying: true).count == 3_000)
            #expect(read.count == 3_000)
            let ours = try read.index.search(queries, k: 10)
            let python = try Self.pythonSearch(index: path, queries: queries, k: 10)
            #expect(python.ids == ours.map { $0.map(\.id) })
            let differences = zip(python.scores.joined(), ours.joined().map(\.distance)).map { abs($0 - $1) }
            #expect(differences.count == 500)
            #expect(differences.allSatisfy { $0 <= 1e-5 }, "largest \(differences.max() ?? 0)")
        }

        @Test("Flat answers the ids and similarities of EmbeddingIndex's exact search")
        func flatIsExact() throws {
            let (exact, queries) = try Self.library(count: 2_000, queries: 40, clusters: 20, seed: 11)
            let flat = try FaissEmbeddingIndex.build(from: exact, factory: "Flat")
            #expect(flat.sidecar.searchParameters == nil && flat.sidecar.recallAt10 == nil)
            for row in 0..<40 {
                let query = Array(queries[row * Self.dimension..<(row + 1) * Self.dimension])
                let reference = try exact.search(query, k: 10)
                let answer = try flat.search(query, k: 10)
                #expect(answer.map(\.index) == reference.map(\.index))
                #expect(answer.map(\.path) == reference.map(\.path))
                #expect(zip(answer, reference).allSatisfy { abs($0.similarity - $1.similarity) <= 1e-5 })
            }
            // A stored photo's own vector left out, as `similar search` does.
            let own = try flat.search(try flat.embedding(at: 5), k: 5, excluding: 5)
            #expect(own.map(\.index) == (try exact.search(exact.embedding(at: 5), k: 5, excluding: 5)).map(\.index))
        }

        @Test("HNSW32's efSearch is raised until recall at 10 reaches 0.95 on fresh queries")
        func hnswRecall() throws {
            let (exact, queries) = try Self.library(count: 4_000, queries: 200, clusters: 40, seed: 21)
            let hnsw = try FaissEmbeddingIndex.build(from: exact, factory: "HNSW32")
            let parameters = try #require(hnsw.sidecar.searchParameters)
            #expect(parameters.hasPrefix("efSearch="))
            #expect((hnsw.sidecar.recallAt10 ?? 0) >= 0.95)
            // Queries that are not stored vectors, against the exact answer.
            var hits = 0
            for row in 0..<200 {
                let query = Array(queries[row * Self.dimension..<(row + 1) * Self.dimension])
                let truth = Set(try exact.search(query, k: 10).map(\.index))
                hits += try hnsw.search(query, k: 10).filter { truth.contains($0.index) }.count
            }
            let recall = Double(hits) / 2_000
            #expect(recall >= 0.95, "recall at 10 \(recall) with \(parameters)")
        }

        @Test("A bad factory string, too few vectors to train, bad files and a foreign sidecar are clear errors")
        func errors() throws {
            #expect(throws: FaissError.self) { try FaissIndex(factory: "HNSW3x,Nonsense", dimension: 8) }
            do {
                _ = try FaissIndex(factory: "HNSW3x,Nonsense", dimension: 8)
            } catch let error as FaissError {
                #expect(error.description.hasPrefix("FAISS could not make the index \"HNSW3x,Nonsense\": "))
                #expect(error.message.contains("HNSW3x") || error.message.contains("factory"), "\(error.message)")
            }
            let small = try Self.library(count: 1_000, clusters: 10, seed: 31).index
            #expect {
                try FaissEmbeddingIndex.build(from: small, factory: "IVF1024,PQ16")
            } throws: { error in
                "\(error)".contains("needs at least 39936 embeddings") && "\(error)".contains("there are 1000")
            }
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let path = folder + "/photos.faiss"
            try FaissEmbeddingIndex.build(from: small, factory: "Flat").write(to: path)
            #expect(try SimilarityIndexFile.kind(of: path) == .faiss)
            #expect(try SimilarityIndexFile.read(from: path).count == 1_000)

            // Cut short: FAISS's read error, naming the file.
            let whole = try Data(contentsOf: URL(fileURLWithPath: path))
            let cut = folder + "/cut.faiss"
            try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
            try FileManager.default.copyItem(atPath: path + ".json", toPath: cut + ".json")
            #expect { try SimilarityIndexFile.read(from: cut) } throws: { error in
                (error as? FaissError)?.operation == "read \(cut)"
            }
            // Not an index at all.
            let text = folder + "/notes.faiss"
            try Data("hello, not an index".utf8).write(to: URL(fileURLWithPath: text))
            #expect { try SimilarityIndexFile.read(from: text) } throws: { error in
                "\(error)".contains("neither a NetRunner similarity index (NRINDEX1) nor a FAISS index")
            }
            // A FAISS code with junk after it: FAISS's own message.
            let junk = folder + "/junk.faiss"
            try Data("IxZZ0123456789".utf8).write(to: URL(fileURLWithPath: junk))
            try FileManager.default.copyItem(atPath: path + ".json", toPath: junk + ".json")
            #expect(throws: FaissError.self) { try SimilarityIndexFile.read(from: junk) }
            // No sidecar.
            try FileManager.default.copyItem(atPath: path, toPath: folder + "/alone.faiss")
            #expect { try SimilarityIndexFile.read(from: folder + "/alone.faiss") } throws: { error in
                "\(error)".contains("its sidecar \(folder)/alone.faiss.json")
            }
            // Another index's sidecar: counts and dimensions must agree.
            var sidecar = try FaissSidecar.read(from: path + ".json")
            sidecar.count = 999
            sidecar.paths.removeLast()
            try sidecar.write(to: path + ".json")
            #expect { try SimilarityIndexFile.read(from: path) } throws: { error in
                "\(error)".contains("holds 1000 vectors and its sidecar says 999")
            }
            sidecar.count = 1_000
            sidecar.paths.append("/photos/last.jpg")
            sidecar.dimension = 32
            try sidecar.write(to: path + ".json")
            #expect { try SimilarityIndexFile.read(from: path) } throws: { error in
                "\(error)".contains("holds 64 values per vector and its sidecar says 32")
            }
            sidecar.dimension = 64
            sidecar.paths.removeLast()
            try sidecar.write(to: path + ".json")
            #expect { try SimilarityIndexFile.read(from: path) } throws: { error in
                "\(error)".contains("declares 1000 vectors and lists 999 paths")
            }
        }

        @Test("NRINDEX1 files still open through SimilarityIndexFile")
        func nrindexStillOpens() throws {
            let exact = try Self.library(count: 100, clusters: 5, seed: 41).index
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            try exact.write(to: folder + "/photos.nrindex")
            #expect(try SimilarityIndexFile.kind(of: folder + "/photos.nrindex") == .netRunner)
            let read = try SimilarityIndexFile.read(from: folder + "/photos.nrindex")
            #expect(read is EmbeddingIndex)
            #expect(read.paths == exact.paths)
        }
    }
#endif
