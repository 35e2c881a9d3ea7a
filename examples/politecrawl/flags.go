package main

// The flags every command shares and how they are read: flags may follow
// positional arguments (explain URL -kind feed), and -h, -help or --help
// anywhere before "--" prints the command's usage on stdout and exits 0.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// parseFlags parses args into fs with flags and positional arguments in
// any order: the flags (with their values) are moved before the first
// positional, and everything after "--" stays positional.
func parseFlags(fs *flag.FlagSet, args []string) error {
	return fs.Parse(interspersed(fs, args))
}

func interspersed(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // unknown: Parse says so
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(append(flags, "--"), pos...)
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// logFlags are the logging flags every long-running command shares.
type logFlags struct {
	format string
	level  string
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.format, "log-format", "text", `log lines as "text" or "json" (slog)`)
	fs.StringVar(&l.level, "log-level", "info", `"debug", "info", "warn" or "error"`)
}

func (l *logFlags) check() error {
	if l.format != "text" && l.format != "json" {
		return fmt.Errorf("-log-format must be text or json, not %q", l.format)
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(l.level)); err != nil {
		return fmt.Errorf("-log-level must be debug, info, warn or error, not %q", l.level)
	}
	return nil
}

// handler returns the slog handler writing to w.
func (l *logFlags) handler(w io.Writer) slog.Handler {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(l.level))
	o := &slog.HandlerOptions{Level: lv}
	if l.format == "json" {
		return slog.NewJSONHandler(w, o)
	}
	return slog.NewTextHandler(w, o)
}

// quiet passes on warnings and errors only.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}
func (q quiet) WithAttrs(as []slog.Attr) slog.Handler { return quiet{q.Handler.WithAttrs(as)} }
func (q quiet) WithGroup(n string) slog.Handler       { return quiet{q.Handler.WithGroup(n)} }
