import HTTPTypes
import Hummingbird
import NIOCore
import NetRunnerEngine
import NetRunnerImage
import NetRunnerSupport

/// What the routes that render a photo as a JPEG share (`POST /v1/render`, an album's
/// `images/{index}?render=jpeg`): the size asked for, and the answer.
///
/// A rendering is for a browser that cannot draw the photo itself (HEIC, TIFF; AVIF in older
/// browsers): the page draws the answers' boxes, keypoints and masks over it.
enum ImageRendering {
    /// The largest longest side a rendering may have, and the default (`?max=`).
    static let maximumSide = 2048

    /// A query parameter of a rendering out of range, or unknown: 400.
    struct Invalid: KindedFailure {
        /// What is wrong, for the client.
        var description: String
        /// A client's mistake: 400.
        var failureKind: FailureKind { .invalid }
    }

    /// The longest side asked for with `?max=N`: a whole number from 1 to ``maximumSide``, given
    /// at most once; ``maximumSide`` when absent.
    ///
    /// - Parameters:
    ///   - query: The request's query parameters.
    ///   - known: The parameters the route takes besides `max`, or `nil` when it leaves others
    ///     alone (they are then not checked).
    /// - Returns: The longest side.
    /// - Throws: ``Invalid`` for another value, or for a parameter not in `known`.
    static func longestSide(_ query: Parameters, known: Set<String>?) throws(Invalid) -> Int {
        if let known {
            for name in query.map({ String($0.key) }) where name != "max" && !known.contains(name) {
                let takes = (known.sorted() + ["max"]).joined(separator: ", ")
                throw Invalid(description: "Unknown query parameter \"\(name)\": this route takes \(takes).")
            }
        }
        let given = query.getAll("max")
        guard let text = given.first else { return maximumSide }
        guard given.count == 1 else {
            throw Invalid(
                description: "max is given \(given.count) times: give it once, a whole number of pixels from 1 to "
                    + "\(maximumSide).")
        }
        // A checked conversion: digits only (no sign, no spaces), at most 4 of them, then the range.
        guard text.utf8.count <= 4, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text),
            (1...maximumSide).contains(value)
        else {
            throw Invalid(
                description:
                    "max must be a whole number of pixels from 1 to \(maximumSide), not \"\(text.prefix(32))\".")
        }
        return value
    }

    /// The answer of a rendering: the JPEG, with the photo's own size (upright) in `Image-Width`
    /// and `Image-Height` (the answers' coordinates are in it; the JPEG's own may be smaller).
    static func response(_ rendered: RenderedImage) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "image/jpeg", .imageWidth: String(rendered.originalSize.width),
                .imageHeight: String(rendered.originalSize.height),
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: rendered.jpeg)))
    }
}
