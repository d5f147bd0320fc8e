/// Which answers a task reports, by MediaPipe's and the Task Library's names.
///
/// What `classify`, `detect` and `bulk` take as flags and the server as query parameters. Each
/// `nil` leaves the choice to the task (see ``VisionTaskOptions/apply(_:)``).
///
///     var results = ResultOptions()
///     results.maxResults = 3
///     var options = ImageTask.Options()
///     options.results = results              // a classifier keeps 3, a detector 3 boxes
public struct ResultOptions: Equatable, Hashable, Sendable {
    /// The most answers per image, best first; `nil` for the task's default (5 labels for a
    /// classifier, every detection above the threshold for a detector).
    public var maxResults: Int? = nil
    /// Answers scoring below this are left out; `nil` for the task's default (a classifier's
    /// model's recommended threshold if its metadata has one, else no category scoring 0;
    /// 0.5 for a detector).
    public var scoreThreshold: Float? = nil
    /// If not empty, only these labels are reported.
    public var categoryAllowlist: [String] = []
    /// These labels are never reported.
    public var categoryDenylist: [String] = []
    /// A segmenter's category mask size (``ImageSegmenter/Options/maskResolution``).
    ///
    /// `nil` for the task's default, the image's size. Other tasks ignore it.
    public var maskResolution: CategoryMask.Resolution? = nil

    /// Creates the defaults: every choice left to the task.
    public init() {}

    /// Creates result options.
    ///
    /// - Parameters:
    ///   - maxResults: The most answers per image.
    ///   - scoreThreshold: The lowest score reported.
    ///   - categoryAllowlist: The only labels reported, if not empty.
    ///   - categoryDenylist: Labels never reported.
    ///   - maskResolution: A segmenter's mask size.
    public init(
        maxResults: Int? = nil, scoreThreshold: Float? = nil, categoryAllowlist: [String] = [],
        categoryDenylist: [String] = [], maskResolution: CategoryMask.Resolution? = nil
    ) {
        self.maxResults = maxResults
        self.scoreThreshold = scoreThreshold
        self.categoryAllowlist = categoryAllowlist
        self.categoryDenylist = categoryDenylist
        self.maskResolution = maskResolution
    }

    /// An answer as it is shown: without a score threshold, a classifier's labels that would
    /// print as 0.0000 are left out (``ImageAnswer/withoutUnprintableScores``), as `classify`,
    /// `bulk` and the server show them.
    ///
    /// - Parameter answer: The answer.
    /// - Returns: The answer to show.
    public func shown(_ answer: ImageAnswer) -> ImageAnswer {
        scoreThreshold == nil ? answer.withoutUnprintableScores : answer
    }
}
