// The commit comes in as a define of this one file (Package.swift's NETRUNNER_COMMIT, from the
// environment the Makefile sets): a new commit recompiles this file and relinks, nothing more.
#include "CBuildInfo.h"

#ifndef NETRUNNER_COMMIT
#define NETRUNNER_COMMIT "unknown"
#endif

const char *nr_build_commit(void) { return NETRUNNER_COMMIT; }
