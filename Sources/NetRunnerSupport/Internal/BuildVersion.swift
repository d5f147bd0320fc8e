import CBuildInfo

/// What this build is: the release number and the commit it was built from, as `--version`,
/// the hub's health answer and serve's server metadata say it (`0.2.0 (62e46ba)`).
///
/// The commit is captured when the build is made (the Makefile passes it as `NETRUNNER_COMMIT`;
/// Package.swift turns it into a define of one C file), `unknown` for a build that was not told
/// (a plain `swift build`, a source tarball without `.git`).
package enum BuildVersion {
    /// The release number, raised by hand with each release.
    package static let release = "0.2.0"

    /// The abbreviated commit of the sources (`62e46ba`), or `unknown`.
    package static let commit = String(cString: nr_build_commit())

    /// The release and the commit: `0.2.0 (62e46ba)`.
    package static let description = "\(release) (\(commit))"
}
