// What a decoder child and its parent say to each other over their socket, and the child's loop.
//
//   hello:    "NRD1" | u8 kind 2 | u32 header length | header JSON {state, detail}, the child's
//             first message, once its sandbox is in place (DecoderSandbox)
//   request:  "NRD1" | u32 header length | header JSON {source, options} | u64 data length | data
//   response: "NRD1" | u8 kind (0 image, 1 error) | u32 header length | header JSON
//             | (image) the pixels, packed rows, exactly width x height x bytes per pixel
//
// Integers little-endian. The parent trusts nothing the child sends: the header's length is
// bounded, the image's size is checked against the parent's own pixel limit before anything is
// allocated, and a response that is not one of these two is a failure of the child.

import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum DecoderWire {
    static let magic: [UInt8] = Array("NRD1".utf8)
    /// The longest header either side accepts.
    static let maximumHeaderBytes = 1 << 20
    /// The environment variable a child reads to fail on purpose (tests): `crash` raises
    /// SIGSEGV and `hang` never answers, once a request has been read; the sandbox's probes
    /// and `skip-sandbox` are DecoderSandbox's.
    static let faultEnvironmentVariable = "NETRUNNER_DECODER_FAULT"

    struct RequestHeader: Codable {
        var source: String
        var options: DecodingOptions
    }

    struct ImageHeader: Codable {
        var width: Int
        var height: Int
        var pixelFormat: PixelFormat
        var format: ImageFormat
        var orientation: ImageOrientation
        var storedSize: PixelSize
        var scaleNumerator: Int
        var fullSize: PixelSize
        var region: PixelRect
        var isUpright: Bool
    }

    /// Why an exchange with a child produced no answer.
    enum Failure: Error, Equatable {
        case timedOut
        case closed
        case failed(Int32)
        /// The child answered something that is not a response.
        case malformed(String)

        init(_ failure: DecoderChildProcess.Failure) {
            switch failure {
            case .timedOut: self = .timedOut
            case .closed: self = .closed
            case .failed(let code): self = .failed(code)
            }
        }
    }

    enum Outcome {
        /// The child's answer: the image, or the decoder's own error.
        case answer(Result<DecodedImage, ImageError>)
        /// No answer; the child must be ended.
        case failed(Failure)
    }

    struct Request {
        var head: [UInt8]
        var data: Data
    }

    static func request(data: Data, options: DecodingOptions, source: String) -> Request {
        // Encoding these plain values cannot fail.
        let header = (try? JSONEncoder().encode(RequestHeader(source: source, options: options))) ?? Data()
        var head = magic
        append(UInt32(header.count), to: &head)
        head.append(contentsOf: header)
        append(UInt64(data.count), to: &head)
        return Request(head: head, data: data)
    }

    /// Reads a child's hello before `deadline`.
    static func hello(from child: DecoderChildProcess, deadline: Double) -> Result<DecoderSandbox.Hello, Failure> {
        var fixed = [UInt8](repeating: 0, count: 9)
        if let failure = fixed.withUnsafeMutableBytes({ child.read(into: $0, deadline: deadline) }) {
            return .failure(Failure(failure))
        }
        guard Array(fixed[0..<4]) == magic, fixed[4] == 2 else { return .failure(.malformed("no hello")) }
        let length = Int(readUInt32(fixed, at: 5))
        guard length <= maximumHeaderBytes else { return .failure(.malformed("a hello of \(length) bytes")) }
        var header = [UInt8](repeating: 0, count: length)
        if let failure = header.withUnsafeMutableBytes({ child.read(into: $0, deadline: deadline) }) {
            return .failure(Failure(failure))
        }
        guard let hello = try? JSONDecoder().decode(DecoderSandbox.Hello.self, from: Data(header)) else {
            return .failure(.malformed("an unreadable hello"))
        }
        return .success(hello)
    }

    /// Sends the request and reads the response, all before `deadline`.
    static func exchange(
        _ request: Request, with child: DecoderChildProcess, deadline: Double, maximumPixelCount: Int
    ) -> Outcome {
        if let failure = request.head.withUnsafeBytes({ child.write($0, deadline: deadline) }) {
            return .failed(Failure(failure))
        }
        if let failure = request.data.withUnsafeBytes({ child.write($0, deadline: deadline) }) {
            return .failed(Failure(failure))
        }
        var fixed = [UInt8](repeating: 0, count: 9)
        if let failure = fixed.withUnsafeMutableBytes({ child.read(into: $0, deadline: deadline) }) {
            return .failed(Failure(failure))
        }
        guard Array(fixed[0..<4]) == magic, fixed[4] <= 1 else { return .failed(.malformed("no response")) }
        let length = Int(readUInt32(fixed, at: 5))
        guard length <= maximumHeaderBytes else { return .failed(.malformed("a header of \(length) bytes")) }
        var header = [UInt8](repeating: 0, count: length)
        if let failure = header.withUnsafeMutableBytes({ child.read(into: $0, deadline: deadline) }) {
            return .failed(Failure(failure))
        }
        if fixed[4] == 1 {
            guard let error = try? JSONDecoder().decode(ImageError.self, from: Data(header)) else {
                return .failed(.malformed("an unreadable error"))
            }
            return .answer(.failure(error))
        }
        guard let image = try? JSONDecoder().decode(ImageHeader.self, from: Data(header)) else {
            return .failed(.malformed("an unreadable image header"))
        }
        let (pixels, overflow) = image.width.multipliedReportingOverflow(by: image.height)
        guard image.width > 0, image.height > 0, !overflow, pixels <= max(maximumPixelCount, 1) else {
            return .failed(.malformed("an image of \(image.width)x\(image.height)"))
        }
        let buffer: PixelBuffer
        do {
            buffer = try PixelBuffer(width: image.width, height: image.height, format: image.pixelFormat, zeroed: false)
        } catch {
            return .answer(.failure(error))
        }
        let byteCount = buffer.bytesPerRow * buffer.height
        let target = UnsafeMutableRawBufferPointer(start: buffer.storage.base, count: byteCount)
        if let failure = child.read(into: target, deadline: deadline) { return .failed(Failure(failure)) }
        var decoded = DecodedImage(
            pixels: buffer, format: image.format, orientation: image.orientation, storedSize: image.storedSize,
            scaleNumerator: image.scaleNumerator, fullSize: image.fullSize, region: image.region)
        decoded.isUpright = image.isUpright
        return .answer(.success(decoded))
    }

    /// What is wrong with a child's image, or `nil` when nothing is.
    ///
    /// Held to what the parent knows without the child: the format it sniffed, the options it
    /// sent, the geometry it read from the file itself (``HEIFDeclaredGeometry``) and plain
    /// bounds. A child that answers otherwise is not believed.
    static func problem(
        with image: DecodedImage, format: ImageFormat, options: DecodingOptions, declared: HEIFDeclaredGeometry?
    ) -> String? {
        func fits(_ size: PixelSize) -> Bool {
            let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
            return size.width > 0 && size.height > 0 && !overflow && pixels <= max(options.maximumPixelCount, 1)
        }
        let stored = image.storedSize
        let full = image.fullSize
        let region = image.region
        guard image.format == format else { return "a \(image.format) image for a \(format) file" }
        guard fits(stored) else { return "a stored size of \(stored.width)x\(stored.height)" }
        if let declared {
            let upright = declared.upright
            let matches =
                declared.cropped
                ? stored.width <= upright.width && stored.height <= upright.height : stored == upright
            guard matches else {
                return "a stored size of \(stored.width)x\(stored.height) for a file that declares "
                    + "\(declared.coded.width)x\(declared.coded.height)"
            }
        }
        guard (1...8).contains(image.scaleNumerator) else { return "a scale of \(image.scaleNumerator)/8" }
        // The HEIF decoders apply the file's transformations themselves.
        guard image.orientation == .up, image.isUpright else { return "an orientation of \(image.orientation)" }
        let longest = max(stored.width, stored.height)
        guard fits(full), full.width <= longest, full.height <= longest,
            full.width * full.height <= stored.width * stored.height
        else { return "a full size of \(full.width)x\(full.height) for \(stored.width)x\(stored.height)" }
        guard region.x >= 0, region.y >= 0, region.width > 0, region.height > 0,
            region.width <= full.width - region.x, region.height <= full.height - region.y
        else { return "a region of \(region) in \(full.width)x\(full.height)" }
        guard image.pixels.size == PixelSize(width: region.width, height: region.height) else {
            return "\(image.pixels.width)x\(image.pixels.height) pixels for a region of \(region)"
        }
        if let wanted = options.pixelFormat, image.pixels.format != wanted {
            return "\(image.pixels.format) pixels where \(wanted) was asked for"
        }
        return nil
    }

    // MARK: - The child's side

    /// The child's loop; returns its exit status.
    ///
    /// Sets the child's limits, enters its sandbox and says so, then answers requests on fd 0 /
    /// fd 1 until the parent closes the socket.
    static func serveChild(memoryLimit: Int) -> Int32 {
        if memoryLimit > 0 {
            var limit = rlimit(rlim_cur: rlim_t(memoryLimit), rlim_max: rlim_t(memoryLimit))
            setrlimit(Int32(RLIMIT_AS.rawValue), &limit)
        }
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(Int32(RLIMIT_CORE.rawValue), &noCore)
        let fault = getenv(faultEnvironmentVariable).map { String(cString: $0) }
        // Nothing untrusted has been read yet; from here on the child runs in its sandbox.
        let hello = (try? JSONEncoder().encode(DecoderSandbox.enter(fault: fault))) ?? Data()
        var greeting = magic + [2]
        append(UInt32(hello.count), to: &greeting)
        greeting.append(contentsOf: hello)
        guard writeAll(greeting) else { return 0 }
        while true {
            var fixed = [UInt8](repeating: 0, count: 8)
            guard readAll(&fixed), Array(fixed[0..<4]) == magic else { return 0 }
            let headerLength = Int(readUInt32(fixed, at: 4))
            guard headerLength <= maximumHeaderBytes else { return 4 }
            var header = [UInt8](repeating: 0, count: headerLength)
            var size = [UInt8](repeating: 0, count: 8)
            guard readAll(&header), readAll(&size),
                let request = try? JSONDecoder().decode(RequestHeader.self, from: Data(header))
            else { return 4 }
            let dataLength = readUInt64(size, at: 0)
            guard dataLength <= UInt64(max(request.options.maximumFileSize, 0)), dataLength <= UInt64(Int32.max) else {
                return 4
            }
            var bytes = [UInt8](repeating: 0, count: Int(dataLength))
            guard readAll(&bytes) else { return 4 }
            switch fault {
            case "crash"?: raise(SIGSEGV)
            case "hang"?: while true { sleep(60) }
            default:
                if let probed = DecoderSandbox.probe(fault) {
                    guard send(.failure(probed)) else { return 0 }
                    continue
                }
            }
            let result = Result { () throws(ImageError) -> DecodedImage in
                try ImageDecoder.decode(data: Data(bytes), options: request.options, source: request.source)
            }
            guard send(result) else { return 0 }
        }
    }

    private static func send(_ result: Result<DecodedImage, ImageError>) -> Bool {
        var response = magic
        let header: Data
        switch result {
        case .success(let image):
            response.append(0)
            let pixels = image.pixels
            header =
                (try? JSONEncoder().encode(
                    ImageHeader(
                        width: pixels.width, height: pixels.height, pixelFormat: pixels.format, format: image.format,
                        orientation: image.orientation, storedSize: image.storedSize,
                        scaleNumerator: image.scaleNumerator, fullSize: image.fullSize, region: image.region,
                        isUpright: image.isUpright))) ?? Data()
        case .failure(let error):
            response.append(1)
            header = (try? JSONEncoder().encode(error)) ?? Data()
        }
        append(UInt32(header.count), to: &response)
        response.append(contentsOf: header)
        guard writeAll(response) else { return false }
        if case .success(let image) = result {
            let pixels = image.pixels
            if pixels.bytesPerRow == pixels.width * pixels.format.bytesPerPixel {
                return writeAll(
                    UnsafeRawBufferPointer(start: pixels.storage.base, count: pixels.bytesPerRow * pixels.height))
            }
            return pixels.packedBytes.withUnsafeBytes { writeAll($0) }
        }
        return true
    }

    private static func readAll(_ bytes: inout [UInt8]) -> Bool {
        bytes.withUnsafeMutableBytes { buffer in
            guard var next = buffer.baseAddress else { return true }
            var left = buffer.count
            while left > 0 {
                let got = read(STDIN_FILENO, next, left)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return false }
                next += got
                left -= got
            }
            return true
        }
    }

    private static func writeAll(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll($0) }
    }

    private static func writeAll(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard var next = buffer.baseAddress else { return true }
        var left = buffer.count
        while left > 0 {
            let wrote = write(STDOUT_FILENO, next, left)
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { return false }
            next += wrote
            left -= wrote
        }
        return true
    }

    // MARK: - Integers

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    private static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
}
