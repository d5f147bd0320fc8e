internal import CImageCodecs

/// The versions of the system image libraries NetRunnerImage decodes and encodes with.
public enum ImageLibraries {
    /// The libpng version in use, as `major.minor.patch`.
    public static var libpngVersion: String {
        let number = Int(nr_png_library_version())
        return "\(number / 10000).\(number / 100 % 100).\(number % 100)"
    }

    /// The libjpeg API version the JPEG codec was built against (62 for libjpeg-turbo's 6b API).
    public static var libjpegAPIVersion: Int { Int(nr_jpeg_library_version()) }
}
