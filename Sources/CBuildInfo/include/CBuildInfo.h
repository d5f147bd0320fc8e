// What a build is of: the commit it was built from, captured at build time. Our own
// declaration; nothing else.
#ifndef NETRUNNER_CBUILDINFO_H
#define NETRUNNER_CBUILDINFO_H

/// The abbreviated commit of the sources this build was made from ("62e46ba"), or "unknown"
/// when the build was not told (a plain `swift build`, a tarball without .git). A static
/// string: never freed.
const char *_Nonnull nr_build_commit(void);

#endif
