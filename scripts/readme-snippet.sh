#!/usr/bin/env bash
# Keeps the documentation's Swift snippets compiled, verbatim:
# - the README's library snippet (its first ```swift block that imports StorageGateway) is
#   Snippets/README/main.swift, built with the package (the `readme-snippet` executable);
# - docs/configuration.md's registration snippet (the ```swift block that calls
#   `registry.register`) is Tests/AppAuthorTests/RegistrationSnippet.swift, wrapped in a function
#   the app-author tests call.
#   scripts/readme-snippet.sh            -> the README snippet on stdout
#   scripts/readme-snippet.sh --check    -> fails unless both files are their snippets
#   scripts/readme-snippet.sh --write    -> writes them
set -euo pipefail
cd "$(dirname "$0")/.."
# block FILE PATTERN: the first ```swift block of FILE that matches PATTERN.
block() {
    awk -v pattern="$2" '/^```swift/ { inside = 1; block = ""; next }
         /^```/ && inside { inside = 0; if (block ~ pattern) { printf "%s", block; exit } next }
         inside { block = block $0 "\n" }' "$1"
}
snippet() { block README.md 'import StorageGateway'; }
registration() {
    echo "// Written by scripts/readme-snippet.sh from docs/configuration.md (\"Registering your own"
    echo "// provider type\"): the snippet verbatim, inside a function the tests call. Do not edit."
    echo "import StorageGateway"
    echo
    echo "func registrationSnippet() throws -> ProviderRegistry {"
    block docs/configuration.md 'registry.register' | sed 's/^/    /; s/^    $//'
    echo "    return registry"
    echo "}"
}
case "${1:-}" in
--check)
    status=0
    diff -u Snippets/README/main.swift <(snippet) ||
        { echo "README.md's library snippet and Snippets/README/main.swift differ: run scripts/readme-snippet.sh --write" >&2; status=1; }
    diff -u Tests/AppAuthorTests/RegistrationSnippet.swift <(registration) ||
        { echo "docs/configuration.md's registration snippet and Tests/AppAuthorTests/RegistrationSnippet.swift differ: run scripts/readme-snippet.sh --write" >&2; status=1; }
    [ $status -eq 0 ] && echo "the README's library snippet and docs/configuration.md's registration snippet are compiled verbatim"
    exit $status
    ;;
--write)
    snippet > Snippets/README/main.swift
    registration > Tests/AppAuthorTests/RegistrationSnippet.swift
    ;;
*) snippet ;;
esac
