import FoundationEssentials
import Hummingbird
import NIOCore
import NetRunnerHTTP
import NetRunnerImage
import NetRunnerSupport

/// The image of an upload.
///
/// The raw body (`image/jpeg`, `image/png`, ... or `application/octet-stream`, as
/// `curl --data-binary @cat.jpg` sends it) or the file part of a browser form
/// (`multipart/form-data`).
///
/// The multipart parser is ours, a few dozen lines: multipart-kit imports full Foundation,
/// which would cost every `netrunner` command ICU's start-up time.
struct ImageUpload {
    /// The encoded image.
    var data: Data
    /// The file name the client gave, else `upload`.
    var name: String

    /// The image types sent as themselves that are decoded here: every format's MIME types,
    /// read from ``ImageFormat``'s table.
    static let decodedTypes: Set<String> = Set(ImageFormat.allCases.flatMap { [$0.mimeType] + $0.otherMIMETypes })

    /// Reads the upload, or says what is wrong with it.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - limit: The largest body accepted, in bytes.
    /// - Returns: The upload.
    /// - Throws: ``UploadError``: too large (413), not an image type (415), malformed (400).
    static func read(_ request: Request, limit: Int) async throws(UploadError) -> ImageUpload {
        let contentType = request.headers[.contentType] ?? "application/octet-stream"
        let mediaType = contentType.split(separator: ";").first.map { trimmed($0).lowercased() }
        let isMultipart = mediaType == "multipart/form-data"
        // curl --data-binary sends application/x-www-form-urlencoded unless told otherwise:
        // the bytes are sniffed either way.
        let rawTypes: Set<String> = ["application/octet-stream", "application/x-www-form-urlencoded"]
        guard isMultipart || rawTypes.contains(mediaType ?? "") || decodedTypes.contains(mediaType ?? "") else {
            throw .unsupportedType(
                "Content-Type \(contentType) is not an image decoded here: send an image (\(ImageDecoder.decodedFormats)) "
                    + "as image/jpeg, image/heic... (or application/octet-stream), or a multipart/form-data form."
            )
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw .tooLarge(limit: limit)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw .tooLarge(limit: limit)
        } catch {
            throw .badRequest("The upload could not be read: \(error)")
        }
        let bytes = Data(body.readableBytesView)
        guard isMultipart else {
            guard !bytes.isEmpty else { throw .badRequest("The body is empty: send the image's bytes.") }
            return ImageUpload(data: bytes, name: "upload")
        }
        guard let boundary = parameter("boundary", in: contentType) else {
            throw .badRequest("A multipart/form-data body needs a boundary in its Content-Type.")
        }
        guard let part = firstFile(in: bytes, boundary: boundary) else {
            throw .badRequest("The form has no file part: add the image as a file field.")
        }
        guard !part.data.isEmpty else { throw .badRequest("The form's file \(part.name) is empty.") }
        return part
    }

    /// A parameter of a header value (`boundary=...`), quotes removed.
    static func parameter(_ name: String, in value: String) -> String? {
        for piece in value.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1).map { trimmed($0) }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            var found = pair[1]
            if found.hasPrefix("\""), found.hasSuffix("\""), found.count >= 2 {
                found = String(found.dropFirst().dropLast())
            }
            return found.isEmpty ? nil : found
        }
        return nil
    }

    /// The first part of a form with a file name (else named `image` or `file`).
    static func firstFile(in body: Data, boundary: String) -> ImageUpload? {
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        var candidates: [ImageUpload] = []
        var position = find(delimiter, in: bytes, from: 0)
        while let start = position {
            var cursor = start + delimiter.count
            // "--" after the delimiter ends the form.
            if cursor + 1 < bytes.count, bytes[cursor] == 0x2D, bytes[cursor + 1] == 0x2D { break }
            guard let headersEnd = find(Array("\r\n\r\n".utf8), in: bytes, from: cursor) else { break }
            let headers = String(decoding: bytes[cursor..<headersEnd], as: UTF8.self)
            cursor = headersEnd + 4
            guard let next = find(Array("\r\n".utf8) + delimiter, in: bytes, from: cursor) else { break }
            var name: String?
            var fileName: String?
            for line in headers.split(whereSeparator: \.isNewline)
            where line.lowercased().hasPrefix("content-disposition:") {
                name = parameter("name", in: String(line))
                fileName = parameter("filename", in: String(line))
            }
            let part = ImageUpload(data: Data(bytes[cursor..<next]), name: fileName ?? name ?? "upload")
            if fileName != nil { return part }
            if name == "image" || name == "file" { candidates.append(part) }
            position = next + 2
        }
        return candidates.first
    }

    /// The text without leading and trailing spaces and tabs.
    static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        var index = start
        let first = needle[0]
        while index <= haystack.count - needle.count {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

/// What is wrong with an upload, and what kind of failure (413, 415, 400).
enum UploadError: KindedFailure {
    case tooLarge(limit: Int)
    case unsupportedType(String)
    case badRequest(String)

    var failureKind: FailureKind {
        switch self {
        case .tooLarge: .tooLarge
        case .unsupportedType: .unsupportedType
        case .badRequest: .invalid
        }
    }

    var description: String {
        switch self {
        case .tooLarge(let limit):
            "The upload is larger than the limit of \(limit) bytes (netrunner serve --max-upload-bytes)."
        case .unsupportedType(let message), .badRequest(let message): message
        }
    }
}
