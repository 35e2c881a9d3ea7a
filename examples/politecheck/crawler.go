package main

// Running the crawler under test and measuring its process.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// crawlerRun is what became of the crawler's process.
type crawlerRun struct {
	Command  []string
	ExitCode int  // -1 if it was killed by a signal
	TimedOut bool // -timeout ran out and politecheck stopped it
	Wall     time.Duration
	User     time.Duration
	System   time.Duration
	PeakRSS  int64 // bytes; 0 where the system does not say
}

// killGrace is how long a crawler asked to stop has before it is killed.
const killGrace = 10 * time.Second

func runCrawler(ctx context.Context, cfg *config, e *env, stderr io.Writer) (*crawlerRun, error) {
	args := make([]string, len(cfg.command))
	for i, a := range cfg.command {
		args[i] = e.expand(a)
	}
	tctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, args[0], args[1:]...)
	cmd.Cancel = func() error {
		// Ask first, as an operator would; WaitDelay kills it later.
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = killGrace
	cmd.Env = os.Environ()
	for _, v := range e.vars() {
		cmd.Env = append(cmd.Env, v[0]+"="+v[1])
	}
	if cfg.quiet {
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	} else {
		cmd.Stdout, cmd.Stderr = stderr, stderr
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the crawler: %w", err)
	}
	err := cmd.Wait()
	r := &crawlerRun{Command: args, Wall: time.Since(start), TimedOut: tctx.Err() != nil && ctx.Err() == nil}
	st := cmd.ProcessState
	if st == nil {
		return nil, fmt.Errorf("the crawler: %w", err)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("waiting for the crawler: %w", err)
	}
	r.ExitCode = st.ExitCode()
	r.User, r.System = st.UserTime(), st.SystemTime()
	r.PeakRSS = peakRSS(st)
	return r, nil
}
