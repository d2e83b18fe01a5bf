package main

import (
	"context"
	"fmt"
	"io"
)

func cmdRun(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "agentmap run: not available in this build")
	return exitFailure
}

func cmdScan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdRun(ctx, append([]string{"--once"}, args...), stdout, stderr)
}
