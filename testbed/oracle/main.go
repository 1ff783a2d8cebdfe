// Command kubedra-oracle runs the upstream DRA structured allocator
// (k8s.io/dynamic-resource-allocation/structured) on one scenario and prints the result as JSON.
// It is the reference that kubedra's own allocator is compared against.
//
//	kubedra-oracle < scenario.json            one scenario in, one result out
//	kubedra-oracle --batch < scenarios.json   a JSON array (or JSON lines) in, a JSON array out
//
// Exit status: 0 when results were printed, 2 on malformed input (one line on stderr).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kubedra-oracle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	batch := fs.Bool("batch", false, "read a JSON array or JSON lines of scenarios, print a JSON array of results")
	timeout := fs.Duration("timeout", 0, "give up on one scenario after this long (0: no limit); reported as its error")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "scenarios allocated in parallel in --batch mode")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kubedra-oracle: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	data, err := io.ReadAll(bufio.NewReader(stdin))
	if err != nil {
		fmt.Fprintf(stderr, "kubedra-oracle: reading stdin: %v\n", err)
		return 2
	}

	var scenarios []*scenario
	if *batch {
		scenarios, err = decodeBatch(data)
	} else {
		var s *scenario
		s, err = decodeScenario(data)
		scenarios = []*scenario{s}
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubedra-oracle: malformed input: %v\n", oneLine(err))
		return 2
	}

	results := make([]*result, len(scenarios))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < max(1, *workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = allocateWithTimeout(scenarios[i], *timeout)
			}
		}()
	}
	for i := range scenarios {
		next <- i
	}
	close(next)
	wg.Wait()

	var out any = results[0]
	if *batch {
		out = results
	}
	if err := writeJSON(stdout, out); err != nil {
		fmt.Fprintf(stderr, "kubedra-oracle: writing output: %v\n", err)
		return 2
	}
	return 0
}

func allocateWithTimeout(s *scenario, timeout time.Duration) *result {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return allocate(ctx, s)
}

func oneLine(err error) string {
	msg := err.Error()
	for i, r := range msg {
		if r == '\n' {
			return msg[:i]
		}
	}
	return msg
}

var errEmpty = errors.New("no scenario on stdin")
