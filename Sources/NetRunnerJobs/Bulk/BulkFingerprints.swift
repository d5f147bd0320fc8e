import FoundationEssentials
import NetRunner
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Each image's size, modification time and file number when a syncing run listed it
/// (``BulkSettings/sync``), kept beside its results file (`OUT.files.json`): the next such run
/// runs again the images whose fingerprint changed, and drops the lines of images no longer
/// listed, so that the file holds the folder as it is, having run only what is new or changed.
///
/// The fingerprint is taken before the run: a photo changed while it runs has another one
/// the next time, and runs again then. It is rsync's quick check (size and time) with the file
/// number, so that a photo replaced by a rename of another of the same size and time counts as
/// changed too.
package struct BulkFingerprints: Codable, Sendable, Equatable {
    /// One image's file as listed.
    package struct Fingerprint: Codable, Sendable, Equatable {
        /// Its size in bytes.
        package var size: Int64
        /// Its modification time, in nanoseconds since 1970.
        package var modified: Int64
        /// Its file number (inode).
        package var file: UInt64
    }

    /// What the file is (`netrunner-bulk-fingerprints`).
    package var format = "netrunner-bulk-fingerprints"
    /// Its layout's version (1).
    package var version = 1
    /// The fingerprints, by image as the results file spells it.
    package var images: [String: Fingerprint]

    /// Fingerprints of these images.
    ///
    /// - Parameter images: By image as the results file spells it.
    package init(images: [String: Fingerprint]) {
        self.images = images
    }

    /// Where a results file's fingerprints are kept.
    ///
    /// - Parameter output: The results file.
    /// - Returns: `OUTPUT.files.json`.
    package static func sidecar(for output: String) -> String { output + ".files.json" }

    /// A file's fingerprint, `nil` when it cannot be read (it is then kept as it was).
    ///
    /// - Parameter path: The image file.
    /// - Returns: Its size, modification time and file number.
    package static func fingerprint(of path: String) -> Fingerprint? {
        var info = stat()
        guard PathText.withCString(path, { stat($0, &info) }) == 0 else { return nil }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        let (seconds, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        return Fingerprint(
            size: Int64(info.st_size), modified: overflow ? Int64.max : seconds &+ Int64(time.tv_nsec),
            file: UInt64(info.st_ino))
    }

    /// The fingerprints kept beside a results file, `nil` when there are none.
    ///
    /// - Parameter output: The results file.
    /// - Returns: Its fingerprints.
    /// - Throws: ``BulkError/damagedRunDescription(file:reason:)`` for a file that is not one.
    package static func read(for output: String) throws(BulkError) -> BulkFingerprints? {
        let path = sidecar(for: output)
        guard access(path, F_OK) == 0 else { return nil }
        do {
            // A million photos' fingerprints take about 100 MB.
            let data = try FileIO.contents(of: path, maximumSize: 1 << 30)
            let read = try JSONDecoder().decode(BulkFingerprints.self, from: data)
            guard read.format == "netrunner-bulk-fingerprints", read.version == 1 else {
                throw BulkError.damagedRunDescription(
                    file: path, reason: "it is not NetRunner's fingerprints, version 1")
            }
            return read
        } catch let error as BulkError {
            throw error
        } catch {
            throw .damagedRunDescription(file: path, reason: "\(error)")
        }
    }

    /// Writes them beside a results file, whole or not at all.
    ///
    /// - Parameter output: The results file.
    /// - Throws: ``BulkError/unreadableResults(file:reason:)`` when it cannot be written.
    package func write(for output: String) throws(BulkError) {
        let path = Self.sidecar(for: output)
        do {
            try FileIO.writeAtomically(try JSONCoding.encoder().encode(self), to: path)
        } catch {
            throw .unreadableResults(file: path, reason: "\(error)")
        }
    }

    /// What a syncing run does to its results file: the lines of images changed since their
    /// fingerprint was kept, and of images no longer listed, taken out; then this run's
    /// fingerprints kept.
    ///
    /// - Parameters:
    ///   - results: The results file, opened.
    ///   - output: Its path.
    ///   - listed: Every image listed now, each with its spelling in the file.
    /// - Returns: How many lines were taken out because their image changed, and because it is
    ///   no longer listed.
    /// - Throws: ``BulkError`` when a file cannot be read or written (the results file is then
    ///   unchanged, or has lost only lines to run again).
    static func sync(
        _ results: BulkResultsFile, output: String, listed: [(path: String, key: String)]
    ) throws(BulkError) -> (changed: Int, removed: Int) {
        let before = try read(for: output)
        var now: [ExactString: Fingerprint] = [:]
        var isListed = Set<ExactString>()
        for (path, key) in listed {
            isListed.insert(ExactString(key))
            if let fingerprint = fingerprint(of: path) { now[ExactString(key)] = fingerprint }
        }
        // Kept by their exact bytes: `café.jpg` in NFC and in NFD are two images.
        let kept = Dictionary(
            (before?.images ?? [:]).map { (ExactString($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
        var (changed, removed) = (0, 0)
        try results.dropRecords { image, _ in
            guard isListed.contains(image) else {
                removed += 1
                return true
            }
            // An image without a kept fingerprint (a file from before syncing) stays as it is.
            if let old = kept[image], let current = now[image], old != current {
                changed += 1
                return true
            }
            return false
        }
        try BulkFingerprints(images: Dictionary(now.map { ($0.key.string, $0.value) }, uniquingKeysWith: { a, _ in a }))
            .write(for: output)
        return (changed, removed)
    }
}
