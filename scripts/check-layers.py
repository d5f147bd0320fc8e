#!/usr/bin/env python3
"""The house rules of Sources/, checked from the import lines (run by `make lint`).

1. Each module imports only the modules below it (the table MAY_IMPORT, the same as the table
   of docs/architecture.md): the lowest Swift layer never depends on the top one, only the two
   server modules import the HTTP server, only the hub client the HTTP client.
2. C modules are imported only from the folders that fence unsafe code (Internal/, Codecs/,
   Storage/).
3. Every top-level public type is declared in a file named after it (`X.swift`, or an
   extension file `X+Something.swift`).

Prints every violation with its file and line, and exits 1 if there is any.
"""
import os
import re
import sys

# Module -> the project and package modules it may import (system modules are always allowed).
MAY_IMPORT = {
    "NetRunnerFlatBuffers": set(),
    "NetRunnerSupport": {"CDigest", "CBuildInfo"},
    "TensorFlowLite": {"CLiteRT", "NetRunnerFlatBuffers", "Logging"},
    "NetRunnerImage": {"CImageCodecs", "NetRunnerSupport"},
    "NetRunner": {"TensorFlowLite", "NetRunnerImage", "NetRunnerFlatBuffers", "NetRunnerSupport", "CArchive", "CFaiss"},
    "NetRunnerEvaluation": {"NetRunner", "NetRunnerImage", "TensorFlowLite", "NetRunnerSupport"},
    # Above NetRunner: NetRunnerVideo and the command line (for netrunner-net) the only modules to
    # import Subprocess, NetRunnerHub the only one to import AsyncHTTPClient, and the two servers
    # and their shared NetRunnerHTTP the only ones to import Hummingbird.
    "NetRunnerVideo": {"NetRunnerImage", "NetRunnerSupport", "Subprocess", "SystemPackage", "System", "Logging"},
    "NetRunnerHub": {
        "NetRunner", "NetRunnerImage", "NetRunnerSupport", "AsyncHTTPClient", "Crypto", "Logging", "NIOCore", "NIOHTTP1",
    },
    "NetRunnerHubServer": {
        "NetRunnerHTTP", "NetRunner", "NetRunnerHub", "NetRunnerSupport", "Hummingbird", "SQLKit", "SQLiteKit", "PostgresKit",
        "Crypto", "Logging", "NIOCore", "HTTPTypes", "HummingbirdCore", "ServiceLifecycle", "UnixSignals",
    },
    # The HTTP plumbing of both servers.
    "NetRunnerHTTP": {
        "NetRunnerSupport", "Hummingbird", "HummingbirdCore", "HTTPTypes", "NIOCore", "NIOHTTPTypes", "NIOHTTP1", "Logging",
        "ServiceLifecycle", "UnixSignals",
    },
    # The jobs (bulk and evaluation runs, streams, the server's job store): no HTTP, no command line.
    # (TensorFlowLite for the runtime's Accelerator choice only.)
    "NetRunnerJobs": {"NetRunner", "NetRunnerImage", "NetRunnerVideo", "NetRunnerSupport", "NetRunnerEvaluation", "TensorFlowLite"},
    # The engine under serve, the model catalog, the KServe codec: no HTTP.
    "NetRunnerEngine": {"NetRunner", "NetRunnerImage", "NetRunnerSupport", "TensorFlowLite", "Logging"},
    "NetRunnerServer": {
        "NetRunnerHTTP", "NetRunnerEngine", "NetRunnerJobs", "NetRunner", "NetRunnerImage", "NetRunnerSupport", "NetRunnerVideo",
        "TensorFlowLite", "Hummingbird", "Logging", "Metrics", "Prometheus", "ServiceLifecycle", "NIOCore",
        "HTTPTypes", "HummingbirdWebSocket", "HummingbirdCore", "NIOWebSocket", "Prometheus", "NetRunnerHub",
        "UnixSignals",
    },
    # The command line: its commands, flags and printing, importing no HTTP stack (so the
    # `netrunner` executable builds without one); the networked commands in NetRunnerNet.
    "NetRunnerCommandLine": {
        "ArgumentParser", "NetRunner", "NetRunnerEvaluation", "NetRunnerImage", "NetRunnerSupport",
        "TensorFlowLite", "CEmbeddedModels", "NetRunnerEngine", "NetRunnerJobs", "NetRunnerVideo", "Logging",
        "Subprocess", "System", "SystemPackage",
    },
    "netrunner": {"NetRunnerCommandLine"},
    "NetRunnerNet": {
        "NetRunnerCommandLine", "ArgumentParser", "NetRunner", "NetRunnerEngine", "NetRunnerImage", "NetRunnerSupport",
        "TensorFlowLite", "NetRunnerVideo", "NetRunnerServer", "NetRunnerHub", "NetRunnerHubServer", "Logging", "NIOCore",
    },
}
SYSTEM = {"FoundationEssentials", "Glibc", "Darwin", "Dispatch", "Synchronization", "Musl", "Android"}
C_MODULES = {"CLiteRT", "CImageCodecs", "CArchive", "CEmbeddedModels", "CDigest", "CBuildInfo", "CFaiss"}
C_FOLDERS = ("/Internal/", "/Codecs/", "/Storage/")
IMPORT = re.compile(r"^\s*(?:@\w+\s+)*(?:public |package |internal |private |fileprivate )?import\s+(?:\w+\s+)?(\w+)")
PUBLIC_TYPE = re.compile(r"^public (?:final )?(?:struct|enum|class|protocol|actor) (\w+)")


def main(root):
    problems = []
    sources = os.path.join(root, "Sources")
    for module in sorted(os.listdir(sources)):
        folder = os.path.join(sources, module)
        swift_files = [
            os.path.join(dirpath, name)
            for dirpath, _, names in os.walk(folder)
            for name in names
            if name.endswith(".swift")
        ]
        if not swift_files:
            continue  # a C module
        if module not in MAY_IMPORT:
            problems.append(f"Sources/{module}: a module missing from scripts/check-layers.py's table")
            continue
        allowed = MAY_IMPORT[module]
        for path in sorted(swift_files):
            relative = os.path.relpath(path, root)
            base = os.path.basename(path)[: -len(".swift")]
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    found = IMPORT.match(line)
                    if found:
                        imported = found.group(1)
                        if imported in SYSTEM:
                            pass
                        elif imported not in allowed:
                            problems.append(f"{relative}:{number}: {module} may not import {imported}")
                        elif imported in C_MODULES and not any(part in "/" + relative for part in C_FOLDERS):
                            problems.append(
                                f"{relative}:{number}: C module {imported} imported outside Internal/, Codecs/, Storage/"
                            )
                    declared = PUBLIC_TYPE.match(line)
                    if declared and declared.group(1) != base and not base.startswith(declared.group(1) + "+"):
                        problems.append(f"{relative}:{number}: public type {declared.group(1)} belongs in its own file")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} layering problem(s); see the Layout section of README.md.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
