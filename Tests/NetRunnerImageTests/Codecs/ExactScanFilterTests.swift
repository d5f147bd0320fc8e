import Foundation
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// Issue 54, finding 7: at 1/8 the "exact" scan filter (``ProgressiveScans/needed``) gives the
/// pixels of a read of every scan, or refuses as it refuses, on files crafted to tell them apart
/// (tools/trial/make_scan_filter_cases.py, from `wide_420_progressive`). Before the fix: mean
/// 2.7 levels off with a repeated component id, 4.0 with chroma DC only, 0.28 with chroma AC
/// never refined, and a file with an end of image planted in a dropped scan decoded.
@Suite("Progressive JPEGs: the exact scan filter is exact on crafted files")
struct ExactScanFilterTests {
    static func data(_ name: String) throws -> Data {
        try Fixtures.data("Tests/Fixtures/Hostile/scan_filter/\(name).jpg")
    }

    /// Decodes at 1/8 of the fixtures' 203x133, reading `scans`.
    static func decode(_ data: Data, scans: ProgressiveScans) throws -> DecodedImage {
        try ProgressiveScanTests.decode(data, numerator: 1, scans: scans)
    }

    @Test(
        "Files the full read decodes: the filtered read's pixels are the same, byte for byte",
        arguments: ["repeated_id", "chroma_dc_only_eoi", "chroma_dc_only_end", "chroma_never_refined"])
    func sameBytes(name: String) throws {
        let data = try Self.data(name)
        let all = try Self.decode(data, scans: .all)
        let needed = try Self.decode(data, scans: .needed)
        #expect(needed.pixels.size == all.pixels.size)
        #expect(
            needed.pixels.packedBytes == all.pixels.packedBytes,
            "\(ByteDifference(needed.pixels.packedBytes, all.pixels.packedBytes))")
    }

    /// A dropped scan cut short (by an end of image with the rest of the scan after it, or by
    /// the end of the file): the full read refuses, and so does the filtered read, alike.
    @Test(
        "Files the full read refuses: the filtered read refuses them alike",
        arguments: [
            "dropped_scan_eoi", "dropped_scan_cut",
        ])
    func sameRefusal(name: String) throws {
        let data = try Self.data(name)
        var refusal: ImageError?
        do { _ = try Self.decode(data, scans: .all) } catch { refusal = error as? ImageError }
        let expected = try #require(refusal, "a read of every scan refuses \(name)")
        #expect(throws: expected) { try Self.decode(data, scans: .needed) }
    }
}
