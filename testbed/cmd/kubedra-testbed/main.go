// Command kubedra-testbed holds the small pieces the Python control-plane helper needs besides the
// Kubernetes binaries, so that a test machine needs nothing but Go:
//
//	kubedra-testbed certs DIR          CA, apiserver serving cert, admin client cert, service-account keys
//	kubedra-testbed etcd  [flags]      a single-member etcd (go.etcd.io/etcd/server/v3/embed) until SIGTERM
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: kubedra-testbed certs DIR | etcd --data-dir DIR --listen-client URL --listen-peer URL")
		return 2
	}
	switch args[0] {
	case "certs":
		if len(args) != 2 {
			fmt.Fprintln(stderr, "usage: kubedra-testbed certs DIR")
			return 2
		}
		if err := writeCerts(args[1]); err != nil {
			fmt.Fprintf(stderr, "kubedra-testbed certs: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, args[1])
		return 0
	case "etcd":
		return runEtcd(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "kubedra-testbed: unknown subcommand %q\n", args[0])
		return 2
	}
}
