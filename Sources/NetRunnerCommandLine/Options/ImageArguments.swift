import ArgumentParser
import FoundationEssentials
import NetRunner
import NetRunnerImage
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Image files and folders named on the command line.
package struct ImageArguments: ParsableArguments {
    @Argument(help: "Image files (\(ImageDecoder.decodedFormats)) or folders of them (searched recursively).")
    var images: [String] = []

    /// The image files found, and the folders (or entries) that could not be listed.
    typealias Listing = ImageFiles.Listing

    /// The image files: named files as given, folders expanded (sorted, recursively); an
    /// entry that cannot be read is listed apart and the search goes on.
    func listing() -> Listing {
        ImageFiles.listing(of: images)
    }

    /// The image files, each entry that could not be searched reported on stderr (the run
    /// goes on with the others and counts them as failures), or a usage error naming the
    /// arguments when there are none.
    ///
    /// - Returns: The files, and how many entries could not be read.
    /// - Throws: `ValidationError` when the arguments name no image file.
    func requiredFiles() throws -> (files: [String], unreadable: Int) {
        let listing = listing()
        for entry in listing.unreadable {
            Console.diagnostic("\(entry.path): cannot search it: \(entry.reason); skipped.")
        }
        if !listing.skipped.isEmpty {
            let kinds = listing.skipped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            Console.diagnostic(
                "note: skipped \(listing.skipped.values.reduce(0, +)) image file(s) of formats not decoded here ("
                    + kinds.joined(separator: ", ") + "); convert them to JPEG or PNG to include them.")
        }
        guard !listing.files.isEmpty else {
            throw ValidationError(
                "No image files found in \(images.joined(separator: ", "))"
                    + (listing.unreadable.isEmpty ? "." : " (\(listing.unreadable.count) unreadable entries)."))
        }
        return (listing.files, listing.unreadable.count)
    }

    package static func isDirectory(_ path: String) -> Bool { ImageFiles.isDirectory(path) }
}
