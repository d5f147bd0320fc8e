#!/usr/bin/env bash
# An app that depends on NetRunner's inference products with `traits: []` resolves none of the
# networked packages (Hummingbird, SwiftNIO, async-http-client, the SQL kits): Package.swift makes
# every dependency on them conditional on the `Networking` trait. Run by `make lint`: a new
# unconditional dependency on one of them fails here. Resolves only (seconds); nothing is built.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/Sources/App"
cat > "$app/Package.swift" <<MANIFEST
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "App",
    dependencies: [.package(path: "$root", traits: [])],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [
                .product(name: "TensorFlowLite", package: "$(basename "$root" | tr '[:upper:]' '[:lower:]')"),
                .product(name: "NetRunner", package: "$(basename "$root" | tr '[:upper:]' '[:lower:]')"),
            ])
    ]
)
MANIFEST
echo 'import NetRunner' > "$app/Sources/App/main.swift"
(cd "$app" && swift package resolve >/dev/null 2>&1) || { echo "check-library-traits: the app does not resolve"; exit 1; }
found=$(ls "$app/.build/checkouts")
networked=$(echo "$found" | grep -E '^(hummingbird|swift-nio|async-http-client|sql-kit|sqlite-kit|postgres-kit|swift-prometheus|swift-http-types)' || true)
if [[ -n "$networked" ]]; then
    echo "check-library-traits: an app using NetRunner with traits: [] still checks out: $(echo $networked)"
    echo "  make their product dependencies conditional on the Networking trait (Package.swift)"
    exit 1
fi
echo "check-library-traits: an app using NetRunner with traits: [] checks out $(echo "$found" | wc -l) packages: $(echo $found)"
