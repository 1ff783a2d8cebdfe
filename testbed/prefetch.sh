#!/usr/bin/env bash
# Download, in parallel, the Go modules every testbed build needs: each release's module file (and its oracle's,
# go.<release>.oracle.mod, where it has one), helm's
# (tools/go.mod) and the peers' (../shared/peers/*/go.mod when present). Only the module cache is written; a
# failure here is not fatal (the build that needs a module downloads it itself), so this only saves waiting.
#   prefetch.sh 1.37 1.36     # the releases to be built, in build order (go.<minor>.mod, else go.mod)
# GOTOOLCHAIN=local, except for a release whose build names a Go toolchain (GOTOOLCHAIN_<release> in the
# Makefile, e.g. go1.27.3 for 1.38): that one is fetched here too, through the module proxy like a module.
set -uo pipefail
cd "$(dirname "$0")"
GO=${GO:-go}
export GOTOOLCHAIN=local
pids=()
# One release's module files (and its Go toolchain, where it names one), downloaded in the background.
release_modules() {
	local release=$1 modfile toolchain
	modfile=go.$release.mod
	[ -f "$modfile" ] || modfile=go.mod
	toolchain=$(sed -n "s/^GOTOOLCHAIN_$release := \(go[0-9.]*\)\$/\1/p" Makefile)
	GOTOOLCHAIN=${toolchain:-local} "$GO" mod download -modfile="$modfile" >/dev/null 2>&1 &
	pids+=($!)
	# the oracle's own module file where the release has one (ORACLE_MODFILE_<release>: go.<release>.oracle.mod)
	if [ -f "go.$release.oracle.mod" ]; then
		GOTOOLCHAIN=${toolchain:-local} "$GO" mod download -modfile="go.$release.oracle.mod" >/dev/null 2>&1 &
		pids+=($!)
	fi
}
# The first release is built first: its modules come first, alone (about a minute for one release's 550 MB on the
# machine of 2026-12-08), so its compile does not share the network with four other releases' downloads.
if [ $# -gt 0 ]; then
	release_modules "$1"
	for p in "${pids[@]}"; do wait "$p" || true; done
	pids=()
	shift
fi
for release in "$@"; do release_modules "$release"; done
(cd tools && "$GO" mod download >/dev/null 2>&1) &
pids+=($!)
for peer in "${PEERS_DIR:-../../shared/peers}"/*/; do
	[ -f "$peer/go.mod" ] && (cd "$peer" && "$GO" mod download >/dev/null 2>&1) &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
exit 0
