package main

// Store opening for every command: the store flags of the commands that
// read a crawl's store (read-only but for withdraw), and the polite client
// over a configuration's stores for those that fetch.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// storeFlags are the flags of the commands that read a crawl's store.
type storeFlags struct {
	config string
	stores storeList
}

// defaultConfig is the configuration the commands that read a crawl's
// store use when -config is not given and it exists here.
const defaultConfig = "sources.yaml"

// configOrDefault returns path, or defaultConfig when path is "" and that
// file exists, or "".
func configOrDefault(path string) string {
	if path != "" {
		return path
	}
	if _, err := os.Stat(defaultConfig); err == nil {
		return defaultConfig
	}
	return ""
}

// register adds -config and -store to fs; several says that -store may
// name several workers' stores, read as one.
func (s *storeFlags) register(fs *flag.FlagSet, several bool) {
	fs.StringVar(&s.config, "config", "", "the configuration file: its sources, and its store unless -store is given (default: "+defaultConfig+" when it exists here)")
	usage := "the SQLite file (default: the config's)"
	if several {
		usage += "; several workers' stores, read as one (each deposit once), by repeating -store or by a quoted glob ('workers/*.db')"
	}
	fs.Var(&s.stores, "store", usage)
}

// argsError is the error for positional arguments a store command does not
// take; stores named after one -store are what an unquoted glob becomes.
func argsError(cmd string, args []string) error {
	msg := fmt.Sprintf("%s: unexpected arguments %q", cmd, args)
	if strings.HasSuffix(args[0], ".db") {
		msg += ": to read several stores, repeat -store or quote the glob (-store 'workers/*.db')"
	}
	return errors.New(msg)
}

// config loads the configuration, -config or the default.
func (s *storeFlags) loadConfig(cmd string) (*Config, error) {
	s.config = configOrDefault(s.config)
	if s.config == "" {
		return nil, fmt.Errorf("%s: -config FILE is required (no %s here): its sources name what the store holds", cmd, defaultConfig)
	}
	return LoadConfig(s.config)
}

// paths are the store files named: -store's, or the config's own.
func (s *storeFlags) paths(cfg *Config) ([]string, error) {
	if len(s.stores) == 0 {
		return []string{cfg.StorePath()}, nil
	}
	return s.stores.expand()
}

// openSet loads the config and opens the stores named read-only, as one.
func (s *storeFlags) openSet(ctx context.Context, cmd string) (*Config, *storeSet, error) {
	cfg, err := s.loadConfig(cmd)
	if err != nil {
		return nil, nil, err
	}
	paths, err := s.paths(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	set, err := openStoreSet(ctx, cfg, paths)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return cfg, set, nil
}

// open loads the config and opens its one store (withdraw's), read-write.
func (s *storeFlags) open(ctx context.Context, cmd string) (*Config, *stores, crawl.Deposits, error) {
	cfg, err := s.loadConfig(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	paths, err := s.paths(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if len(paths) != 1 {
		return nil, nil, nil, fmt.Errorf("%s: one store at a time, not %d (%s): run it once per file", cmd, len(paths), strings.Join(paths, ", "))
	}
	path := paths[0]
	if _, err := os.Stat(path); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: store %s: %w", cmd, path, err)
	}
	db, err := openStoresMode(ctx, cfg, path, false)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return cfg, db, db.Crawl().Deposits, nil
}

// openClient opens the stores (the SQLite file at path, and the config's
// state backend if it names one) and builds the fetch client every command shares:
// the config's policy, the stores' fetch side (ledger, robots.txt records,
// validators and pacing), and the test flags' network options.
func openClient(ctx context.Context, cfg *Config, path string, nf *netFlags, extra ...fetch.Option) (*fetch.Client, *stores, error) {
	fp, err := cfg.FetchPolicy()
	if err != nil {
		return nil, nil, err
	}
	opts, err := nf.fetchOptions()
	if err != nil {
		return nil, nil, err
	}
	db, err := openStores(ctx, cfg, path)
	if err != nil {
		return nil, nil, err
	}
	if err := db.holdSchedule(ctx, cfg); err != nil {
		db.Close()
		return nil, nil, err
	}
	opts = append(opts, fetch.WithStores(db.Fetch()))
	c, err := fetch.New(fp, append(opts, extra...)...)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return c, db, nil
}
