import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 57: `similar index` on a folder indexed before embeds only the photos new or changed
/// since, and leaves out the removed ones (`bulk --sync` underneath); a run killed mid-update
/// leaves the old index whole, and the next run finishes it.
@Suite("similar index: a library that changes")
struct SimilarUpdateTests {
    static let extractor = EmbeddingCommandTests.extractor
    static let test = Fixtures.path("Tests/Fixtures/Photos/test")
    static let imprinting = EmbeddingCommandTests.photos + "/train"

    func netrunner(_ arguments: [String], in folder: String) throws -> ProcessResult {
        try ProcessResult.run(Fixtures.netrunner, arguments, workingDirectory: folder)
    }

    /// Each answer's matches of `similar search --json`: path and similarity.
    func matches(_ run: ProcessResult) -> [(path: String, similarity: Double)] {
        EmbeddingCommandTests.lines(run.stdout).flatMap { answer in
            ((answer["matches"] as? [[String: Any]]) ?? []).map {
                (($0["path"] as? String) ?? "", ($0["similarity"] as? Double) ?? -1)
            }
        }
    }

    @Test(
        "A photo added is found, a photo changed answers its new self, a photo removed never answers",
        arguments: ["nrindex", "faiss"])
    func update(kind: String) throws {
        guard kind == "nrindex" || SimilarityIndexFile.hasFaiss else { return }
        let folder = try TemporaryFolder(prefix: "netrunner-similar-update")
        defer { folder.remove() }
        let library = try Self.library(in: folder)
        let index = "photos." + kind
        let build =
            ["similar", "index", "library", "--model", Self.extractor, "-o", index]
            + (kind == "faiss" ? ["--index-type", "Flat"] : [])
        let first = try netrunner(build, in: folder.url.path)
        #expect(first.status == 0 && first.stdout.contains("indexed 3 embeddings"), "\(first.stdout)\(first.stderr)")

        // One photo added, one replaced by another photo's bytes, one removed.
        try FileManager.default.copyItem(
            atPath: Self.imprinting + "/cat/cat_train_0.png", toPath: library + "/cat.png")
        let dog = try Data(contentsOf: URL(fileURLWithPath: Self.imprinting + "/dog/dog_train_0.png"))
        try dog.write(to: URL(fileURLWithPath: library + "/eagle.jpg"))
        try FileManager.default.removeItem(atPath: library + "/coffee.jpg")
        let second = try netrunner(build, in: folder.url.path)
        #expect(second.status == 0 && second.stdout.contains("indexed 3 embeddings"), "\(second.stderr)")
        // Only the new and the changed photo were embedded; the unchanged one was not.
        #expect(second.stderr.contains("1 image(s) changed since they ran, run again; 1 no longer listed"))
        #expect(second.stderr.contains("2 of 3 images to go"), "\(second.stderr)")

        // Queries from outside the index: the changed photo answers as the dog it now is, the
        // added one as itself, and the removed one never.
        let queries = folder.path("queries")
        try FileManager.default.createDirectory(atPath: queries, withIntermediateDirectories: true)
        try dog.write(to: URL(fileURLWithPath: queries + "/dog.png"))
        try FileManager.default.copyItem(atPath: Self.imprinting + "/cat/cat_train_0.png", toPath: queries + "/cat.png")
        try FileManager.default.copyItem(atPath: Self.test + "/coffee.jpg", toPath: queries + "/coffee.jpg")
        let search = try netrunner(
            [
                "similar", "search", index, "queries/dog.png", "queries/cat.png", "queries/coffee.jpg", "-k", "10",
                "--json",
            ],
            in: folder.url.path)
        #expect(search.status == 0, "\(search.stderr)")
        let answers = EmbeddingCommandTests.lines(search.stdout)
        #expect(answers.count == 3)
        func nearest(_ number: Int) -> (path: String, similarity: Double)? {
            guard answers.count > number, let first = (answers[number]["matches"] as? [[String: Any]])?.first else {
                return nil
            }
            return ((first["path"] as? String) ?? "", (first["similarity"] as? Double) ?? -1)
        }
        #expect(nearest(0)?.path.hasSuffix("/library/eagle.jpg") == true && (nearest(0)?.similarity ?? 0) > 0.999)
        #expect(nearest(1)?.path.hasSuffix("/library/cat.png") == true && (nearest(1)?.similarity ?? 0) > 0.999)
        let all = matches(search)
        #expect(all.count == 9, "\(all)")
        #expect(!all.contains { $0.path.hasSuffix("coffee.jpg") }, "\(all)")

        // Nothing changed: nothing embedded, nothing dropped, the same index.
        let third = try netrunner(build, in: folder.url.path)
        #expect(third.status == 0 && third.stdout.contains("indexed 3 embeddings"))
        #expect(!third.stderr.contains("Syncing") && third.stderr.contains("0 of 3 images to go"), "\(third.stderr)")
    }

    @Test("similar index killed while it embeds leaves the old index whole; the next run finishes the update")
    func killedMidUpdate() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-similar-kill")
        defer { folder.remove() }
        let library = try Self.library(in: folder)
        let build = [
            "similar", "index", "library", "--model", Self.extractor, "-o", "photos.nrindex", "--threads", "1",
        ]
        #expect(try netrunner(build, in: folder.url.path).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path("photos.nrindex")))
        // 150 more photos (hard links: new paths, the same bytes), about 5 s of embedding.
        for number in 0..<150 {
            link(Self.test + "/eagle.jpg", library + "/more-\(number).jpg")
        }
        let embedded = folder.path("photos.nrindex.jsonl")
        func lineCount() -> Int {
            ((try? Data(contentsOf: URL(fileURLWithPath: embedded))) ?? Data()).reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.netrunner)
        process.arguments = build
        process.currentDirectoryURL = folder.url
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let sizeBefore = Self.size(of: embedded)
        try process.run()
        let pid = process.processIdentifier
        // Killed once it has embedded some of the new photos, not all: watched on a thread of
        // its own every millisecond (the cooperative pool of a loaded test run may not come
        // back in time), by the file's size.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                let deadline = Date() + 120
                // (Once it has ended and been reaped, kill(pid, 0) fails.)
                while kill(pid, 0) == 0, Self.size(of: embedded) <= sizeBefore, Date() < deadline { usleep(1000) }
                kill(pid, SIGKILL)
                continuation.resume()
            }
        }
        process.waitUntilExit()
        let written = lineCount()
        #expect(written > 3 && written < 153, "\(written) lines when killed")
        // The old index, byte for byte; every line of the embeddings whole.
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("photos.nrindex"))) == before)
        // (A line cut by the kill, without its newline, is cut off by the next run.)
        let lines = try String(contentsOfFile: embedded, encoding: .utf8).split(separator: "\n").prefix(written)
        #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
        let again = try netrunner(build, in: folder.url.path)
        #expect(again.status == 0 && again.stdout.contains("indexed 153 embeddings"), "\(again.stdout)\(again.stderr)")
        #expect(again.stderr.contains("\(153 - written) of 153 images to go"), "\(again.stderr)")
    }

    @Test("serve --index serves each new version of a FAISS index once written; a bad one leaves the old serving")
    func serveReloads() async throws {
        guard SimilarityIndexFile.hasFaiss else { return }
        let folder = try TemporaryFolder(prefix: "netrunner-similar-reload")
        defer { folder.remove() }
        let library = try Self.library(in: folder)
        let build = [
            "similar", "index", "library", "--model", Self.extractor, "-o", "photos.faiss", "--index-type", "Flat",
        ]
        #expect(try netrunner(build, in: folder.url.path).status == 0)
        let cat = try Data(contentsOf: URL(fileURLWithPath: Self.imprinting + "/cat/cat_train_0.png"))
        let index = folder.path("photos.faiss")
        try await LiveServer.serve(["--index", "photos=\(index)", "--index-poll", "0.05"]) { server in
            func count() async throws -> Int? {
                let listed = try await server.request("/v1/indexes")
                return (listed.json["indexes"] as? [[String: Any]])?.first?["count"] as? Int
            }
            func nearest() async throws -> (status: Int, path: String, similarity: Double) {
                let answer = try await server.request("/v1/indexes/photos/search?k=1", method: "POST", body: cat)
                let first = (answer.json["matches"] as? [[String: Any]])?.first
                return (answer.status, first?["path"] as? String ?? "", first?["similarity"] as? Double ?? -1)
            }
            #expect(try await count() == 3)
            #expect(try await nearest().path.hasSuffix("/cat.png") == false)

            // A photo added and the index made again beside the running server: served once
            // written, every search meanwhile answered.
            try cat.write(to: URL(fileURLWithPath: library + "/cat.png"))
            #expect(try netrunner(build, in: folder.url.path).status == 0)
            var statuses: Set<Int> = []
            try await Eventually.wait(for: "the new index served", upTo: .seconds(60)) {
                statuses.insert(try await nearest().status)
                return try await count() == 4
            }
            #expect(statuses == [200])
            let found = try await nearest()
            #expect(found.path == library + "/cat.png" && found.similarity > 0.999, "\(found)")

            // The index file of another build beside this sidecar (a copy of one file of two):
            // its digest differs from the sidecar's, so the old pair goes on serving.
            let other = [
                "similar", "index", "library/cat.png", "--model", Self.extractor, "-o", "other.faiss",
                "--index-type", "Flat",
            ]
            #expect(try netrunner(other, in: folder.url.path).status == 0)
            #expect(rename(folder.path("other.faiss"), index) == 0)
            try await Eventually.wait(for: "the mismatched index refused", upTo: .seconds(60)) {
                server.log.contains("its SHA-256 differs")
            }
            let (afterMismatch, stillCat) = (try await count(), try await nearest().path)
            #expect(afterMismatch == 4 && stillCat == library + "/cat.png")
            // Garbage in its place: refused, said in the log, the old index serving.
            try Data("not an index".utf8).write(to: URL(fileURLWithPath: index), options: .atomic)
            try await Eventually.wait(for: "the garbage refused", upTo: .seconds(60)) {
                server.log.contains("neither a NetRunner similarity index")
            }
            let (afterGarbage, status) = (try await count(), try await nearest().status)
            #expect(afterGarbage == 4 && status == 200)
        }
    }

    /// `library/` in `folder`, of three photos: coffee, eagle and Grace Hopper.
    static func library(in folder: TemporaryFolder) throws -> String {
        let library = folder.path("library")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        for name in ["coffee.jpg", "eagle.jpg", "grace_hopper.jpg"] {
            try FileManager.default.copyItem(atPath: test + "/" + name, toPath: library + "/" + name)
        }
        return library
    }

    /// A file's size, 0 when it is not there.
    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }
}
