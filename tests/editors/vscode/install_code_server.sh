#!/bin/sh
# code-server (VS Code served to a browser, extension host and all) and playwright-core (to drive
# Debian's Chromium through the DevTools protocol), from the npm registry, into a cache folder:
# once per machine. Used by `make codeserver`; tests/editors/test_vscode.py runs them.
#
# code-server builds native modules when it is installed: they need a C++ toolchain and
# Kerberos' headers (libkrb5-dev). VS Code's search ships ripgrep through @vscode/ripgrep,
# whose install script downloads it from GitHub; Debian's ripgrep (the same 13.0.0) is put
# where that script looks first, its download cache. npx must not stop to ask
# (npm_config_yes), and install scripts run as root (npm_config_unsafe_perm).
set -eu

VERSION=4.99.4  # the last release for Node 20
PLAYWRIGHT=1.65.1
DIR="$HOME/.cache/assist/code-server-$VERSION"
RIPGREP_RELEASE=v13.0.0-10  # the ripgrep build @vscode/ripgrep 1.15-1.17 fetch

if [ -f "$DIR/.installed" ]; then
    exit 0
fi

missing=""
for package in g++ make python3 pkg-config libkrb5-dev ripgrep; do
    dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
done
if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

case "$(uname -m)" in
    x86_64) target=x86_64-unknown-linux-musl ;;
    aarch64) target=aarch64-unknown-linux-musl ;;
    *) echo "no ripgrep target for $(uname -m)" >&2; exit 1 ;;
esac
rm -rf "$DIR"
mkdir -p "$DIR/tmp"
asset="$DIR/tmp/ripgrep-$RIPGREP_RELEASE-$target.tar.gz"
tar czf "$asset" -C "$(dirname "$(command -v rg)")" rg
for version in $(npm view @vscode/ripgrep versions --json | tr -d '[]", ' | tr '\n' ' '); do
    mkdir -p "$DIR/tmp/vscode-ripgrep-cache-$version"
    cp "$asset" "$DIR/tmp/vscode-ripgrep-cache-$version/"
done

echo "installing code-server $VERSION and playwright-core $PLAYWRIGHT into $DIR (minutes)"
TMPDIR="$DIR/tmp" npm_config_yes=true npm_config_unsafe_perm=true \
    npm install --no-audit --no-fund --loglevel=error --prefix "$DIR" \
    "code-server@$VERSION" "playwright-core@$PLAYWRIGHT"
"$DIR/node_modules/.bin/code-server" --version >/dev/null
rm -rf "$DIR/tmp"
touch "$DIR/.installed"
