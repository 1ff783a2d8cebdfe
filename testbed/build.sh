#!/usr/bin/env bash
# Build one group of testbed binaries into the cache bin dir, unless the binaries there were built from
# exactly the same inputs. Freshness is a content hash (not mtimes): a fresh clone has new mtimes on every
# file but must still reuse the cache.
#   build.sh k8s|local|tools|peers
# Environment (set by the Makefile): BIN, MODFILE, K8S_PATCH, GO, ORACLE_TAGS (Go build tags of the local group,
# may be empty), ORACLE_MODFILE (the local group's module file, MODFILE when unset), GOTOOLCHAIN (only for a release whose module file needs a newer Go than the local one).
set -euo pipefail

# Everything is inside main, so bash has parsed the whole file before it runs: editing this script
# while a long build runs cannot break that build.
main() {
	group=$1
	: "${BIN:?}" "${MODFILE:?}" "${K8S_PATCH:?}" "${GO:=go}"
	sumfile=${MODFILE%.mod}.sum
	cd "$(dirname "$0")"
	mkdir -p "$BIN"

	# Version stamped into the Kubernetes binaries exactly as the release build does (major, minor, gitVersion).
	minor=${K8S_PATCH#v1.}
	minor=${minor%%.*}
	vpkg=k8s.io/component-base/version
	k8s_ldflags="-s -w -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitVersion=$K8S_PATCH -X $vpkg.gitTreeState=clean"

	case $group in
	k8s)
		outputs=(kube-apiserver kube-controller-manager kube-scheduler)
		inputs=("$MODFILE" "$sumfile")
		pkgs=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
		flags=(-trimpath "-ldflags=$k8s_ldflags" -modfile="$MODFILE")
		dir=.
		;;
	local)
		outputs=(kubedra-testbed kubedra-oracle)
		mapfile -t gofiles < <(find cmd oracle -name '*.go' ! -name '*_test.go' | LC_ALL=C sort)
		localmod=${ORACLE_MODFILE:-$MODFILE}
		inputs=("$localmod" "${localmod%.mod}.sum" "${gofiles[@]}")
		pkgs=(./cmd/kubedra-testbed ./oracle)
		flags=(-trimpath -ldflags=-s\ -w -modfile="$localmod")
		if [ -n "${ORACLE_TAGS:-}" ]; then flags+=("-tags=$ORACLE_TAGS"); fi
		dir=.
		;;
	tools)
		outputs=(helm)
		inputs=(tools/go.mod tools/go.sum)
		pkgs=(helm.sh/helm/v3/cmd/helm)
		# As helm's own release build: its version, and the Kubernetes version its client-go speaks, which is
		# what `helm template` reports as .Capabilities.KubeVersion by default.
		helm_version=$(sed -n 's#^[[:space:]]*helm.sh/helm/v3 \(v[0-9.]*\).*#\1#p' tools/go.mod)
		cg_minor=$(sed -n 's#^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*#\1#p' tools/go.mod)
		h=helm.sh/helm/v3
		helm_ldflags="-s -w -X $h/internal/version.version=$helm_version -X $h/internal/version.gitTreeState=clean"
		for p in pkg/lint/rules pkg/chartutil; do
			helm_ldflags+=" -X $h/$p.k8sVersionMajor=1 -X $h/$p.k8sVersionMinor=$cg_minor"
		done
		flags=(-trimpath "-ldflags=$helm_ldflags")
		dir=tools
		;;
	peers)
		# Peers measured side by side with kubedra (pluto), built from their source in ../shared/peers
		# (the developers' shared folder; CI has it too). A lone clone has none: nothing to build.
		peer=${PEERS_DIR:-../../shared/peers}/pluto
		if [ ! -f "$peer/go.mod" ]; then
			echo "testbed: no $peer (a clone without ../shared): pluto not built, its comparisons skip"
			exit 0
		fi
		outputs=(pluto)
		mapfile -t gofiles < <(find "$peer" -name '*.go' ! -name '*_test.go' | LC_ALL=C sort)
		inputs=("$peer/go.mod" "$peer/go.sum" "${gofiles[@]}")
		pkgs=(./cmd/pluto)
		flags=(-trimpath -ldflags=-s\ -w)
		dir=$peer
		;;
	*)
		echo "build.sh: unknown group $group" >&2
		exit 2
		;;
	esac

	key=$({ "$GO" version; printf '%s\n' "$group" "$K8S_PATCH" "${flags[@]}"; cat "${inputs[@]}"; } | sha256sum | cut -d' ' -f1)
	stamp=$BIN/.$group.key
	fresh=1
	for o in "${outputs[@]}"; do [ -x "$BIN/$o" ] || fresh=0; done
	if [ $fresh = 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
		echo "testbed: $group binaries up to date in $BIN"
		exit 0
	fi

	echo "testbed: building ${outputs[*]} into $BIN"
	start=$(date +%s)
	rm -f "$stamp"
	tmp=$(mktemp -d "$BIN/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# -o into a temp dir, then rename: an interrupted build never leaves a half-written binary behind.
	(cd "$dir" && "$GO" build "${flags[@]}" -o "$tmp/" "${pkgs[@]}")
	if [ -f "$tmp/oracle" ]; then mv "$tmp/oracle" "$tmp/kubedra-oracle"; fi
	for o in "${outputs[@]}"; do mv -f "$tmp/$o" "$BIN/$o"; done
	echo "$key" >"$stamp"
	echo "testbed: built ${outputs[*]} in $(($(date +%s) - start))s"
}

main "$@"
exit
