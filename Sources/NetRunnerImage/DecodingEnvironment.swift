/// Where photos decode and what large ones wait for: the decoder processes that take the formats
/// they name (``DecoderIsolation``) and the pixel budget large photos share (``PixelBudget``).
///
/// One value, carried by whatever decodes for others and bound around its work: a server's
/// engine binds its configuration's environment around every job a worker runs, a job (an
/// album run, `bulk` in a server) around its run. Unbound, a decode takes the process's default,
/// ``ImageDecoder/isolation`` and ``ImageDecoder/admission``, which only the command line's
/// start sets (decoder processes for HEIC and AVIF, no budget):
///
///     let environment = DecodingEnvironment(
///         isolation: DecoderIsolation(.init(children: 2)), admission: PixelBudget(capacity: 200_000_000))
///     let image = try ImageDecoder.$environment.withValue(environment) {
///         try ImageDecoder.decode(contentsOf: "IMG_0001.HEIC")  // in one of its two children
///     }
public struct DecodingEnvironment: Sendable {
    /// The pool that decodes the formats it names out of process; `nil`: every format here.
    public var isolation: DecoderIsolation?
    /// The budget large photos share while they decode; `nil`: every photo at once.
    public var admission: PixelBudget?

    /// Creates an environment.
    ///
    /// - Parameters:
    ///   - isolation: The decoder processes, or `nil` to decode everything in this process.
    ///   - admission: The pixel budget, or `nil` to admit every photo at once.
    public init(isolation: DecoderIsolation? = nil, admission: PixelBudget? = nil) {
        self.isolation = isolation
        self.admission = admission
    }

    /// Every format in this process, every photo at once.
    public static let inProcess = DecodingEnvironment()
}

extension ImageDecoder {
    /// The environment decodes on this task (or thread) take, when one is bound; `nil` (unbound)
    /// takes the process's default, ``isolation`` and ``admission``.
    @TaskLocal public static var environment: DecodingEnvironment?

    /// What a decode here takes: the bound environment, else the process's default.
    static var current: DecodingEnvironment {
        environment ?? DecodingEnvironment(isolation: isolation, admission: admission)
    }
}
