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

    /// The longest side asked for with `?max=N`: a whole number from 1 to ``maximumSide``, given
    /// at most once; ``maximumSide`` when absent.
    ///
    /// - Parameters:
    ///   - query: The request's query parameters.
    ///   - known: The parameters the route takes besides `max`, or `nil` when it leaves others
    ///     alone (they are then not checked).
    /// - Returns: The longest side.
    /// - Throws: ``QueryParameterError`` for another value, or for a parameter not in `known`.
    static func longestSide(_ query: Parameters, known: Set<String>?) throws(QueryParameterError) -> Int {
        if let known { try QueryParameters.refuseUnknown(query, known: known.sorted() + ["max"]) }
        return try QueryParameters.wholeNumber("max", in: query, range: 1...maximumSide, unit: " of pixels")
            ?? maximumSide
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
