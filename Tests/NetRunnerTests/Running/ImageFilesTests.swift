import Foundation
import NetRunner
import NetRunnerImage
import NetRunnerTestSupport
import Testing

/// The folder lister reads ``ImageFormat``'s table (issue 55, "A photo format is one table").
@Suite("Folder listings: the extensions of ImageFormat's table")
struct ImageFilesTests {
    @Test("A folder walk takes a file of every extension of every format, in either case, and counts the others")
    func extensionsOfTheTable() throws {
        #expect(ImageFiles.extensions == ImageFormat.allFileExtensions)
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var expected: [String] = []
        for (index, name) in ImageFormat.allFileExtensions.sorted().enumerated() {
            let file = "photo\(index)." + (index.isMultiple(of: 2) ? name : name.uppercased())
            expected.append(try folder.write(Data([0]), named: file))
        }
        try folder.write(Data([0]), named: "notes.txt")
        try folder.write(Data([0]), named: "scan.jxl")
        let listing = ImageFiles.listing(of: [folder.url.path])
        #expect(listing.files.sorted() == expected.sorted())
        #expect(listing.skipped == ["jxl": 1])
    }
}
