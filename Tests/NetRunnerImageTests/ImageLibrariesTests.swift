import NetRunnerImage
import Testing

@Suite("System image libraries")
struct ImageLibrariesTests {
    @Test("libpng 1.6 and the libjpeg-turbo 6b API are linked")
    func versions() {
        #expect(ImageLibraries.libpngVersion.hasPrefix("1.6."))
        #expect(ImageLibraries.libjpegAPIVersion == 62)
    }
}
