#!/usr/bin/env bash
# Prints the README's library snippet (its first ```swift block that imports StorageGateway).
#   scripts/readme-snippet.sh            -> the snippet on stdout
#   scripts/readme-snippet.sh --check    -> fails unless Snippets/README/main.swift is that snippet
#   scripts/readme-snippet.sh --write    -> writes it there
# Snippets/README/main.swift is built with the package (the `readme-snippet` executable), so the
# README's code compiles as an app author would paste it.
set -euo pipefail
cd "$(dirname "$0")/.."
snippet() {
    awk '/^```swift/ { inside = 1; block = ""; next }
         /^```/ && inside { inside = 0; if (block ~ /import StorageGateway/) { printf "%s", block; exit } next }
         inside { block = block $0 "\n" }' README.md
}
case "${1:-}" in
--check)
    if ! diff -u Snippets/README/main.swift <(snippet); then
        echo "README.md's library snippet and Snippets/README/main.swift differ: run scripts/readme-snippet.sh --write" >&2
        exit 1
    fi
    echo "README.md's library snippet is Snippets/README/main.swift (compiled with the package)"
    ;;
--write) snippet > Snippets/README/main.swift ;;
*) snippet ;;
esac
