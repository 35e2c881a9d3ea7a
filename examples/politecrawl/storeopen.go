package main

// Store opening for every command: the store flags of the commands that
// read a crawl's store (read-only but for withdraw), and the polite client
// over a configuration's stores for those that fetch.

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// storeFlags are the flags of the commands that read a crawl's store.
type storeFlags struct {
	config string
	store  string
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

func (s *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.config, "config", "", "the configuration file: its sources, and its store unless -store is given (default: "+defaultConfig+" when it exists here)")
	fs.StringVar(&s.store, "store", "", "the SQLite file (default: the config's)")
}

// open loads the config and opens its store's deposits.
func (s *storeFlags) open(ctx context.Context, cmd string) (*Config, *stores, crawl.Deposits, error) {
	s.config = configOrDefault(s.config)
	if s.config == "" {
		return nil, nil, nil, fmt.Errorf("%s: -config FILE is required (no %s here): its sources name what the store holds", cmd, defaultConfig)
	}
	cfg, err := LoadConfig(s.config)
	if err != nil {
		return nil, nil, nil, err
	}
	path := s.store
	if path == "" {
		path = cfg.StorePath()
	}
	if cmd == "withdraw" {
		if _, err := os.Stat(path); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: store %s: %w", cmd, path, err)
		}
	}
	// Every command but withdraw only reads: the store is opened read-only,
	// and its failures name the cause (no such directory, not a store, …).
	db, err := openStoresMode(ctx, cfg, path, cmd != "withdraw")
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
	opts = append(opts, fetch.WithStores(db.Fetch()))
	c, err := fetch.New(fp, append(opts, extra...)...)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return c, db, nil
}
