import Foundation
import NetRunner
import NetRunnerTestSupport
import Testing

/// One options shape: every task's options hold the same ``BaseOptions``, and each applies the
/// shared ``ResultOptions`` with its own defaults (what the CLI's flags and the server's query
/// parameters set).
@Suite("Task options: base options and result options")
struct TaskOptionsTests {
    @Test("Each task applies the result options with its own defaults, and carries the base options")
    func defaultsAndCarry() {
        var options = ImageTask.Options()
        #expect(options.classifierOptions.maxResults == 5 && options.classifierOptions.scoreThreshold == nil)
        #expect(options.detectorOptions.maxResults == nil && options.detectorOptions.scoreThreshold == 0.5)

        options.results = ResultOptions(maxResults: 3, scoreThreshold: 0.2, categoryDenylist: ["face"])
        options.threadCount = 3
        options.scalesWhileDecoding = true
        let classifier = options.classifierOptions
        let detector = options.detectorOptions
        #expect(classifier.maxResults == 3 && classifier.scoreThreshold == 0.2)
        #expect(detector.maxResults == 3 && detector.scoreThreshold == 0.2)
        #expect(classifier.categoryDenylist == ["face"] && detector.categoryDenylist == ["face"])
        #expect(options.baseOptions.threadCount == 3 && options.baseOptions.scalesWhileDecoding)
        #expect(classifier.baseOptions == options.baseOptions && detector.baseOptions == options.baseOptions)
        #expect(classifier.threadCount == 3 && detector.scalesWhileDecoding)
        // A pose is one answer: the score threshold is its minimum pose score.
        #expect(options.poseOptions.minPoseScore == 0.2 && ImageTask.Options().poseOptions.minPoseScore == 0)
    }

    @Test("maxResults from ImageTask.Options reaches the classifier: its top 3 are its default top 5's first 3")
    func maxResultsReachesTheModel() throws {
        let bundle = Fixtures.path("Models/bundles/mobilenet_v2_1.0_224_uint8.tiobundle")
        let image = Fixtures.path("Tests/Fixtures/Photos/test/coffee.jpg")
        guard case .classification(let top5) = try ImageTask(modelAt: bundle).run(fileAt: image) else {
            Issue.record("not a classification")
            return
        }
        var options = ImageTask.Options()
        options.results.maxResults = 3
        guard case .classification(let top3) = try ImageTask(modelAt: bundle, options: options).run(fileAt: image)
        else {
            Issue.record("not a classification")
            return
        }
        #expect(top5.categories.count == 5)
        #expect(top3.categories == Array(top5.categories.prefix(3)))
        #expect(top3.categories.first?.displayName == "espresso")
    }
}
