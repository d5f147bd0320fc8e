import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import NetRunnerVideo
import Synchronization
import Testing

@testable import NetRunnerJobs

/// `netrunner stream`'s session, in process (issue 24: it lived in the command's file, where
/// only a spawned process could reach it). The command itself is tested in `StreamCommandTests`.
@Suite("Stream session")
struct StreamSessionTests {
    /// Collects what a session hands over.
    final class Collected: StreamOutput {
        let answers = Mutex<[FrameAnswer]>([])
        let failures = Mutex<[String]>([])

        func answered(_ answer: FrameAnswer) throws { answers.withLock { $0.append(answer) } }
        func failed(_ frame: VideoFrame, problem: String) throws { failures.withLock { $0.append(problem) } }
    }

    @Test(
        "Video mode: every frame answered in order, the photo's label on each, an annotated video, the summary's counts"
    )
    func videoMode() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-session")
        defer { folder.remove() }
        let clip = try VideoClips.photos(in: folder.url.path)
        let model = try LoadedModel(.path(Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")))
        let pool = try VisionTaskPool(count: 1) { try ImageTask(model: model) }
        let source = VideoSource(clip)
        let frames = FrameSource(source, options: .init(frameSize: .covering(pool.preprocessing.size)))
        let output = Collected()
        let session = StreamSession(
            source: source, modelName: model.name, runner: StreamRunner(pool: pool, mode: .video), frames: frames,
            annotate: folder.path("annotated.mp4"), output: output)
        let outcome = await session.run()
        #expect(outcome.error == nil && !outcome.interrupted)
        let answers = output.answers.withLock { $0 }
        let expected = VideoClips.photoOrder.count * VideoClips.framesPerPhoto
        #expect(answers.map(\.frame.index) == Array(0..<expected))
        let labels = answers.map { answer -> String in
            guard case .classification(let result) = answer.answer else { return "" }
            return result.categories.first.map { $0.displayName ?? $0.label ?? "" } ?? ""
        }
        // The first photo is the espresso, the second the eagle (their centre squares).
        #expect(labels.prefix(VideoClips.framesPerPhoto).allSatisfy { $0 == "espresso" }, "\(labels)")
        #expect(
            labels.dropFirst(VideoClips.framesPerPhoto).prefix(VideoClips.framesPerPhoto).allSatisfy {
                $0 == "bald eagle"
            })
        let summary = session.summary(of: outcome)
        #expect(summary.mode == "video" && summary.inferred == expected && summary.received == expected)
        #expect(summary.notPrinted == 0 && summary.failed == 0 && summary.inferenceMilliseconds != nil)
        #expect(try VideoClips.frameCount(folder.path("annotated.mp4")) == expected)
    }

    @Test("Interrupted: the session stops at once, says so, and still finishes the annotated video")
    func interrupted() async throws {
        let folder = try TemporaryFolder(prefix: "netrunner-session")
        defer { folder.remove() }
        let clip = try VideoClips.photos(in: folder.url.path)
        let model = try LoadedModel(.path(Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")))
        let pool = try VisionTaskPool(count: 1) { try ImageTask(model: model) }
        let source = VideoSource(clip)
        var options = FrameSource.Options(frameSize: .covering(pool.preprocessing.size))
        options.readsAtNativeRate = true  // 8 frames a second: 4 s in all
        let output = Collected()
        let session = StreamSession(
            source: source, modelName: model.name, runner: StreamRunner(pool: pool, mode: .video),
            frames: FrameSource(source, options: options), annotate: folder.path("annotated.mp4"), output: output)
        // Stopped once three answers have come.
        let outcome = await session.run(isInterrupted: { output.answers.withLock { $0.count >= 3 } })
        #expect(outcome.interrupted && outcome.error == nil)
        let count = output.answers.withLock { $0.count }
        #expect(count >= 3 && count < VideoClips.photoOrder.count * VideoClips.framesPerPhoto)
        #expect(try VideoClips.frameCount(folder.path("annotated.mp4")) >= 3)
    }
}
