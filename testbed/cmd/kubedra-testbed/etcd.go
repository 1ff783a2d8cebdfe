package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs a single-member etcd for one test control plane until SIGTERM/SIGINT. It links the etcd
// server module that the chosen Kubernetes release itself depends on, so no etcd binary is needed.
// fsync is off: the data directory is thrown away with the test run.
func runEtcd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "data directory (required)")
	client := fs.String("listen-client", "http://127.0.0.1:2379", "client URL")
	peer := fs.String("listen-peer", "http://127.0.0.1:2380", "peer URL")
	logLevel := fs.String("log-level", "error", "etcd log level")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dataDir == "" {
		fmt.Fprintln(stderr, "kubedra-testbed etcd: --data-dir is required")
		return 2
	}
	clientURL, err := url.Parse(*client)
	if err != nil {
		fmt.Fprintf(stderr, "kubedra-testbed etcd: --listen-client: %v\n", err)
		return 2
	}
	peerURL, err := url.Parse(*peer)
	if err != nil {
		fmt.Fprintf(stderr, "kubedra-testbed etcd: --listen-peer: %v\n", err)
		return 2
	}

	cfg := embed.NewConfig()
	cfg.Name = "kubedra-testbed"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = *logLevel
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "kubedra-testbed etcd: %v\n", err)
		return 1
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(stdout, "etcd ready on %s\n", clientURL)
	case <-time.After(60 * time.Second):
		fmt.Fprintln(stderr, "kubedra-testbed etcd: not ready after 60s")
		return 1
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		fmt.Fprintf(stdout, "etcd stopping on %s\n", s)
		return 0
	case err := <-e.Err():
		fmt.Fprintf(stderr, "kubedra-testbed etcd: %v\n", err)
		return 1
	}
}
